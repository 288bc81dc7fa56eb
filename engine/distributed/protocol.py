"""What workers tell each other through the group protocol: join metadata and assignments.

Both travel in the consumer protocol's ``user_data`` (the broker never reads them), so a worker's
identity, REST URL, config offset and owned work reach the leader at every join, and the leader's
plan reaches every member at every sync.

Two encodings, one per group protocol (``member.py`` offers only the second; the first is 0.1.0's,
kept to read what such a worker wrote and for the test that plays one):

- version 1 (``connect-engine-sessioned``): JSON, work as ``{"connectors": [...], "tasks": [[c, n]]}``;
- version 2 (``connect-engine-compact``): a version byte, the rest's length, the rest as
  zlib-compressed JSON with work as ``{connector: [-1, 0, 1]}`` (``-1`` is the connector itself, the
  others its tasks), then the view compressed apart (the leader reads only the newest).

The broker keeps every member's join metadata and assignment in one record of
``__consumer_offsets``, which must fit its ``message.max.bytes`` (1 MB by default): what one
member carries is its own work, and the whole cluster's view only on the few members the plan
makes its keepers (``planner.VIEW_KEEPERS``).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

PROTOCOL_VERSION = 1  # JSON, the first group protocol's encoding
COMPACT_VERSION = 2  # a version byte, then zlib-compressed JSON with work grouped by connector
_COMPACT_PREFIX = bytes([COMPACT_VERSION])
_MAX_DECODED_BYTES = 64 * 1024 * 1024  # a member's metadata, decompressed: far above any real cluster
_CONNECTOR_UNIT = -1  # in a compact work map, the connector itself among its task numbers

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

    def to_json(self, version: int = PROTOCOL_VERSION) -> dict[str, Any]:
        if version == PROTOCOL_VERSION:
            return {"connectors": sorted(self.connectors), "tasks": sorted(self.tasks)}  # tuples: arrays
        units: dict[str, list[int]] = {name: [_CONNECTOR_UNIT] for name in self.connectors}
        for name, number in self.tasks:
            units.setdefault(name, []).append(number)
        return {name: sorted(units[name]) for name in sorted(units)}

    @classmethod
    def from_json(cls, body: Mapping[str, Any] | None, version: int = PROTOCOL_VERSION) -> Work:
        if not body:
            return cls()
        if version == PROTOCOL_VERSION:
            return cls(
                frozenset(map(str, body.get("connectors", ()))),
                frozenset([(str(c), int(n)) for c, n in body.get("tasks", ())]),
            )
        connectors: list[str] = []
        tasks: list[TaskId] = []
        for name, numbers in body.items():
            for number in numbers:
                if number == _CONNECTOR_UNIT:
                    connectors.append(str(name))
                else:
                    tasks.append((str(name), int(number)))
        return cls(frozenset(connectors), frozenset(tasks))


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

    def __bool__(self) -> bool:
        """Whether this is a view at all: a member the plan did not make a keeper has none."""
        return self.generation >= 0

    def to_json(self, version: int = PROTOCOL_VERSION) -> dict[str, Any] | None:
        """Version 2 lists each connector once with its units' owners, ``{name: [unit, owner, ...]}``
        (an owner is its index in ``workers``): the view is most of what the keepers carry."""
        if version == PROTOCOL_VERSION:
            owners: dict[str, Any] = {w: work.to_json(version) for w, work in self.owners.items()}
        elif not self:
            return None
        else:
            workers = sorted(self.owners)
            units: dict[str, list[int]] = {}
            for index, worker in enumerate(workers):
                work = self.owners[worker]
                for name in work.connectors:
                    units.setdefault(name, []).extend((_CONNECTOR_UNIT, index))
                for name, number in work.tasks:
                    units.setdefault(name, []).extend((number, index))
            owners = {"workers": workers, "units": {name: units[name] for name in sorted(units)}}
        return {
            "generation": self.generation,
            "owners": owners,
            "held": {
                w: {"work": h.work.to_json(version), "deadline_ms": h.deadline_ms}
                for w, h in self.held.items()
            },
        }

    @classmethod
    def from_json(cls, body: Mapping[str, Any] | None, version: int = PROTOCOL_VERSION) -> ClusterView:
        if not body:
            return cls()
        found = body.get("owners", {})
        if version == PROTOCOL_VERSION:
            owners = {str(w): Work.from_json(v, version) for w, v in found.items()}
        else:
            workers = [str(w) for w in found.get("workers", ())]
            connectors: dict[str, list[str]] = {w: [] for w in workers}
            tasks: dict[str, list[TaskId]] = {w: [] for w in workers}
            for name, pairs in found.get("units", {}).items():
                for at in range(0, len(pairs) - 1, 2):
                    unit, worker = int(pairs[at]), workers[pairs[at + 1]]
                    if unit == _CONNECTOR_UNIT:
                        connectors[worker].append(str(name))
                    else:
                        tasks[worker].append((str(name), unit))
            owners = {w: Work(frozenset(connectors[w]), frozenset(tasks[w])) for w in workers}
        return cls(
            int(body.get("generation", -1)),
            owners,
            {
                str(w): Held(Work.from_json(v.get("work"), version), int(v.get("deadline_ms", 0)))
                for w, v in body.get("held", {}).items()
            },
        )


def pack(body: Mapping[str, Any], version: int) -> bytes:
    """``body`` as the bytes of ``version``'s encoding.

    Version 2 compresses the view apart from the rest (a 4-byte length, the rest, then the view):
    the leader reads every member's rest but only the newest view (``decode_members``)."""
    if version == PROTOCOL_VERSION:
        return orjson.dumps(body)
    rest = {k: v for k, v in body.items() if k != "view"}
    view = body.get("view")
    rest["view_generation"] = view.get("generation", -1) if isinstance(view, dict) else -1
    head = zlib.compress(orjson.dumps(rest))
    tail = zlib.compress(orjson.dumps(view)) if view else b""
    return _COMPACT_PREFIX + len(head).to_bytes(4, "big") + head + tail


