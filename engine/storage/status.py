"""Observed statuses of connectors and tasks (Kafka's ``StatusBackingStore``), in memory or in a
journal file."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from engine.journal.compaction import DEFAULT_FLOOR
from engine.storage import record_json
from engine.storage.keyed_journal import KeyedJournal

# Connect's AbstractStatus.State names, which its readers accept (valueOf)
STATES = frozenset({"UNASSIGNED", "RUNNING", "PAUSED", "FAILED", "DESTROYED", "RESTARTING", "STOPPED"})


def _integer(value: Any, name: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} {value!r} is not an integer")
    return value


@dataclass(frozen=True, slots=True)
class Status:
    """One status value: Connect's ``{"state", "trace"?, "worker_id", "generation"}``.

    With ``restart.policy=on-failure`` also ``restart_attempts`` and ``next_restart_ms`` (epoch ms,
    or None): our addition, which Connect's readers of the status topic ignore.
    """

    state: str
    worker_id: str
    generation: int = 0
    trace: str | None = None
    restart_attempts: int | None = None  # None: the connector has no auto-restart policy
    next_restart_ms: int | None = None

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"state": self.state}
        if self.trace:
            body["trace"] = self.trace
        body["worker_id"] = self.worker_id
        body["generation"] = self.generation
        if self.restart_attempts is not None:
            body["restart_attempts"] = self.restart_attempts
            body["next_restart_ms"] = self.next_restart_ms
        return body

    @classmethod
    def from_json(cls, body: Any) -> Status:
        """Checked as Connect's ``KafkaStatusBackingStore`` parses a status: an object with a known
        state and a worker id; anything else is a ``ValueError`` or ``TypeError`` (the record is skipped)."""
        if not isinstance(body, dict):
            raise TypeError(f"a status must be a JSON object, not {type(body).__name__}")
        state, worker, trace = body.get("state"), body.get("worker_id"), body.get("trace")
        if state not in STATES:
            raise ValueError(f"unknown state {state!r}")
        if not isinstance(worker, str):
            raise TypeError(f"worker_id {worker!r} is not a string")
        if trace is not None and not isinstance(trace, str):
            raise TypeError("trace is not a string")
        attempts, next_ms = body.get("restart_attempts"), body.get("next_restart_ms")
        return cls(
            state,
            worker,
            _integer(body.get("generation", 0), "generation"),
            trace,
            None if attempts is None else _integer(attempts, "restart_attempts"),
            None if next_ms is None else _integer(next_ms, "next_restart_ms"),
        )


def connector_key(connector: str) -> str:
    return f"status-connector-{connector}"


def task_key(connector: str, task: int) -> str:
    return f"status-task-{connector}-{task}"


def topic_key(connector: str, topic: str) -> str:
    return f"status-topic-{topic}:connector-{connector}"


@dataclass(frozen=True, slots=True)
class TopicStatus:
    """An active topic (KIP-558): the first time a task of ``connector`` produced to or consumed it."""

    topic: str
    connector: str
    task: int
    discover_timestamp: int

    def to_json(self) -> dict[str, Any]:
        return {
            "topic": {
                "name": self.topic,
                "connector": self.connector,
                "task": self.task,
                "discoverTimestamp": self.discover_timestamp,
            }
        }

    @classmethod
    def from_json(cls, body: Any) -> TopicStatus:
        inner = body.get("topic") if isinstance(body, dict) else None
        if not isinstance(inner, dict):
            raise TypeError("a topic status must be a JSON object with a 'topic' object")
        name, connector = inner.get("name"), inner.get("connector")
        if not isinstance(name, str) or not isinstance(connector, str):
            raise TypeError("a topic status names its topic and connector as strings")
        return cls(
            name,
            connector,
            _integer(inner.get("task"), "task"),
            _integer(inner.get("discoverTimestamp"), "discoverTimestamp"),
        )


def _may_overwrite(current: Status | None, new: Status) -> bool:
    return current is None or current.worker_id == new.worker_id or new.generation >= current.generation


def _stale_release(current: Status | None, new: Status) -> bool:
    """A worker's UNASSIGNED read back over the status of another worker that wrote in a newer
    generation: the release of a copy that stopped late (a worker cut off from its group, resuming
    after its work moved on). Connect's ``putSafe`` refuses it where it is written, from what that
    worker has read; a worker resuming from a pause has not read the new owner's news yet, so every
    reader refuses it too: the owner's status stands."""
    return new.state == "UNASSIGNED" and not _may_overwrite(current, new)


