"""Config records <-> (key, JSON bytes), byte-compatible with Kafka Connect's config topic."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from engine.configlog.records import (
    ConfigRecord,
    ConnectorConfigRecord,
    ConnectorTombstone,
    IgnoredRecord,
    LoggerLevelRecord,
    PendingCleanupCleared,
    PendingCleanupRecord,
    RestartRecord,
    SessionKeyRecord,
    TargetStateRecord,
    TargetStateTombstone,
    TaskCommitRecord,
    TaskConfigRecord,
    TaskCountRecord,
    TaskRestartRecord,
)
from engine.errors import CorruptRecord
from engine.storage import record_json
from states import TargetState

CONNECTOR = "connector-"
TASK = "task-"
COMMIT = "commit-"
TARGET_STATE = "target-state-"
RESTART_CONNECTOR = "restart-connector-"
RESTART_TASK = "restart-task-"
PENDING_CLEANUP = "pending-cleanup-"
LOGGER_CLUSTER = "logger-cluster-"
TASK_COUNT = "tasks-fencing-"
SESSION_KEY = "session-key"
_IGNORED_PREFIXES: tuple[str, ...] = ()
_IGNORED_KEYS: tuple[str, ...] = ()
_KNOWN_PREFIXES = (
    TARGET_STATE,
    CONNECTOR,
    TASK,
    COMMIT,
    RESTART_CONNECTOR,
    RESTART_TASK,
    PENDING_CLEANUP,
    LOGGER_CLUSTER,
    TASK_COUNT,
)


# json.dumps builds a fresh encoder per call when given separators; one shared encoder does not.
_ENCODER = json.JSONEncoder(separators=(",", ":"))


def _dumps(value: dict[str, Any]) -> bytes:
    return _ENCODER.encode(value).encode()


def encode(record: ConfigRecord) -> tuple[str, bytes | None]:
    """The key and value bytes a record is written as."""
    match record:
        case ConnectorConfigRecord(c, props, incarnation):
            if incarnation is None:
                return CONNECTOR + c, _dumps({"properties": props})
            return CONNECTOR + c, _dumps({"properties": props, "incarnation": incarnation})
        case ConnectorTombstone(c):
            return CONNECTOR + c, None
        case TaskConfigRecord(c, n, props):
            return f"{TASK}{c}-{n}", _dumps({"properties": props})
        case TaskCommitRecord(c, n):
            return COMMIT + c, _dumps({"tasks": n})
        case TargetStateRecord(c, state):
            # Old workers only know STARTED/PAUSED: STOPPED is written as PAUSED for them.
            v1 = TargetState.PAUSED if state is TargetState.STOPPED else state
            return TARGET_STATE + c, _dumps({"state": v1.value, "state.v2": state.value})
        case TargetStateTombstone(c):
            return TARGET_STATE + c, None
        case RestartRecord(c, include_tasks, only_failed):
            return RESTART_CONNECTOR + c, _dumps({"include-tasks": include_tasks, "only-failed": only_failed})
        case TaskRestartRecord(c, n):
            return f"{RESTART_TASK}{c}-{n}", _dumps({})
        case PendingCleanupRecord(c, props, n, incarnation):
            if incarnation is None:
                return PENDING_CLEANUP + c, _dumps({"properties": props, "tasks": n})
            return PENDING_CLEANUP + c, _dumps({"properties": props, "tasks": n, "incarnation": incarnation})
        case PendingCleanupCleared(c):
            return PENDING_CLEANUP + c, None
        case LoggerLevelRecord(namespace, level):
            return LOGGER_CLUSTER + namespace, _dumps({"level": level})
        case SessionKeyRecord(key, algorithm, created):
            return SESSION_KEY, _dumps(
                {
                    "key": base64.b64encode(key).decode("ascii"),
                    "algorithm": algorithm,
                    "creation-timestamp": created,
                }
            )
        case TaskCountRecord(c, n):
            return TASK_COUNT + c, _dumps({"task-count": n})
        case IgnoredRecord(key, value):
            return key, None if value is None else _dumps(value)
    raise TypeError(f"not a config record: {record!r}")  # pragma: no cover


def _parse(key: str, value: bytes) -> dict[str, Any]:
    try:
        parsed = record_json.loads(value)  # bounded as Jackson is: a deep record is skipped, not fatal
    except (UnicodeDecodeError, ValueError) as exc:
        raise CorruptRecord(key, f"value is not JSON ({exc})") from None
    if not isinstance(parsed, dict):
        raise CorruptRecord(key, "value is not a JSON object")
    return parsed


def _properties(key: str, value: dict[str, Any]) -> dict[str, str]:
    props = value.get("properties")
    if not isinstance(props, dict):
        raise CorruptRecord(key, "'properties' is missing or not an object")
    if all(type(v) is str for v in props.values()):
        return props  # the common case: a freshly parsed object, nothing to copy or drop
    bad = [k for k, v in props.items() if v is not None and not isinstance(v, str)]
    if bad:
        raise CorruptRecord(key, f"properties {sorted(bad)} are not strings")
    return {k: v for k, v in props.items() if v is not None}


def _incarnation(value: dict[str, Any]) -> str | None:
    """Our own field: absent on Connect's records and on a creating record; never fatal when odd."""
    incarnation = value.get("incarnation")
    return incarnation if isinstance(incarnation, str) and incarnation else None