def _decompress(raw: bytes) -> bytes:
    inflater = zlib.decompressobj()
    try:
        out = inflater.decompress(raw, _MAX_DECODED_BYTES)
    except zlib.error as exc:
        raise ValueError(f"group protocol data is not zlib-compressed: {exc}") from exc
    if inflater.unconsumed_tail:
        raise ValueError(f"group protocol data decompresses past {_MAX_DECODED_BYTES} bytes")
    if not inflater.eof or inflater.unused_data:
        raise ValueError("group protocol data is cut short or runs on")
    return out


def _json_object(raw: bytes) -> dict[str, Any]:
    body = orjson.loads(raw)
    if not isinstance(body, dict):
        raise TypeError(f"group protocol data is a JSON {type(body).__name__}, not an object")
    return body


def unpack(raw: bytes, *, view: bool = True) -> tuple[dict[str, Any], int]:
    """The body and its encoding's version, told apart by the first byte (``{`` for version 1);
    ``view=False`` leaves a version 2 body's view unread (its ``view_generation`` says how new).

    Raises ``ValueError`` for bytes of neither, and for compressed bytes that would decompress past
    64 MiB (a bounded read: a member's metadata is never trusted to be small)."""
    if raw[:1] != _COMPACT_PREFIX:
        return _json_object(raw), PROTOCOL_VERSION
    size = int.from_bytes(raw[1:5], "big")
    if len(raw) < 5 + size:
        raise ValueError("group protocol data is cut short or runs on")
    body = _json_object(_decompress(raw[5 : 5 + size]))
    tail = raw[5 + size :]
    if view and tail:
        body["view"] = _json_object(_decompress(tail))
    return body, COMPACT_VERSION


@dataclass(frozen=True, slots=True)
class JoinMetadata:
    """A member's word at join time."""

    worker_id: str
    url: str
    config_offset: int  # one past the last config record this worker has read
    owned: Work = Work()
    deleting: frozenset[str] = frozenset()  # deletions still running here: nobody else may start them
    view: ClusterView = ClusterView()  # only a keeper's (``planner.VIEW_KEEPERS``)

    def encode(self, version: int = COMPACT_VERSION) -> bytes:
        return pack(
            {
                "version": version,
                "worker_id": self.worker_id,
                "url": self.url,
                "config_offset": self.config_offset,
                "owned": self.owned.to_json(version),
                "deleting": sorted(self.deleting),
                "view": self.view.to_json(version),
            },
            version,
        )

    @classmethod
    def decode(cls, raw: bytes) -> JoinMetadata:
        return cls.from_body(*unpack(raw))

    @classmethod
    def from_body(
        cls, body: Mapping[str, Any], version: int = PROTOCOL_VERSION, *, view: bool = True
    ) -> JoinMetadata:
        """``view=False`` leaves the view out (``ClusterView()``): see ``decode_members``."""
        return cls(
            str(body["worker_id"]),
            str(body.get("url", "")),
            int(body.get("config_offset", 0)),
            Work.from_json(body.get("owned"), version),
            frozenset(body.get("deleting", ())),
            ClusterView.from_json(body.get("view"), version) if view else ClusterView(),
        )