class MemoryStatusStore:
    """Latest status per connector and per task; DESTROYED is a removal, as in Connect.

    Subclasses that persist set ``_journaled``; without it no record key is ever built, since
    every transition writes a status.
    """

    _journaled = False

    def __init__(self) -> None:
        self._connectors: dict[str, Status] = {}
        self._tasks: dict[str, dict[int, Status]] = {}
        self._topics: dict[str, dict[str, TopicStatus]] = {}
        self.revision = 0  # bumped by every change of a connector's or a task's status
        self._revisions: dict[str, int] = {}  # each connector's revision at its last change

    def revision_of(self, connector: str) -> int:
        """The store's revision when the connector's status or one of its tasks' last changed: what
        was built from them stands while this is the same (``GET /connectors?expand=status``)."""
        return self._revisions.get(connector, 0)

    def _changed(self, connector: str) -> None:
        self.revision += 1
        self._revisions[connector] = self.revision

    async def open(self) -> None:
        return None

    async def close(self) -> None:
        return None

    async def flush(self) -> None:
        """Wait until written statuses are durable (the Kafka store's sends acknowledged)."""

    def put_connector(self, connector: str, status: Status) -> None:
        self._connectors[connector] = status
        self._changed(connector)
        if self._journaled:
            self._persist(connector_key(connector), status)

    def put_task(self, connector: str, task: int, status: Status) -> None:
        tasks = self._tasks.get(connector)
        if tasks is None:
            tasks = self._tasks[connector] = {}
        tasks[task] = status
        self._changed(connector)
        if self._journaled:
            self._persist(task_key(connector, task), status)

    def remove_task(self, connector: str, task: int) -> None:
        tasks = self._tasks.get(connector, {})
        if tasks.pop(task, None) is not None:
            self._changed(connector)
            if self._journaled:
                self._persist(task_key(connector, task), None)

    def remove_connector(self, connector: str) -> None:
        """Remove the connector's status and every task status it had."""
        for task in list(self._tasks.get(connector, {})):
            self.remove_task(connector, task)
        self._tasks.pop(connector, None)
        self.reset_topics(connector)
        if self._connectors.pop(connector, None) is not None:
            self._changed(connector)
            del self._revisions[connector]  # gone: any status it gets again moves the revision
            if self._journaled:
                self._persist(connector_key(connector), None)

    def put_connector_safe(self, connector: str, status: Status) -> bool:
        """Connect's ``putSafe``: skip the write when another worker has written since, in a newer
        generation (a worker letting go must not overwrite the new owner's news)."""
        if not _may_overwrite(self._connectors.get(connector), status):
            return False
        self.put_connector(connector, status)
        return True

    def put_task_safe(self, connector: str, task: int, status: Status) -> bool:
        if not _may_overwrite(self._tasks.get(connector, {}).get(task), status):
            return False
        self.put_task(connector, task, status)
        return True

    # ---- active topics ----------------------------------------------------------------------

    def has_topic(self, connector: str, topic: str) -> bool:
        """The per-record check of the task loops: one dict lookup when already recorded."""
        topics = self._topics.get(connector)
        return topics is not None and topic in topics

    def put_topic(self, status: TopicStatus) -> None:
        self._topics.setdefault(status.connector, {})[status.topic] = status
        if self._journaled:
            self._persist_topic(status.connector, status.topic, status)

    def topics(self, connector: str) -> list[str]:
        return sorted(self._topics.get(connector, {}))

    def reset_topics(self, connector: str) -> None:
        """Forget the connector's active topics (tombstones): tasks record them again on next use."""
        for topic in list(self._topics.pop(connector, {})):
            if self._journaled:
                self._persist_topic(connector, topic, None)

    def _persist_topic(self, connector: str, topic: str, status: TopicStatus | None) -> None:
        return None

    def apply_record(self, key: str, value: bytes | None) -> None:
        """Apply a stored record (journal replay, or read back from the status topic); None removes."""
        if key.startswith("status-topic-"):
            self._apply_topic(key, value)
            return
        status = None if value is None else Status.from_json(record_json.loads(value))
        if key.startswith("status-connector-"):
            name = key.removeprefix("status-connector-")
            self._changed(name)
            if status is None:  # Connect: the connector's tombstone removes its tasks too
                self._connectors.pop(name, None)
                self._tasks.pop(name, None)
                del self._revisions[name]
            elif not _stale_release(self._connectors.get(name), status):
                self._connectors[name] = status
        elif key.startswith("status-task-"):
            name, _, number = key.removeprefix("status-task-").rpartition("-")
            if status is None:
                self._tasks.get(name, {}).pop(int(number), None)
            else:
                tasks = self._tasks.setdefault(name, {})
                if not _stale_release(tasks.get(int(number)), status):
                    tasks[int(number)] = status
            self._changed(name)

    def _apply_topic(self, key: str, value: bytes | None) -> None:
        topic, sep, connector = key.removeprefix("status-topic-").rpartition(":connector-")
        if not sep:
            return
        if value is None:
            self._topics.get(connector, {}).pop(topic, None)
        else:
            self._topics.setdefault(connector, {})[topic] = TopicStatus.from_json(record_json.loads(value))

    def connector(self, connector: str) -> Status | None:
        return self._connectors.get(connector)

    def tasks(self, connector: str) -> dict[int, Status]:
        return dict(sorted(self._tasks.get(connector, {}).items()))

    def connector_statuses(self) -> list[Status]:
        """Every connector's status (metrics scrapes count them by state)."""
        return list(self._connectors.values())

    def connector_names(self) -> list[str]:
        """Every connector with a status or a task status (metrics scrapes label by name)."""
        return sorted(self._connectors.keys() | self._tasks.keys())

    def task_statuses(self) -> list[Status]:
        """Every task's status, all connectors together."""
        return [status for tasks in self._tasks.values() for status in tasks.values()]

    def _persist(self, key: str, status: Status | None) -> None:
        return None


