"""The /connector-plugins resources over real HTTP: listing, config definitions and validation."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from engine import Engine
from engine.plugins import discovery as plugin_discovery
from engine.plugins.discovery import PluginDesc, PluginRegistry, PluginType
from engine.rest.app import make_app
from engine.testing import FAULTS, RecordingSinkConnector, RecordingSourceConnector
from tests.rest.conftest import FAST, SINK, SOURCE

Client = TestClient[web.Request, web.Application]

RECORDING_SOURCE = "engine.testing.recording.RecordingSourceConnector"
RECORDING_SINK = "engine.testing.recording.RecordingSinkConnector"

ACME = """
from engine.api.config_def import ConfigDef, ConfigType, Importance, Range
from engine.api.connector import Config, SinkConnector
from engine.testing import RecordingSinkTask


class _Plain(SinkConnector):
    def start(self, props): ...
    def stop(self): ...
    def task_class(self):
        return RecordingSinkTask
    def task_configs(self, max_tasks):
        return []


class KeyedSinkConnector(_Plain):
    def version(self):
        return "2.5"

    async def config(self):
        return (ConfigDef()
                .define("endpoint", ConfigType.STRING, importance=Importance.HIGH, documentation="Where to write.",
                        group="Acme", order_in_group=1)
                .define("tasks.max", ConfigType.INT, 2, Range.between(1, 4), Importance.HIGH, "At most four.",
                        group="Acme", order_in_group=2))

    async def validate(self, props):
        config = Config((await self.config()).validate(props))
        for value in config.config_values:
            if value.name == "endpoint" and str(value.value or "").startswith("ftp:"):
                value.add_error_message("ftp is not supported")
        return config


class NullConfigSinkConnector(_Plain):
    def config(self):
        return None
