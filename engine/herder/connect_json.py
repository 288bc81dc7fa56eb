"""Connect's REST JSON shapes of what the herder holds: ``ConnectorInfo``, ``ConnectorStateInfo``.

The embedding API answers in these shapes too, so REST and embedded callers read the same dicts.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Mapping
from typing import Any

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
    config = _config_of(snapshot, name)
    class_name = config.get("connector.class", "")
    described = None if classes is None else classes.get(class_name)
    if described is None:
        described = (*_running_versions(class_name), type_of(config))
        if classes is not None:
            classes[class_name] = described
    connector_version, task_version, kind = described
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
