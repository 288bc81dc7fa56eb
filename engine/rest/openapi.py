"""``/openapi.json``: the REST API as implemented, for clients, generators and conformance tests.

Every route the app serves is described here; ``tests/rest/test_openapi.py`` fails if a route is
added without a description (or described without a route), so the document cannot drift.
"""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

from aiohttp import web

from engine.rest.server_info import CONNECT_VERSION

_STRING_MAP = {"type": "object", "additionalProperties": {"type": "string"}}
_REF = "#/components/schemas/"


def _ref(name: str) -> dict[str, str]:
    return {"$ref": _REF + name}


def _array(item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": item}


_STATE = {"type": "string", "enum": ["UNASSIGNED", "RUNNING", "PAUSED", "STOPPED", "FAILED", "RESTARTING"]}
SCHEMAS: dict[str, dict[str, Any]] = {
    "ErrorMessage": {
        "type": "object",
        "required": ["error_code", "message"],
        "properties": {"error_code": {"type": "integer"}, "message": {"type": "string"}},
    },
    "ServerInfo": {
        "type": "object",
        "required": ["version", "commit", "kafka_cluster_id", "engine_version"],
        "properties": {
            "version": {
                "type": "string",
                "description": "The Kafka Connect release whose REST API this worker implements",
            },
            "commit": {"type": "string", "description": "This build's commit (16 hex digits) or unknown"},
            "kafka_cluster_id": {"type": "string"},
            "engine_version": {"type": "string", "description": "connect-engine's version"},
        },
    },
    "WorkerStatus": {
        "type": "object",
        "required": ["status", "message"],
        "properties": {
            "status": {"type": "string", "enum": ["healthy", "starting", "unhealthy"]},
            "message": {"type": "string"},
        },
    },
    "ConnectorConfig": _STRING_MAP,
    "ConnectorConfigPatch": {"type": "object", "additionalProperties": {"type": ["string", "null"]}},
    "ConnectorTaskId": {
        "type": "object",
        "required": ["connector", "task"],
        "properties": {"connector": {"type": "string"}, "task": {"type": "integer"}},
    },
    "ConnectorInfo": {
        "type": "object",
        "required": ["name", "config", "tasks", "type"],
        "properties": {
            "name": {"type": "string"},
            "config": _ref("ConnectorConfig"),
            "tasks": _array(_ref("ConnectorTaskId")),
            "type": {"type": "string", "enum": ["source", "sink", "unknown"]},
            "offsets_status": {"type": "string"},
        },
    },  # KIP-995, on create only
    "ConnectorState": {
        "type": "object",
        "required": ["state", "worker_id"],
        "properties": {
            "state": _STATE,
            "worker_id": {"type": "string"},
            "trace": {"type": "string"},
            "version": {"type": "string"},  # KAFKA-18988 (4.1)
        },
    },
    "TaskState": {
        "type": "object",
        "required": ["id", "state", "worker_id"],
        "properties": {
            "id": {"type": "integer"},
            "state": _STATE,
            "worker_id": {"type": "string"},
            "trace": {"type": "string"},
            "version": {"type": "string"},  # KAFKA-18988 (4.1)
        },
    },
    "ConnectorStateInfo": {
        "type": "object",
        "required": ["name", "connector", "tasks", "type"],
        "properties": {
            "name": {"type": "string"},
            "connector": _ref("ConnectorState"),
            "tasks": _array(_ref("TaskState")),
            "type": {"type": "string", "enum": ["source", "sink", "unknown"]},
        },
    },
    "ConnectorExpanded": {
        "type": "object",
        "properties": {"status": _ref("ConnectorStateInfo"), "info": _ref("ConnectorInfo")},
    },
    "TaskInfo": {
        "type": "object",
        "required": ["id", "config"],
        "properties": {"id": _ref("ConnectorTaskId"), "config": _STRING_MAP},
    },
    "CreateConnectorRequest": {
        "type": "object",
        "required": ["name", "config"],
        "additionalProperties": False,
        "properties": {
            "name": {"type": "string"},
            "config": _ref("ConnectorConfig"),
            "initial_state": {"type": "string", "enum": ["RUNNING", "PAUSED", "STOPPED"]},
            "initial_offsets": _array(_ref("ConnectorOffset")),
        },
    },  # KIP-995
    "ConnectorOffset": {
        "type": "object",
        "required": ["partition", "offset"],
        "properties": {"partition": {"type": "object"}, "offset": {"type": ["object", "null"]}},
    },
    "ConnectorOffsets": {
        "type": "object",
        "required": ["offsets"],
        "properties": {"offsets": _array(_ref("ConnectorOffset"))},
    },
    "Message": {"type": "object", "required": ["message"], "properties": {"message": {"type": "string"}}},
    "ActiveTopics": {
        "type": "object",
        "additionalProperties": {
            "type": "object",
            "required": ["topics"],
            "properties": {"topics": _array({"type": "string"})},
        },
    },
    "PluginReload": {
        "type": "object",
        "required": ["added", "removed", "upgraded", "restart_required"],
        "properties": {
            "added": _array(_ref("PluginInfo")),
            "removed": _array(_ref("PluginInfo")),
            "upgraded": _array({"type": "object"}),
            "restart_required": _array({"type": "object"}),
        },
    },
    "PluginInfo": {
        "type": "object",
        "required": ["class", "type"],
        "properties": {
            "class": {"type": "string"},
            "type": {"type": "string"},
            "version": {"type": "string"},
        },
    },
    "ConfigKeyInfo": {
        "type": "object",
        "required": ["name", "type", "required", "importance", "documentation"],
        "properties": {
            "name": {"type": "string"},
            "type": {"type": "string"},
            "required": {"type": "boolean"},
            "default_value": {"type": ["string", "null"]},
            "importance": {"type": "string"},
            "documentation": {"type": ["string", "null"]},
            "group": {"type": ["string", "null"]},
            "order_in_group": {"type": "integer"},
            "width": {"type": "string"},
            "display_name": {"type": ["string", "null"]},
            "dependents": _array({"type": "string"}),
        },
    },
    "ConfigValueInfo": {
        "type": "object",
        "required": ["name", "errors", "visible"],
        "properties": {
            "name": {"type": "string"},
            "value": {"type": ["string", "null"]},
            "recommended_values": _array({"type": "string"}),
            "errors": _array({"type": "string"}),
            "visible": {"type": "boolean"},
        },
    },
    "ConfigInfos": {
        "type": "object",
        "required": ["name", "error_count", "groups", "configs"],
        "properties": {
            "name": {"type": "string"},
            "error_count": {"type": "integer"},
            "groups": _array({"type": "string"}),
            "configs": _array(
                {
                    "type": "object",
                    "properties": {
                        "definition": {"oneOf": [_ref("ConfigKeyInfo"), {"type": "null"}]},
                        "value": {"oneOf": [_ref("ConfigValueInfo"), {"type": "null"}]},
                    },
                }
            ),
        },
    },
    "LoggerLevel": {
        "type": "object",
        "required": ["level", "last_modified"],
        "properties": {"level": {"type": "string"}, "last_modified": {"type": ["integer", "null"]}},
    },
    "LoggerLevelRequest": {"type": "object", "properties": {"level": {"type": "string"}}},
    "ConnectorCleanup": {
        "type": "object",
        "required": ["connector", "incarnation", "state", "attempts", "last_error", "next_attempt"],
        "properties": {
            "connector": {"type": "string"},
            "incarnation": {"type": ["string", "null"]},
            "state": {"type": "string", "enum": ["RUNNING", "LINGERING", "WAITING", "GAVE_UP", "PENDING"]},
            "attempts": {"type": "integer"},
            "last_error": {"type": ["string", "null"]},
            "next_attempt": {"type": ["integer", "null"]},
            "worker_id": {"type": ["string", "null"]},
        },
    },
}


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _empty(description: str) -> dict[str, Any]:
    return {"description": description}


_ERROR = _ref("ErrorMessage")


def _errors(*codes: int) -> dict[str, Any]:
    """Every operation may answer 500 (a plugin timed out, malformed JSON) besides its own errors."""
    return {str(code): _json(_ERROR, _ERROR_TEXT[code]) for code in (*codes, 500)}


_ERROR_TEXT = {
    400: "Bad request (invalid config, malformed parameters)",
    401: "Credentials missing or wrong",
    403: "Forbidden",
    404: "Not found",
    409: "Conflict (already exists)",
    415: "The body's Content-Type is not JSON",
    500: "Request timed out waiting on a plugin, malformed JSON or JSON of the wrong shape (an object "
    "where a string belongs, an unknown field), an unknown connector class, or an internal error",
}

_CONNECTOR = {"name": "connector", "in": "path", "required": True, "schema": {"type": "string"}}
_TASK = {"name": "task", "in": "path", "required": True, "schema": {"type": "integer", "minimum": 0}}
_PLUGIN = {"name": "plugin", "in": "path", "required": True, "schema": {"type": "string"}}
_LOGGER = {"name": "logger", "in": "path", "required": True, "schema": {"type": "string"}}


def _flag(name: str) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": False, "schema": {"type": "boolean", "default": False}}


def _body(schema: dict[str, Any]) -> dict[str, Any]:
    return {"required": True, "content": {"application/json": {"schema": schema}}}


# (method, path) -> operation
OPERATIONS: dict[tuple[str, str], dict[str, Any]] = {
    ("GET", "/"): {
        "summary": "The Kafka Connect version implemented, the build's commit, connect-engine's version",
        "responses": {"200": _json(_ref("ServerInfo"), "Server info")},
    },
    ("GET", "/health"): {
        "summary": "Worker health",
        "responses": {
            "200": _json(_ref("WorkerStatus"), "Healthy"),
            "500": _json(_ref("WorkerStatus"), "Unhealthy"),
        },
    },
    ("GET", "/openapi.json"): {
        "summary": "This document",
        "responses": {"200": _json({"type": "object"}, "OpenAPI")},
    },
    ("GET", "/connectors"): {
        "summary": "List connectors",
        "parameters": [
            {
                "name": "expand",
                "in": "query",
                "required": False,
                "style": "form",
                "explode": True,
                "schema": _array({"type": "string"}),
            }
        ],
        "responses": {
            "200": _json(
                {
                    "oneOf": [
                        _array({"type": "string"}),
                        {"type": "object", "additionalProperties": _ref("ConnectorExpanded")},
                    ]
                },
                "Names, or name -> {status, info} with expand",
            ),
            **_errors(),
        },
    },
    ("POST", "/connectors"): {
        "summary": "Create a connector",
        "requestBody": _body(_ref("CreateConnectorRequest")),
        "responses": {"201": _json(_ref("ConnectorInfo"), "Created"), **_errors(400, 409)},
    },
    ("GET", "/connectors/{connector}"): {
        "summary": "Connector info",
        "responses": {"200": _json(_ref("ConnectorInfo"), "Info"), **_errors(404)},
    },
    ("DELETE", "/connectors/{connector}"): {
        "summary": "Delete a connector: 204 once deleted() ran; 500 when it failed or timed out (retried)",
        "responses": {"204": _empty("Deleted"), **_errors(404)},
    },
    ("GET", "/connectors/{connector}/config"): {
        "summary": "Connector config",
        "responses": {"200": _json(_ref("ConnectorConfig"), "Config"), **_errors(404)},
    },
    ("PUT", "/connectors/{connector}/config"): {
        "summary": "Create or replace a connector's config",
        "requestBody": _body(_ref("ConnectorConfig")),
        "responses": {
            "200": _json(_ref("ConnectorInfo"), "Updated"),
            "201": _json(_ref("ConnectorInfo"), "Created"),
            **_errors(400),
        },
    },
    ("PATCH", "/connectors/{connector}/config"): {
        "summary": "Patch a connector's config (null removes a key)",
        "requestBody": _body(_ref("ConnectorConfigPatch")),
        "responses": {"200": _json(_ref("ConnectorInfo"), "Patched"), **_errors(400, 404)},
    },
    ("GET", "/connectors/{connector}/status"): {
        "summary": "Connector and task states",
        "responses": {"200": _json(_ref("ConnectorStateInfo"), "Status"), **_errors(404)},
    },
    ("GET", "/connectors/{connector}/tasks"): {
        "summary": "Task configs",
        "responses": {"200": _json(_array(_ref("TaskInfo")), "Tasks"), **_errors(404)},
    },
    ("GET", "/connectors/{connector}/tasks/{task}/status"): {
        "summary": "One task's state",
        "responses": {"200": _json(_ref("TaskState"), "Status"), **_errors(404)},
    },
    ("POST", "/connectors/{connector}/tasks/{task}/restart"): {
        "summary": "Restart one task",
        "responses": {"204": _empty("Restarted"), **_errors(404)},
    },
    ("POST", "/connectors/{connector}/restart"): {
        "summary": "Restart the connector (KIP-745 plan with includeTasks/onlyFailed)",
        "parameters": [_flag("includeTasks"), _flag("onlyFailed")],
        "responses": {
            "202": _json(_ref("ConnectorStateInfo"), "Plan"),
            "204": _empty("Connector restarted"),
            **_errors(404),
        },
    },
    ("PUT", "/connectors/{connector}/pause"): {
        "summary": "Pause",
        "responses": {"202": _empty("Accepted"), **_errors(404)},
    },
    ("PUT", "/connectors/{connector}/resume"): {
        "summary": "Resume",
        "responses": {"202": _empty("Accepted"), **_errors(404)},
    },
    ("PUT", "/connectors/{connector}/stop"): {
        "summary": "Stop (no tasks)",
        "responses": {"204": _empty("Stopped"), **_errors(404)},
    },
    ("GET", "/connectors/{connector}/topics"): {
        "summary": "Active topics",
        "responses": {"200": _json(_ref("ActiveTopics"), "Topics"), **_errors(403)},
    },
    ("PUT", "/connectors/{connector}/topics/reset"): {
        "summary": "Reset active topics",
        "responses": {"202": _empty("Accepted"), **_errors(403)},
    },
    ("GET", "/connectors/{connector}/offsets"): {
        "summary": "Offsets (KIP-875)",
        "responses": {"200": _json(_ref("ConnectorOffsets"), "Offsets"), **_errors(404)},
    },
    ("PATCH", "/connectors/{connector}/offsets"): {
        "summary": "Alter offsets of a STOPPED connector",
        "requestBody": _body(_ref("ConnectorOffsets")),
        "responses": {"200": _json(_ref("Message"), "Altered"), **_errors(400, 404)},
    },
    ("DELETE", "/connectors/{connector}/offsets"): {
        "summary": "Reset offsets of a STOPPED connector",
        "responses": {"200": _json(_ref("Message"), "Reset"), **_errors(400, 404)},
    },
    ("POST", "/connectors/{connector}/tasks"): {
        "summary": "Internal (distributed mode): a follower's task configs for the leader, signed (KIP-507); "
        "500 on a standalone worker",
        "requestBody": _body(_array(_STRING_MAP)),
        "responses": {"204": _empty("Accepted"), **_errors(400, 403, 404)},
    },
    ("PUT", "/connectors/{connector}/fence"): {
        "summary": "Internal (distributed mode): a round of zombie fencing by the leader, signed (KIP-507); "
        "500 on a standalone worker",
        "responses": {"204": _empty("Fenced"), **_errors(400, 403, 404, 409)},
    },
    ("GET", "/connector-cleanups"): {
        "summary": "Deleted connectors whose cleanup (deleted()) has not succeeded yet, and given-up ones",
        "responses": {"200": _json(_array(_ref("ConnectorCleanup")), "Cleanups")},
    },
    ("GET", "/connector-plugins"): {
        "summary": "Installed plugins",
        "parameters": [
            {
                "name": "connectorsOnly",
                "in": "query",
                "required": False,
                "schema": {"type": "boolean", "default": True},
            }
        ],
        "responses": {"200": _json(_array(_ref("PluginInfo")), "Plugins"), **_errors()},
    },
    ("GET", "/connector-plugins/{plugin}/config"): {
        "summary": "A plugin's config definition",
        "responses": {"200": _json(_array(_ref("ConfigKeyInfo")), "Keys"), **_errors(400, 404)},
    },
    ("POST", "/connector-plugins/reload"): {
        "summary": "Ours: see plugins installed since this worker started (this worker only)",
        "responses": {"200": _json(_ref("PluginReload"), "What changed"), **_errors()},
    },
    ("PUT", "/connector-plugins/{plugin}/config/validate"): {
        "summary": "Validate a connector config",
        "requestBody": _body(_ref("ConnectorConfig")),
        "responses": {"200": _json(_ref("ConfigInfos"), "Validation result"), **_errors(400)},
    },
    ("GET", "/admin/loggers"): {
        "summary": "Loggers with explicit levels",
        "responses": {
            "200": _json({"type": "object", "additionalProperties": _ref("LoggerLevel")}, "Levels")
        },
    },
    ("GET", "/admin/loggers/{logger}"): {
        "summary": "One logger's level",
        "responses": {"200": _json(_ref("LoggerLevel"), "Level"), **_errors(404)},
    },
    ("PUT", "/admin/loggers/{logger}"): {
        "summary": "Set a namespace's level",
        "requestBody": _body(_ref("LoggerLevelRequest")),
        "parameters": [
            {
                "name": "scope",
                "in": "query",
                "required": False,
                "schema": {"type": "string", "enum": ["worker", "cluster"]},
            }
        ],
        "responses": {
            "200": _json(_array({"type": "string"}), "Affected loggers"),
            "204": _empty("Applied cluster-wide"),
            **_errors(400, 404),
        },
    },
}

_PATH_PARAMETERS = {"{connector}": _CONNECTOR, "{task}": _TASK, "{plugin}": _PLUGIN, "{logger}": _LOGGER}


_INTERNAL = {("POST", "/connectors/{connector}/tasks"), ("PUT", "/connectors/{connector}/fence")}


def document() -> dict[str, Any]:
    """The OpenAPI 3.1 document (a module adding routes adds their operations to ``OPERATIONS``).

    Every operation with a JSON body but the internal ones may answer 415 (``engine.rest.routing``).
    """
    paths: dict[str, dict[str, Any]] = {}
    for (method, path), operation in OPERATIONS.items():
        params = [p for token, p in _PATH_PARAMETERS.items() if token in path]
        entry = {**operation, "parameters": [*params, *operation.get("parameters", [])]}
        if "requestBody" in operation and (method, path) not in _INTERNAL:
            entry["responses"] = {**operation["responses"], "415": _json(_ERROR, _ERROR_TEXT[415])}
        paths.setdefault(path, {})[method.lower()] = entry
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "connect-engine REST API (Kafka Connect compatible)",
            "version": version("connect-engine"),
            "description": f"The Kafka Connect {CONNECT_VERSION} REST API, plus connect-engine's own "
            "/connector-cleanups, /metrics and this document.",
        },
        "paths": paths,
        "components": {"schemas": SCHEMAS},
    }


async def serve(request: web.Request) -> web.Response:
    return web.json_response(document())