def _split_task_key(key: str, prefix: str) -> tuple[str, int]:
    # Connector names may contain '-': the last part is the task number.
    connector, sep, number = key[len(prefix) :].rpartition("-")
    if not sep or not connector or not number.isdigit():
        raise CorruptRecord(key, "key does not end in -<task number>")
    return connector, int(number)


def _name(key: str, prefix: str) -> str:
    name = key[len(prefix) :]
    if not name:
        raise CorruptRecord(key, "key names no connector")
    return name


def _session_key(key: str, value: dict[str, Any] | None) -> SessionKeyRecord:
    """Connect's ``processSessionKeyRecord``: a malformed key is logged and ignored."""
    if value is None:
        raise CorruptRecord(key, "the session key is unexpectedly null")
    encoded, algorithm, created = value.get("key"), value.get("algorithm"), value.get("creation-timestamp")
    if not isinstance(encoded, str):
        raise CorruptRecord(key, "the session key's 'key' field is not a string")
    if not isinstance(algorithm, str):
        raise CorruptRecord(key, "the session key's 'algorithm' field is not a string")
    if not isinstance(created, int) or isinstance(created, bool):
        raise CorruptRecord(key, "the session key's 'creation-timestamp' field is not a long")
    try:
        raw = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise CorruptRecord(key, "the session key's 'key' field is not base64") from None
    return SessionKeyRecord(raw, algorithm, created)


def decode(key: str, value: bytes | None) -> ConfigRecord:
    """Parse one record, or raise CorruptRecord saying why it cannot be applied."""
    if not key.startswith(_KNOWN_PREFIXES) and key != SESSION_KEY:
        raise CorruptRecord(key, "invalid key")
    return decode_object(key, None if value is None else _parse(key, value))


def decode_object(key: str, value: dict[str, Any] | None) -> ConfigRecord:
    """``decode`` for a value already parsed from JSON (dumps hold objects, not bytes)."""
    if key.startswith(TARGET_STATE):
        name = _name(key, TARGET_STATE)
        if value is None:
            return TargetStateTombstone(name)
        raw = value.get("state.v2")
        if not isinstance(raw, str):  # a v2 field Connect cannot read falls back to v1, as Connect does
            raw = value.get("state")
        if not isinstance(raw, str):
            raise CorruptRecord(key, f"unknown target state {raw!r}")
        try:
            return TargetStateRecord(name, TargetState(raw))
        except ValueError:
            raise CorruptRecord(key, f"unknown target state {raw!r}") from None
    if key.startswith(CONNECTOR):
        name = _name(key, CONNECTOR)
        if value is None:
            return ConnectorTombstone(name)
        return ConnectorConfigRecord(name, _properties(key, value), _incarnation(value))
    if key.startswith(TASK_COUNT):
        name = _name(key, TASK_COUNT)
        count = None if value is None else value.get("task-count")
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise CorruptRecord(key, "'task-count' is not a non-negative integer")
        return TaskCountRecord(name, count)
    if key == SESSION_KEY:
        return _session_key(key, value)
    if key.startswith(TASK):
        connector, n = _split_task_key(key, TASK)
        if value is None:
            raise CorruptRecord(key, "task config tombstones are not part of the protocol")
        return TaskConfigRecord(connector, n, _properties(key, value))
    if key.startswith(COMMIT):
        name = _name(key, COMMIT)
        if value is None:
            raise CorruptRecord(key, "commit tombstones are not part of the protocol")
        tasks = value.get("tasks")
        if not isinstance(tasks, int) or isinstance(tasks, bool) or tasks < 0:
            raise CorruptRecord(key, "'tasks' is not a non-negative integer")
        return TaskCommitRecord(name, tasks)
    if key.startswith(RESTART_CONNECTOR):
        name = _name(key, RESTART_CONNECTOR)
        parsed = value if value is not None else {}
        # Connect defaults malformed flags to false rather than dropping the request.
        include = parsed.get("include-tasks")
        only = parsed.get("only-failed")
        return RestartRecord(name, include is True, only is True)
    if key.startswith(RESTART_TASK):
        connector, n = _split_task_key(key, RESTART_TASK)
        return TaskRestartRecord(connector, n)
    if key.startswith(PENDING_CLEANUP):
        name = _name(key, PENDING_CLEANUP)
        if value is None:
            return PendingCleanupCleared(name)
        tasks = value.get("tasks", 0)
        return PendingCleanupRecord(
            name, _properties(key, value), tasks if isinstance(tasks, int) else 0, _incarnation(value)
        )
    if key.startswith(LOGGER_CLUSTER):  # Connect logs and ignores a malformed one, as the caller does
        namespace = key[len(LOGGER_CLUSTER) :]
        level = None if value is None else value.get("level")
        if not isinstance(level, str):
            raise CorruptRecord(key, "the logging level is missing or not a string")
        return LoggerLevelRecord(namespace, level)
    if key in _IGNORED_KEYS or key.startswith(_IGNORED_PREFIXES):
        return IgnoredRecord(key, value)
    raise CorruptRecord(key, "invalid key")
