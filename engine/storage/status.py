"""Observed statuses of connectors and tasks (spec §3.2), in memory or in a journal file."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from engine.storage.journal import Journal


@dataclass(frozen=True, slots=True)
class Status:
    """One status value: Connect's ``{"state", "trace"?, "worker_id", "generation"}``."""

    state: str
    worker_id: str
    generation: int = 0
    trace: str | None = None

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"state": self.state}
        if self.trace:
            body["trace"] = self.trace
        body["worker_id"] = self.worker_id
        body["generation"] = self.generation
        return body

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> Status:
        return cls(str(body["state"]), str(body["worker_id"]), int(body.get("generation", 0)), body.get("trace"))


def connector_key(connector: str) -> str:
    return f"status-connector-{connector}"


def task_key(connector: str, task: int) -> str:
    return f"status-task-{connector}-{task}"


class MemoryStatusStore:
    """Latest status per connector and per task; DESTROYED is a removal, as in Connect.

    Subclasses that persist set ``_journaled``; without it no record key is ever built, since
    every transition writes a status.
    """

    _journaled = False

    def __init__(self) -> None:
        self._connectors: dict[str, Status] = {}
        self._tasks: dict[str, dict[int, Status]] = {}

    async def open(self) -> None:
        return None

    async def close(self) -> None:
        return None

    def put_connector(self, connector: str, status: Status) -> None:
        self._connectors[connector] = status
        if self._journaled:
            self._persist(connector_key(connector), status)

    def put_task(self, connector: str, task: int, status: Status) -> None:
        tasks = self._tasks.get(connector)
        if tasks is None:
            tasks = self._tasks[connector] = {}
        tasks[task] = status
        if self._journaled:
            self._persist(task_key(connector, task), status)

    def remove_task(self, connector: str, task: int) -> None:
        tasks = self._tasks.get(connector, {})
        if tasks.pop(task, None) is not None and self._journaled:
            self._persist(task_key(connector, task), None)

    def remove_connector(self, connector: str) -> None:
        """Remove the connector's status and every task status it had."""
        for task in list(self._tasks.get(connector, {})):
            self.remove_task(connector, task)
        self._tasks.pop(connector, None)
        if self._connectors.pop(connector, None) is not None and self._journaled:
            self._persist(connector_key(connector), None)

    def connector(self, connector: str) -> Status | None:
        return self._connectors.get(connector)

    def tasks(self, connector: str) -> dict[int, Status]:
        return dict(sorted(self._tasks.get(connector, {}).items()))

    def connector_statuses(self) -> list[Status]:
        """Every connector's status (metrics scrapes count them by state)."""
        return list(self._connectors.values())

    def task_statuses(self) -> list[Status]:
        """Every task's status, all connectors together."""
        return [status for tasks in self._tasks.values() for status in tasks.values()]

    def _persist(self, key: str, status: Status | None) -> None:
        return None


class FileStatusStore(MemoryStatusStore):
    """Statuses journaled to a file, so the last known status is readable after a restart."""

    _journaled = True

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__()
        self._journal = Journal(path, fsync=False)

    async def open(self) -> None:
        for key, value in self._journal.open():
            self._load(key, value)

    def _load(self, key: str, value: bytes | None) -> None:
        status = None if value is None else Status.from_json(json.loads(value))
        if key.startswith("status-connector-"):
            name = key.removeprefix("status-connector-")
            if status is None:
                self._connectors.pop(name, None)
            else:
                self._connectors[name] = status
        elif key.startswith("status-task-"):
            name, _, number = key.removeprefix("status-task-").rpartition("-")
            if status is None:
                self._tasks.get(name, {}).pop(int(number), None)
            else:
                self._tasks.setdefault(name, {})[int(number)] = status

    async def close(self) -> None:
        self._journal.close()

    def _persist(self, key: str, status: Status | None) -> None:
        value = None if status is None else json.dumps(status.to_json()).encode()
        self._journal.append([(key, value)])
