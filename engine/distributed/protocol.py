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
        return {"connectors": sorted(self.connectors), "tasks": sorted(self.tasks)}  # tuples: JSON arrays

    @classmethod
    def from_json(cls, body: Mapping[str, Any] | None) -> Work:
        if not body:
            return cls()
        return cls(
            frozenset(map(str, body.get("connectors", ()))),
            frozenset([(str(c), int(n)) for c, n in body.get("tasks", ())]),
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
        return cls.from_body(orjson.loads(raw))

    @classmethod
    def from_body(cls, body: Mapping[str, Any], *, view: bool = True) -> JoinMetadata:
        """``view=False`` leaves the view out (``ClusterView()``): see ``decode_members``."""
        return cls(
            str(body["worker_id"]),
            str(body.get("url", "")),
            int(body.get("config_offset", 0)),
            Work.from_json(body.get("owned")),
            frozenset(body.get("deleting", ())),
            ClusterView.from_json(body.get("view")) if view else ClusterView(),
        )


def decode_members(raws: Mapping[str, bytes]) -> tuple[dict[str, JoinMetadata], dict[str, Exception]]:
    """Every member's join metadata, and why a member's could not be read.

    Each member carries the whole cluster's view (who owns what), and the leader plans from only the
    newest (``planner._latest_view``): that one is built, the others' are left out. With thousands of
    connectors, building each member's view was most of a round's work on the leader."""
    bodies: dict[str, Mapping[str, Any]] = {}
    failed: dict[str, Exception] = {}
    for member, raw in raws.items():
        try:
            body = orjson.loads(raw)
        except ValueError as exc:
            failed[member] = exc
            continue
        if isinstance(body, dict):
            bodies[member] = body
        else:
            failed[member] = TypeError(f"join metadata is a JSON {type(body).__name__}, not an object")

    def generation(member: str) -> int:
        view = bodies[member].get("view")
        found = view.get("generation", -1) if isinstance(view, dict) else -1
        return found if isinstance(found, int) else -1

    decoded: dict[str, JoinMetadata] = {}
    viewed = False
    for member in sorted(bodies, key=generation, reverse=True):  # the newest readable view is built
        try:
            decoded[member] = JoinMetadata.from_body(bodies[member], view=not viewed)
            viewed = True
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            failed[member] = exc
    return {m: decoded[m] for m in raws if m in decoded}, failed


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

    def encode(self, view: Mapping[str, Any] | None = None) -> bytes:
        """``view``: this assignment's view already as JSON (``encode_assignments`` shares one)."""
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
                "view": self.view.to_json() if view is None else view,
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


def encode_assignments(plans: Mapping[str, Assignment]) -> dict[str, bytes]:
    """Each member's assignment; the view a plan gives every member (the whole cluster's ownership) is
    written as JSON once, not once per member."""
    views: dict[int, dict[str, Any]] = {}
    encoded: dict[str, bytes] = {}
    for member, assignment in plans.items():
        view = views.get(id(assignment.view))
        if view is None:
            view = views[id(assignment.view)] = assignment.view.to_json()
        encoded[member] = assignment.encode(view)
    return encoded
