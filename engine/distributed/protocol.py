"""What workers tell each other through the group protocol: join metadata and assignments.

Both travel as JSON in the consumer protocol's ``user_data`` (the broker never reads them), so a
worker's identity, REST URL, config offset and owned work reach the leader at every join, and the
leader's plan reaches every member at every sync.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

PROTOCOL_VERSION = 1

TaskId = tuple[str, int]


@dataclass(frozen=True, slots=True)
class Work:
    """Connectors (or pending cleanups, which ride on the connector's slot) and tasks."""

    connectors: frozenset[str] = frozenset()
    tasks: frozenset[TaskId] = frozenset()

    @classmethod
    def of(cls, connectors: Iterable[str] = (), tasks: Iterable[TaskId] = ()) -> Work:
        return cls(frozenset(connectors), frozenset(tasks))

    def __bool__(self) -> bool:
        return bool(self.connectors or self.tasks)

    def __or__(self, other: Work) -> Work:
        return Work(self.connectors | other.connectors, self.tasks | other.tasks)

    def __sub__(self, other: Work) -> Work:
        return Work(self.connectors - other.connectors, self.tasks - other.tasks)

    def __and__(self, other: Work) -> Work:
        return Work(self.connectors & other.connectors, self.tasks & other.tasks)

    @property
    def size(self) -> int:
        return len(self.connectors) + len(self.tasks)

    def to_json(self) -> dict[str, Any]:
        return {"connectors": sorted(self.connectors), "tasks": sorted([c, n] for c, n in self.tasks)}

    @classmethod
    def from_json(cls, body: Mapping[str, Any] | None) -> Work:
        if not body:
            return cls()
        return cls(
            frozenset(str(c) for c in body.get("connectors", ())),
            frozenset((str(c), int(n)) for c, n in body.get("tasks", ())),
        )


@dataclass(frozen=True, slots=True)
class Held:
    """A departed worker's work, kept unassigned until ``deadline_ms`` (``scheduled.rebalance.max.delay.ms``)."""

    work: Work
    deadline_ms: int


@dataclass(frozen=True, slots=True)
class ClusterView:
    """Who owns what after a rebalance, and what waits for a departed worker; shared so a new
    leader knows what the old one knew."""

    generation: int = -1
    owners: Mapping[str, Work] = field(default_factory=dict)
    held: Mapping[str, Held] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "generation": self.generation,
            "owners": {w: work.to_json() for w, work in self.owners.items()},
            "held": {
                w: {"work": h.work.to_json(), "deadline_ms": h.deadline_ms} for w, h in self.held.items()
            },
        }

    @classmethod
    def from_json(cls, body: Mapping[str, Any] | None) -> ClusterView:
        if not body:
            return cls()
        return cls(
            int(body.get("generation", -1)),
            {str(w): Work.from_json(v) for w, v in body.get("owners", {}).items()},
            {
                str(w): Held(Work.from_json(v.get("work")), int(v.get("deadline_ms", 0)))
                for w, v in body.get("held", {}).items()
            },
        )


@dataclass(frozen=True, slots=True)
class JoinMetadata:
    """A member's word at join time."""

    worker_id: str
    url: str
    config_offset: int  # one past the last config record this worker has read
    owned: Work = Work()
    deleting: frozenset[str] = frozenset()  # deletions still running here: nobody else may start them
    view: ClusterView = ClusterView()

    def encode(self) -> bytes:
        return orjson.dumps(
            {
                "version": PROTOCOL_VERSION,
                "worker_id": self.worker_id,
                "url": self.url,
                "config_offset": self.config_offset,
                "owned": self.owned.to_json(),
                "deleting": sorted(self.deleting),
                "view": self.view.to_json(),
            }
        )

    @classmethod
    def decode(cls, raw: bytes) -> JoinMetadata:
        body = orjson.loads(raw)
        return cls(
            str(body["worker_id"]),
            str(body.get("url", "")),
            int(body.get("config_offset", 0)),
            Work.from_json(body.get("owned")),
            frozenset(body.get("deleting", ())),
            ClusterView.from_json(body.get("view")),
        )


@dataclass(frozen=True, slots=True)
class Assignment:
    """The leader's plan for one member.

    ``assigned`` is everything the member may run from now on; ``revoked`` is what the leader
    took away to move elsewhere: the member stops it and rejoins, and only then is it handed on
    (incremental cooperative rebalancing: no unit of work ever runs on two workers at once).
    """

    leader: str
    leader_url: str
    config_offset: int
    assigned: Work
    revoked: Work = Work()
    urls: Mapping[str, str] = field(default_factory=dict)
    rejoin_after_ms: int | None = None  # held work's deadline: the leader rebalances again then
    view: ClusterView = ClusterView()
    error: str | None = None

    def encode(self) -> bytes:
        return orjson.dumps(
            {
                "version": PROTOCOL_VERSION,
                "leader": self.leader,
                "leader_url": self.leader_url,
                "config_offset": self.config_offset,
                "assigned": self.assigned.to_json(),
                "revoked": self.revoked.to_json(),
                "urls": dict(self.urls),
                "rejoin_after_ms": self.rejoin_after_ms,
                "view": self.view.to_json(),
                "error": self.error,
            }
        )

    @classmethod
    def decode(cls, raw: bytes) -> Assignment:
        body = orjson.loads(raw)
        delay = body.get("rejoin_after_ms")
        return cls(
            str(body["leader"]),
            str(body.get("leader_url", "")),
            int(body.get("config_offset", 0)),
            Work.from_json(body.get("assigned")),
            Work.from_json(body.get("revoked")),
            {str(k): str(v) for k, v in body.get("urls", {}).items()},
            None if delay is None else int(delay),
            ClusterView.from_json(body.get("view")),
            body.get("error"),
        )
