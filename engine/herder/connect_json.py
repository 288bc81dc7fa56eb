"""Connect's REST JSON shapes of what the herder holds: ``ConnectorInfo``, ``ConnectorStateInfo``.

The embedding API answers in these shapes too, so REST and embedded callers read the same dicts.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from typing import Any

import orjson

from engine.api.connector import Connector
from engine.configlog.snapshot import ConfigSnapshot
from engine.errors import ConfigError, ConnectorNotFound
from engine.plugins.discovery import UNDEFINED_VERSION, plugin_version
from engine.plugins.loading import connector_type, load_connector_class
from engine.storage.base import StatusStore
from engine.storage.status import Status


def connector_info(name: str, config: Mapping[str, str], task_count: int) -> dict[str, Any]:
    """Connect's ConnectorInfo: name, config, tasks, type."""
    return {
        "name": name,
        "config": dict(config),
        "tasks": [{"connector": name, "task": n} for n in range(task_count)],
        "type": type_of(config),
    }


def state_info(
    statuses: StatusStore,
    snapshot: ConfigSnapshot,
    name: str,
    classes: dict[str, tuple[str, str, str]] | None = None,
) -> dict[str, Any]:
    """Connect's ConnectorStateInfo; ConnectorNotFound until a first status exists. ``classes``
    keeps each class's versions and type across calls (``states_info``)."""
    connector = statuses.connector(name)
    if connector is None:
        raise ConnectorNotFound(name, f"No status found for connector {name}")
    connector_version, task_version, kind = _described(_config_of(snapshot, name), classes)
    return {
        "name": name,
        "connector": {**status_json(connector), "version": connector_version},
        "tasks": [{**status_json(s, id=n), "version": task_version} for n, s in statuses.tasks(name).items()],
        "type": kind,
    }


def states_info(
    statuses: StatusStore, snapshot: ConfigSnapshot, names: list[str]
) -> dict[str, dict[str, Any]]:
    """``GET /connectors?expand=status``'s statuses: each name's ConnectorStateInfo, those without a
    status left out (as Connect leaves them). Each class's versions (a fresh instance's ``version()``)
    and type are asked once per call, not once per connector: with thousands of connectors of a few
    classes that was most of the answer's time."""
    classes: dict[str, tuple[str, str, str]] = {}
    found: dict[str, dict[str, Any]] = {}
    for name in names:
        try:
            found[name] = state_info(statuses, snapshot, name, classes)
        except ConnectorNotFound:
            continue
    return found


class StatesInfoJson:
    """``GET /connectors?expand=status``'s body, each connector's part JSON-encoded once per change.

    A connector's part stands while its statuses have not changed (the status store's
    ``revision_of``), its config is the same object and its classes answer the same versions; the
    whole body stands while no status changed and no config record was read. Building and encoding
    every ConnectorStateInfo took about 100 ms of a worker's loop per answer with 10,000 connectors.
    """

    def __init__(self) -> None:
        self._parts: dict[str, tuple[int, Mapping[str, str], tuple[str, str, str], bytes]] = {}
        self._shown: Callable[[dict[str, Any]], dict[str, Any]] | None = None
        self._stamp: tuple[int, int] = (-1, -1)
        self._classes: dict[str, tuple[str, str, str]] = {}
        self._body = b"{}"

    def body(
        self,
        statuses: StatusStore,
        snapshot: ConfigSnapshot,
        config_read: int,
        shown: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    ) -> bytes:
        """``{name: {"status": ConnectorStateInfo}}`` for the snapshot's connectors with a status, in
        name order; ``config_read`` is how far the config log was read (a config change moves it);
        ``shown`` rewrites each ConnectorStateInfo before it is encoded (REST hides traces with it)."""
        stamp = (statuses.revision, config_read)
        if stamp == self._stamp and shown is self._shown and self._versions_unchanged():
            return self._body
        if shown is not self._shown:
            self._parts, self._shown = {}, shown
        classes: dict[str, tuple[str, str, str]] = {}
        cached, parts = self._parts, {}
        for name in sorted(snapshot.connectors):
            if statuses.connector(name) is None:
                continue  # not started yet, or its status deleted: Connect leaves it out
            revision, config = statuses.revision_of(name), _config_of(snapshot, name)
            described = _described(config, classes)
            part = cached.get(name)
            if part is None or part[0] != revision or part[1] is not config or part[2] != described:
                info = state_info(statuses, snapshot, name, classes)
                encoded = orjson.dumps(shown(info) if shown is not None else info)
                part = (revision, config, described, orjson.dumps(name) + b':{"status":' + encoded + b"}")
            parts[name] = part
        self._parts, self._stamp, self._classes = parts, stamp, classes
        self._body = b"{" + b",".join(part[3] for part in parts.values()) + b"}"
        return self._body

    def _versions_unchanged(self) -> bool:
        """A plugin reinstalled and reloaded answers another version without any status changing."""
        return all(_running_versions(name) == described[:2] for name, described in self._classes.items())