"""

FRAMEWORK_KEYS = [
    "name",
    "connector.class",
    "connector.plugin.version",
    "tasks.max",
    "tasks.max.enforce",
    "key.converter",
    "key.converter.plugin.version",
    "value.converter",
    "value.converter.plugin.version",
    "header.converter",
    "header.converter.plugin.version",
    "transforms",
    "predicates",
    "config.action.reload",
    "offsets.reset.on.delete",
    "errors.retry.timeout",
    "errors.retry.delay.max.ms",
    "errors.tolerance",
    "errors.log.enable",
    "errors.log.include.messages",
]
SOURCE_ONLY_KEYS = [
    "topic.creation.groups",
    "exactly.once.support",
    "transaction.boundary",
    "transaction.boundary.interval.ms",
    "offsets.storage.topic",
]
# our addition, last in both kinds: the auto-restart policy (engine/herder/restart_policy.py)
RESTART_POLICY_KEYS = [
    "restart.policy",
    "restart.backoff.initial.ms",
    "restart.backoff.max.ms",
    "restart.backoff.multiplier",
    "restart.max.attempts",
    "restart.reset.after.ms",
]
DLQ_KEYS = [
    "errors.deadletterqueue.topic.name",
    "errors.deadletterqueue.topic.replication.factor",
    "errors.deadletterqueue.context.headers.enable",
]
# a source's dead letter queue is our addition: its keys come after Connect's source keys
RATE_KEYS = ["record.rate.limit", "bytes.per.second.max"]  # ours, last
FRAMEWORK_SOURCE_KEYS = [*FRAMEWORK_KEYS, *SOURCE_ONLY_KEYS, *DLQ_KEYS, *RESTART_POLICY_KEYS, *RATE_KEYS]
FRAMEWORK_SINK_KEYS = [
    *FRAMEWORK_KEYS,
    "topics",
    "topics.regex",
    *DLQ_KEYS,
    *RESTART_POLICY_KEYS,
    *RATE_KEYS,
    "offsets.identity.mismatch",
]


@pytest.fixture
async def acme(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Client]:
    """An engine whose plugin.path holds the ``acme_rest`` plugin package, behind the REST app."""
    (tmp_path / "acme_rest").mkdir()
    (tmp_path / "acme_rest" / "__init__.py").write_text(textwrap.dedent(ACME), encoding="utf-8")
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(plugin_discovery, "_PATH_PLUGINS", {})
    try:
        async with Engine({**FAST, "plugin.path": str(tmp_path)}) as engine:
            server = TestServer(make_app(engine, rest_timeout=2.0), host="127.0.0.1")
            async with TestClient(server) as http:
                yield http
    finally:
        sys.modules.pop("acme_rest", None)


async def ok(response: Any) -> Any:
    assert response.status == 200, await response.text()
    return await response.json()


async def error(response: Any, status: int) -> str:
    assert response.status == status, await response.text()
    body = await response.json()
    assert body["error_code"] == status
    message: str = body["message"]
    return message


# ---- GET /connector-plugins ---------------------------------------------------------------------


async def test_list_gives_connectors_sinks_first_with_versions(acme: Client) -> None:
    listed = await ok(await acme.get("/connector-plugins"))
    expected = [
        {"class": "acme_rest.KeyedSinkConnector", "type": "sink", "version": "2.5"},
        {"class": "acme_rest.NullConfigSinkConnector", "type": "sink", "version": "unknown"},
        {"class": RECORDING_SINK, "type": "sink", "version": "1.0-test"},
        {"class": RECORDING_SOURCE, "type": "source", "version": "1.0-test"},
    ]
    assert [p for p in listed if p in expected] == expected  # the built-in connectors are listed too
    types = [p["type"] for p in listed]
    assert types == sorted(types, key=["sink", "source"].index)  # sinks first, then sources
    assert await ok(await acme.get("/connector-plugins?connectorsOnly=true")) == listed


async def test_connectors_only_false_adds_the_other_plugin_types(engine: Engine) -> None:
    class UpperTransformation:
        pass

    class JsonConverter:
        def version(self) -> str:
            return "7"

    registry = PluginRegistry(
        [
            PluginDesc(JsonConverter, PluginType.CONVERTER),
            PluginDesc(UpperTransformation, PluginType.TRANSFORMATION),
            PluginDesc(RecordingSourceConnector, PluginType.SOURCE),
            PluginDesc(RecordingSinkConnector, PluginType.SINK),
        ]
    )
    server = TestServer(make_app(engine, plugins=registry), host="127.0.0.1")
    async with TestClient(server) as http:
        everything = await ok(await http.get("/connector-plugins?connectorsOnly=false"))
        assert [(p["type"], p.get("version")) for p in everything] == [
            ("sink", "1.0-test"),
            ("source", "1.0-test"),
            ("transformation", None),
            ("converter", "7"),
        ]
        assert "version" not in everything[2]
        assert len(await ok(await http.get("/connector-plugins"))) == 2


async def test_the_built_in_plugins_are_listed_under_connects_and_confluents_names_too(
    engine: Engine,
) -> None:
    """UIs build their converter and SMT pickers from Connect's class names; each names the same class
    a config may use."""
    server = TestServer(make_app(engine), host="127.0.0.1")
    async with TestClient(server) as http:
        everything = await ok(await http.get("/connector-plugins?connectorsOnly=false"))
        listed = {(p["class"], p["type"]) for p in everything}
        for name, kind in [
            ("org.apache.kafka.connect.json.JsonConverter", "converter"),
            ("org.apache.kafka.connect.json.JsonConverter", "header_converter"),
            ("org.apache.kafka.connect.storage.StringConverter", "converter"),
            ("org.apache.kafka.connect.storage.SimpleHeaderConverter", "header_converter"),
            ("org.apache.kafka.connect.converters.ByteArrayConverter", "converter"),
            ("io.confluent.connect.avro.AvroConverter", "converter"),
            ("io.confluent.connect.protobuf.ProtobufConverter", "converter"),
            ("io.confluent.connect.json.JsonSchemaConverter", "converter"),
            ("org.apache.kafka.connect.transforms.Cast$Value", "transformation"),
            ("org.apache.kafka.connect.transforms.RegexRouter", "transformation"),
            ("org.apache.kafka.connect.transforms.predicates.TopicNameMatches", "predicate"),
            ("engine.converters.json_converter.JsonConverter", "converter"),  # ours stay listed
        ]:
            assert (name, kind) in listed, name
        assert ("io.confluent.connect.avro.AvroConverter", "header_converter") not in listed
        order = ["sink", "source", "transformation", "predicate", "converter", "header_converter"]
        assert everything == sorted(everything, key=lambda p: (order.index(p["type"]), p["class"]))
        assert len(listed) == len(everything)  # each (class, type) once
        connectors = await ok(await http.get("/connector-plugins"))
        assert all(p["type"] in ("sink", "source") for p in connectors)  # the default listing is unchanged
        keys = await ok(
            await http.get("/connector-plugins/org.apache.kafka.connect.json.JsonConverter/config")
        )
        assert "schemas.enable" in {k["name"] for k in keys}


# ---- GET /connector-plugins/{p}/config ------------------------------------------------------------


async def test_config_lists_the_plugins_own_keys_then_framework_keys(acme: Client) -> None:
    keys = await ok(await acme.get("/connector-plugins/KeyedSink/config"))
    names = [k["name"] for k in keys]
    assert names == ["endpoint", "tasks.max", *(k for k in FRAMEWORK_SINK_KEYS if k != "tasks.max")]
    assert keys[0] == {
        "name": "endpoint",
        "type": "STRING",
        "required": True,
        "default_value": None,
        "importance": "HIGH",
        "documentation": "Where to write.",
        "group": "Acme",
        "order_in_group": 1,
        "width": "NONE",
        "display_name": "endpoint",
        "dependents": [],
    }
    assert keys[1]["default_value"] == "2"  # the connector's definition wins over the framework's
    by_name = {k["name"]: k for k in keys}
    assert by_name["tasks.max.enforce"] == {
        "name": "tasks.max.enforce",
        "type": "BOOLEAN",
        "required": False,
        "default_value": "true",
        "importance": "LOW",
        "documentation": by_name["tasks.max.enforce"]["documentation"],
        "group": "Common",
        "order_in_group": 4,
        "width": "SHORT",
        "display_name": "Enforce tasks max",
        "dependents": [],
    }
    assert by_name["errors.deadletterqueue.topic.replication.factor"]["type"] == "SHORT"
    assert by_name["key.converter"]["required"] is False
    assert by_name["key.converter"]["default_value"] is None
    assert by_name["transforms"]["group"] == "Transforms"
    assert by_name["errors.tolerance"]["group"] == "Error Handling"
    assert by_name["offsets.reset.on.delete"]["documentation"].startswith(
        "Drops the connector's source offsets when the connector is deleted"
    )


async def test_config_accepts_full_simple_and_pruned_names(client: Client) -> None:
    for name in (
        RECORDING_SOURCE,
        "RecordingSourceConnector",
        "RecordingSource",
        "engine.testing.RecordingSourceConnector",
    ):
        keys = await ok(await client.get(f"/connector-plugins/{name}/config"))
        assert [k["name"] for k in keys] == FRAMEWORK_SOURCE_KEYS, name
    sink = await ok(await client.get("/connector-plugins/RecordingSink/config"))
    assert [k["name"] for k in sink] == FRAMEWORK_SINK_KEYS


async def test_config_of_unknown_or_non_plugin_classes(client: Client) -> None:
    assert await error(await client.get("/connector-plugins/Nope/config"), 404) == "Unknown plugin Nope."
    assert (
        await error(await client.get("/connector-plugins/acme.missing.Thing/config"), 404)
        == "Unknown plugin acme.missing.Thing."
    )
    assert await error(await client.get("/connector-plugins/engine.engine.Engine/config"), 400) == (
        "Invalid plugin class engine.engine.Engine. Valid types are sink, source, converter, "
        "header_converter, transformation, predicate."
    )


async def test_source_plugins_have_connects_source_keys(client: Client) -> None:
    """SourceConnectorConfig.configDef(): names, types, defaults, groups and orders as Connect defines them."""
    keys = {k["name"]: k for k in await ok(await client.get("/connector-plugins/RecordingSource/config"))}
    shape = {
        name: (
            k["type"],
            k["required"],
            k["default_value"],
            k["importance"],
            k["group"],
            k["order_in_group"],
            k["width"],
            k["display_name"],
        )
        for name, k in keys.items()
        if name in SOURCE_ONLY_KEYS
    }
    assert shape == {
        "topic.creation.groups": (
            "LIST",
            False,
            "",
            "LOW",
            "Topic Creation",
            1,
            "LONG",
            "Topic Creation Groups",
        ),
        "exactly.once.support": (
            "STRING",
            False,
            "requested",
            "MEDIUM",
            "Exactly Once Support",
            2,
            "SHORT",
            "Exactly once support",
        ),
        "transaction.boundary": (
            "STRING",
            False,
            "poll",
            "MEDIUM",
            "Exactly Once Support",
            3,
            "SHORT",
            "Transaction Boundary",
        ),
        "transaction.boundary.interval.ms": (
            "LONG",
            False,
            None,
            "LOW",
            "Exactly Once Support",
            4,
            "SHORT",
            "Transaction boundary interval",
        ),
        "offsets.storage.topic": ("STRING", False, None, "LOW", "offsets.topic", 1, "LONG", "Offsets topic"),
    }
    sink = await ok(await client.get("/connector-plugins/RecordingSink/config"))
    assert not {k["name"] for k in sink} & set(SOURCE_ONLY_KEYS)


SOURCE_KEY_ERRORS = {
    "exactly.once.support": "Invalid value bogus for configuration exactly.once.support: String must be one of "
    "(case insensitive): REQUIRED, REQUESTED",
    "transaction.boundary": "Invalid value never for configuration transaction.boundary: String must be one of "
    "(case insensitive): INTERVAL, POLL, CONNECTOR",
    "transaction.boundary.interval.ms": "Invalid value -1 for configuration transaction.boundary.interval.ms: "
    "Value must be at least 0",
    "offsets.storage.topic": "Invalid value  for configuration offsets.storage.topic: String must be non-empty",
    "topic.creation.groups": "Invalid value [a, a] for configuration topic.creation.groups: Duplicate alias provided.",
}
BAD_SOURCE_KEYS = {
    "exactly.once.support": "bogus",
    "transaction.boundary": "never",
    "transaction.boundary.interval.ms": "-1",
    "offsets.storage.topic": "",
    "topic.creation.groups": "a,a",
}


async def test_source_keys_are_validated_and_creating_with_a_bad_one_fails(client: Client) -> None:
    config = {**SOURCE, "name": "eos", **BAD_SOURCE_KEYS}
    infos = await ok(await client.put("/connector-plugins/RecordingSource/config/validate", json=config))
    assert infos["error_count"] == 5
    assert {k: v["errors"] for k, v in _values(infos).items() if v["errors"]} == {
        k: [m] for k, m in SOURCE_KEY_ERRORS.items()
    }
    one_bad = {**SOURCE, "exactly.once.support": "bogus"}
    created = await client.post("/connectors", json={"name": "eos", "config": one_bad})
    assert await error(created, 400) == (
        "Connector configuration is invalid and contains the following 1 error(s):\n"
        f"{SOURCE_KEY_ERRORS['exactly.once.support']}\n"
        "You can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`"
    )
    put = await client.put("/connectors/eos/config", json={**SOURCE, **BAD_SOURCE_KEYS})
    assert (await error(put, 400)).startswith(
        "Connector configuration is invalid and contains the following 5 error(s)"
    )
    assert await (await client.get("/connectors")).json() == []
    fine = {
        **SOURCE,
        "exactly.once.support": " Requested ",
        "transaction.boundary": "INTERVAL",
        "transaction.boundary.interval.ms": "0",
        "topic.creation.groups": "a,b",
    }
    assert (await client.post("/connectors", json={"name": "eos", "config": fine})).status == 201
    sink = {**SINK, "exactly.once.support": "bogus"}  # not a sink key: ignored, as Connect does
    assert (await client.post("/connectors", json={"name": "sink", "config": sink})).status == 201


# ---- PUT /connector-plugins/{p}/config/validate ---------------------------------------------------


def _values(infos: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["value"]["name"]: c["value"] for c in infos["configs"] if c["value"] is not None}


async def test_validate_a_valid_config(client: Client) -> None:
    config = {**SOURCE, "name": "orders"}
    infos = await ok(
        await client.put("/connector-plugins/RecordingSourceConnector/config/validate", json=config)
    )
    assert infos["name"] == "engine.testing.RecordingSourceConnector"
    assert infos["error_count"] == 0
    assert infos["groups"] == [
        "Common",
        "Transforms",
        "Predicates",
        "Error Handling",
        "Topic Creation",
        "Exactly Once Support",
        "offsets.topic",
        "Restart Policy",
        "Rate Limits",
    ]
    assert [c["definition"]["name"] for c in infos["configs"]] == FRAMEWORK_SOURCE_KEYS
    values = _values(infos)
    assert values["tasks.max"] == {
        "name": "tasks.max",
        "value": "2",
        "recommended_values": [],
        "errors": [],
        "visible": True,
    }
    assert values["errors.tolerance"]["value"] == "none"
    assert values["header.converter"]["value"] is None


async def test_validate_reports_a_converter_class_that_does_not_exist(client: Client) -> None:
    config = {
        **SOURCE,
        "name": "orders",
        "value.converter": "com.example.NoSuchConverter",
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "header.converter": "Nope",
    }
    infos = await ok(
        await client.put("/connector-plugins/RecordingSourceConnector/config/validate", json=config)
    )
    values = _values(infos)
    assert values["value.converter"]["errors"] == [
        "Invalid value com.example.NoSuchConverter for configuration "
        "value.converter: Class com.example.NoSuchConverter could not be found."
    ]
    assert values["header.converter"]["errors"] == [
        "Invalid value Nope for configuration header.converter: Class Nope could not be found."
    ]
    assert values["key.converter"]["errors"] == []
    assert infos["error_count"] == 2


async def test_a_hung_validate_times_out_naming_the_stage(client: Client) -> None:
    FAULTS.inject("slow", "validate", "block")
    response = await client.put(
        "/connector-plugins/RecordingSource/config/validate", json={**SOURCE, "name": "slow"}
    )
    assert (
        await error(response, 500)
        == "Request timed out. The worker is currently performing multi-property validation for the connector"
    )
    FAULTS.release_all()


async def test_validate_answers_200_with_every_error(client: Client) -> None:
    config = {
        "connector.class": "RecordingSink",
        "tasks.max": "0",
        "topics": "a",
        "topics.regex": "a.*",
        "errors.tolerance": "some",
        "transforms": "x,x",
        "extra": None,
    }
    infos = await ok(await client.put("/connector-plugins/RecordingSink/config/validate", json=config))
    values = _values(infos)
    assert values["name"]["errors"] == ['Missing required configuration "name" which has no default value.']
    assert values["tasks.max"]["errors"] == [
        "Invalid value 0 for configuration tasks.max: Value must be at least 1"
    ]
    assert values["errors.tolerance"]["errors"] == [
        "Invalid value some for configuration errors.tolerance: String must be one of: none, all"
    ]
    assert values["transforms"]["errors"] == [
        "Invalid value [x, x] for configuration transforms: Duplicate alias provided."
    ]
    both = "topics and topics.regex are mutually exclusive options, but both are set."
    assert values["topics"]["errors"] == [both]
    assert values["topics.regex"]["errors"] == [both]
    assert infos["configs"][0] == {
        "definition": None,
        "value": {
            "name": "extra",
            "value": None,
            "recommended_values": [],
            "visible": True,
            "errors": ["Null value can not be supplied as the configuration value."],
        },
    }
    # Kafka's enrich() still defines the duplicated alias's keys, so its missing type is an error too
    assert values["transforms.x.type"]["errors"] == [
        'Missing required configuration "transforms.x.type" which has no default value.'
    ]
    assert infos["error_count"] == 8


async def test_validate_refuses_an_empty_topic_and_drops_duplicates_as_kafka_4_2_does(client: Client) -> None:
    """KIP-1161: ``topics`` is a strict list (an empty entry is an error; duplicates are dropped)."""
    config = {"connector.class": "RecordingSink", "name": "s", "tasks.max": "1", "topics": "a,,b"}
    empty = _values(
        await ok(await client.put("/connector-plugins/RecordingSink/config/validate", json=config))
    )
    assert empty["topics"]["errors"] == ["Configuration 'topics' values must not be empty."]
    config["topics"] = "a,b,a"
    twice = _values(
        await ok(await client.put("/connector-plugins/RecordingSink/config/validate", json=config))
    )
    assert (twice["topics"]["errors"], twice["topics"]["value"]) == ([], "a,b")


async def test_validate_merges_the_connectors_own_keys_and_checks(acme: Client) -> None:
    config = {
        "connector.class": "acme_rest.KeyedSinkConnector",
        "name": "k",
        "topics": "t",
        "endpoint": "ftp://x",
        "tasks.max": "5",
        "errors.deadletterqueue.topic.name": "t",
    }
    infos = await ok(await acme.put("/connector-plugins/KeyedSinkConnector/config/validate", json=config))
    assert infos["name"] == "acme_rest.KeyedSinkConnector"
    assert infos["groups"] == [
        "Common",
        "Transforms",
        "Predicates",
        "Error Handling",
        "Restart Policy",
        "Rate Limits",
        "Offsets",
        "Acme",
    ]
    names = [c["definition"]["name"] for c in infos["configs"]]
    assert names == [*FRAMEWORK_SINK_KEYS, "endpoint"]
    tasks_max = next(c for c in infos["configs"] if c["definition"]["name"] == "tasks.max")
    assert tasks_max["definition"]["default_value"] == "2"  # the connector's definition, framework position
    assert tasks_max["value"]["errors"] == [
        "Invalid value 5 for configuration tasks.max: Value must be no more than 4"
    ]
    values = _values(infos)
    assert values["endpoint"]["errors"] == ["ftp is not supported"]
    assert values["topics"]["errors"] == [
        "The DLQ topic 't' may not be included in the list of topics ('topics=[t]') consumed by the connector"
    ]
    assert infos["error_count"] == 3
    by_alias = await ok(
        await acme.put(
            "/connector-plugins/KeyedSink/config/validate", json={**config, "connector.class": "KeyedSink"}
        )
    )
    assert by_alias["name"] == "KeyedSink"
    assert by_alias["error_count"] == 3


async def test_validate_rejects_mismatched_missing_and_unknown_types(client: Client, acme: Client) -> None:
    mismatch = await client.put("/connector-plugins/RecordingSource/config/validate", json=SINK)
    assert await error(mismatch, 400) == (
        "Included connector type engine.testing.RecordingSinkConnector does not match request type RecordingSource"
    )
    suffix = await client.put("/connector-plugins/SourceConnector/config/validate", json=SOURCE)
    assert suffix.status == 200  # "...RecordingSource" ends with "Source": Connect's suffix rule
    # Connect validates on another thread and answers what it throws there as 500 "<its class>: <message>"
    missing = await client.put("/connector-plugins/RecordingSource/config/validate", json={"name": "x"})
    assert await error(missing, 500) == (
        "org.apache.kafka.connect.runtime.rest.errors.BadRequestException: "
        "Connector config contains no connector type"
    )
    unknown = await client.put("/connector-plugins/Nope/config/validate", json={"connector.class": "Nope"})
    assert (await error(unknown, 500)).startswith(
        "org.apache.kafka.connect.runtime.rest.errors.BadRequestException: Failed to find any class that implements "
        "Connector and "
        "which name matches Nope, available connectors are: "
    )
    assert await error(await client.put("/connector-plugins/X/config/validate", json=["a"]), 500) == (
        "Cannot deserialize value of type `java.util.LinkedHashMap<java.lang.String,java.lang.String>` from Array "
        "value (token `JsonToken.START_ARRAY`)"
    )  # Jackson's, as Connect answers it
    null_config = await acme.put(
        "/connector-plugins/NullConfigSink/config/validate",
        json={"connector.class": "NullConfigSink", "name": "n", "topics": "t"},
    )
    assert await error(null_config, 500) == (
        "org.apache.kafka.connect.runtime.rest.errors.BadRequestException: "
        "acme_rest.NullConfigSinkConnector.config() must return a ConfigDef "
        "that is not null."
    )
    FAULTS.inject("raising", "validate", "raise")
    raising = await client.put(
        "/connector-plugins/RecordingSource/config/validate", json={**SOURCE, "name": "raising"}
    )
    assert (
        await error(raising, 500)
        == "engine.api.errors.ConnectException: injected failure in connector.validate"
    )


async def test_created_connectors_accept_aliases(client: Client, engine: Engine) -> None:
    created = await client.post(
        "/connectors", json={"name": "aliased", "config": {**SOURCE, "connector.class": "RecordingSource"}}
    )
    assert created.status == 201, await created.text()
    assert (await created.json())["type"] == "source"
    await engine.wait_for_state("aliased", "RUNNING", tasks=2)