class FileStatusStore(MemoryStatusStore):
    """Statuses journaled to a file, so the last known status is readable after a restart; the file
    is compacted to one record per live status (``engine.journal.compaction``)."""

    _journaled = True

    def __init__(self, path: str | os.PathLike[str], *, floor: int = DEFAULT_FLOOR) -> None:
        super().__init__()
        self.file = KeyedJournal(path, self._live, fsync=False, floor=floor)

    async def open(self) -> None:
        await self.file.open(self.apply_record)

    async def close(self) -> None:
        await self.file.close()

    def _live(self) -> list[tuple[str, bytes]]:
        records = [(connector_key(c), _encode(s)) for c, s in self._connectors.items()]
        records += [
            (task_key(c, n), _encode(s)) for c, tasks in self._tasks.items() for n, s in tasks.items()
        ]
        records += [
            (topic_key(c, t), _encode(s)) for c, topics in self._topics.items() for t, s in topics.items()
        ]
        return records

    def _persist(self, key: str, status: Status | None) -> None:
        self.file.append([(key, None if status is None else _encode(status))])

    def _persist_topic(self, connector: str, topic: str, status: TopicStatus | None) -> None:
        self.file.append([(topic_key(connector, topic), None if status is None else _encode(status))])


def _encode(status: Status | TopicStatus) -> bytes:
    return json.dumps(status.to_json()).encode()