def _described(
    config: Mapping[str, str], classes: dict[str, tuple[str, str, str]] | None
) -> tuple[str, str, str]:
    """The connector's and its tasks' versions and its type, asked once per class in ``classes``."""
    class_name = config.get("connector.class", "")
    described = None if classes is None else classes.get(class_name)
    if described is None:
        described = (*_running_versions(class_name), type_of(config))
        if classes is not None:
            classes[class_name] = described
    return described


def task_state_info(statuses: StatusStore, snapshot: ConfigSnapshot, name: str, task: int) -> dict[str, Any]:
    """Connect's TaskState, with the ``version`` its connector's ``/status`` gives the same task."""
    status = statuses.tasks(name).get(task)
    if status is None:
        raise ConnectorNotFound(name, f"No status found for task {name}-{task}")
    _, task_version = _running_versions(_config_of(snapshot, name).get("connector.class", ""))
    return {**status_json(status, id=task), "version": task_version}


def _config_of(snapshot: ConfigSnapshot, name: str) -> Mapping[str, str]:
    config = snapshot.connectors.get(name)
    if config is None:  # deleted, its deleted() still running: the type is the deleted config's
        pending = snapshot.pending_cleanups.get(name)
        config = pending.properties if pending is not None else {}
    return config


def restart_plan(info: dict[str, Any], include_tasks: bool, only_failed: bool) -> dict[str, Any]:
    """KIP-745's answer to a restart: the ConnectorStateInfo ``info`` with the units it restarts RESTARTING."""
    if not only_failed or info["connector"]["state"] == "FAILED":
        info["connector"]["state"] = "RESTARTING"
    for task in info["tasks"]:
        if include_tasks and (not only_failed or task["state"] == "FAILED"):
            task["state"] = "RESTARTING"
    return info


def status_json(status: Status, **extra: Any) -> dict[str, Any]:
    """One unit's ``{"state", "worker_id", "trace"?}``, after ``extra`` (a task's ``id``)."""
    body: dict[str, Any] = dict(extra)
    body["state"] = status.state
    body["worker_id"] = status.worker_id
    if status.trace:
        body["trace"] = status.trace
    if status.restart_attempts is not None:  # restart.policy=on-failure: our addition beside Connect's shape
        body["restart_attempts"] = status.restart_attempts
        body["next_restart_ms"] = status.next_restart_ms
    return body


def type_of(config: Mapping[str, str]) -> str:
    """``source``, ``sink`` or ``unknown`` (a class that cannot be loaded), as Connect's ``type``."""
    try:
        return connector_type(load_connector_class(config.get("connector.class", "")))
    except ConfigError:
        return "unknown"


def _running_versions(class_name: str) -> tuple[str, str]:
    """KAFKA-18988's ``version`` of a connector's and its tasks' status: what their classes' ``version()``
    answer (one version of a plugin is importable per process, so the installed one is the running
    one until a restart picks up a reinstalled plugin); ``undefined`` as Connect says when unknown."""
    try:
        cls = load_connector_class(class_name)
    except ConfigError:
        return UNDEFINED_VERSION, UNDEFINED_VERSION
    return plugin_version(cls) or UNDEFINED_VERSION, _task_version(cls)


@functools.cache
def _task_version(cls: type[Connector]) -> str:
    try:
        task_class: Any = cls().task_class()
    except Exception:  # plugin code: its tasks' version stays unknown
        return UNDEFINED_VERSION
    if inspect.iscoroutine(task_class):  # an async task_class(): not awaited on this synchronous path
        task_class.close()
        return UNDEFINED_VERSION
    return (plugin_version(task_class) if isinstance(task_class, type) else None) or UNDEFINED_VERSION
