"""``error.rest.response.message.detail.enabled=false``: REST answers carry no traces or internal
error details, while the logs keep them (KIP-587's idea; the key is the one its implementation,
apache/kafka#8355, proposed).

What it hides:

* the ``trace`` of every connector and task status (``GET .../status``, ``?expand=status``, the
  restart plan): replaced by a short text naming the worker whose log holds it;
* the message of every 5xx answer: replaced by a generic text with an incident id, and the real
  message is logged (ERROR, ``rest.error_hidden``) under that id.

4xx answers keep their messages: they describe the caller's request, which the caller needs to fix
it. The default (``true``) answers as Connect does.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

import structlog

from engine.errors import ConfigError

DETAIL_KEY = "error.rest.response.message.detail.enabled"

log = structlog.get_logger(component="rest")


def details_enabled(worker: Mapping[str, str]) -> bool:
    """The worker key, ``true`` or ``false`` (case-insensitive); default true."""
    raw = str(worker.get(DETAIL_KEY, "true")).strip().lower()
    if raw not in ("true", "false"):
        raise ConfigError(
            f"Invalid value {raw} for configuration {DETAIL_KEY}: Expected value to be either true or false",
            errors={DETAIL_KEY: ["Expected value to be either true or false"]},
        )
    return raw == "true"


def hidden_trace(worker_id: str) -> str:
    return f"The trace is not shown ({DETAIL_KEY}=false); it is in the log of worker {worker_id}."


def quiet_state(state: Mapping[str, Any]) -> dict[str, Any]:
    """One ``{"state", "worker_id", "trace"?}`` without its trace."""
    body = dict(state)
    if "trace" in body:
        body["trace"] = hidden_trace(str(body.get("worker_id", "")))
    return body


def quiet_status(info: Mapping[str, Any]) -> dict[str, Any]:
    """A ``ConnectorStateInfo`` (or a task's state) with every trace replaced."""
    body = quiet_state(info)
    if isinstance(info.get("connector"), Mapping):
        body["connector"] = quiet_state(info["connector"])
    if isinstance(info.get("tasks"), list):
        body["tasks"] = [quiet_state(t) if isinstance(t, Mapping) else t for t in info["tasks"]]
    return body


def quiet_error(status: int, message: str, *, method: str, path: str) -> str:
    """The message a 5xx answer may carry: the real one goes to the log under an incident id."""
    incident = uuid.uuid4().hex[:12]
    log.error(
        "rest.error_hidden", status=status, method=method, path=path, incident=incident, message=message
    )
    return (
        f"The request failed on the server (incident {incident}); the details are in the worker's log "
        f"({DETAIL_KEY}=false)."
    )