def decode_members(raws: Mapping[str, bytes]) -> tuple[dict[str, JoinMetadata], dict[str, Exception]]:
    """Every member's join metadata, and why a member's could not be read.

    Keepers carry the whole cluster's view (who owns what), and the leader plans from only the
    newest (``planner._latest_view``): that one is built, the others' are left out. With thousands of
    connectors, building each member's view was most of a round's work on the leader."""
    bodies: dict[str, tuple[dict[str, Any], int]] = {}
    failed: dict[str, Exception] = {}
    for member, raw in raws.items():
        try:
            bodies[member] = unpack(raw, view=False)
        except (ValueError, TypeError) as exc:
            failed[member] = exc

    def generation(member: str) -> int:
        body, version = bodies[member]
        if version == PROTOCOL_VERSION:
            view = body.get("view")
            found = view.get("generation", -1) if isinstance(view, dict) else -1
        else:
            found = body.get("view_generation", -1)
        return found if isinstance(found, int) else -1

    decoded: dict[str, JoinMetadata] = {}
    viewed = False
    for member in sorted(bodies, key=generation, reverse=True):  # the newest readable view is built
        try:
            body, version = bodies[member]
            if not viewed and version != PROTOCOL_VERSION and generation(member) >= 0:
                body, version = unpack(raws[member])  # its view too
            decoded[member] = JoinMetadata.from_body(body, version, view=not viewed)
            viewed = viewed or generation(member) >= 0 or version == PROTOCOL_VERSION
        except (ValueError, KeyError, TypeError, AttributeError, IndexError) as exc:
            failed[member] = exc
    return {m: decoded[m] for m in raws if m in decoded}, failed


@dataclass(frozen=True, slots=True)
class Assignment:
    """The leader's plan for one member.

    ``assigned`` is everything the member may run from now on; ``revoked`` is what the leader
    took away to move elsewhere: the member stops it and rejoins, and only then is it handed on
    (incremental cooperative rebalancing: no unit of work ever runs on two workers at once).
    ``cluster_size`` counts the connectors and tasks of the whole cluster (what a round costs).
    """

    leader: str
    leader_url: str
    config_offset: int
    assigned: Work
    revoked: Work = Work()
    urls: Mapping[str, str] = field(default_factory=dict)
    rejoin_after_ms: int | None = None  # held work's deadline: the leader rebalances again then
    view: ClusterView = ClusterView()  # for the plan's keepers only
    error: str | None = None
    cluster_size: int = 0

    def encode(self, version: int = COMPACT_VERSION, view: Mapping[str, Any] | None = None) -> bytes:
        """``view``: this assignment's view already as JSON (``encode_assignments`` shares one)."""
        return pack(
            {
                "version": version,
                "leader": self.leader,
                "leader_url": self.leader_url,
                "config_offset": self.config_offset,
                "assigned": self.assigned.to_json(version),
                "revoked": self.revoked.to_json(version),
                "urls": dict(self.urls),
                "rejoin_after_ms": self.rejoin_after_ms,
                "view": self.view.to_json(version) if view is None else view,
                "error": self.error,
                "cluster_size": self.cluster_size,
            },
            version,
        )

    @classmethod
    def decode(cls, raw: bytes) -> Assignment:
        body, version = unpack(raw)
        delay = body.get("rejoin_after_ms")
        return cls(
            str(body["leader"]),
            str(body.get("leader_url", "")),
            int(body.get("config_offset", 0)),
            Work.from_json(body.get("assigned"), version),
            Work.from_json(body.get("revoked"), version),
            {str(k): str(v) for k, v in body.get("urls", {}).items()},
            None if delay is None else int(delay),
            ClusterView.from_json(body.get("view"), version),
            body.get("error"),
            int(body.get("cluster_size", 0)),
        )


def encode_assignments(plans: Mapping[str, Assignment], version: int = COMPACT_VERSION) -> dict[str, bytes]:
    """Each member's assignment; a view the plan gives several members is written as JSON once."""
    views: dict[int, dict[str, Any] | None] = {}
    encoded: dict[str, bytes] = {}
    for member, assignment in plans.items():
        key = id(assignment.view)
        if key not in views:
            views[key] = assignment.view.to_json(version)
        encoded[member] = assignment.encode(version, views[key])
    return encoded
