"""What crosses the group protocol: join metadata and assignments, as bytes and back."""

from __future__ import annotations

import dataclasses
import zlib

import pytest

from engine.distributed.planner import ClusterWork, plan
from engine.distributed.protocol import (
    COMPACT_VERSION,
    PROTOCOL_VERSION,
    Assignment,
    ClusterView,
    Held,
    JoinMetadata,
    Work,
    decode_members,
    encode_assignments,
)

OLD = ClusterView(3, {"w1": Work.of(["a"], [("a", 0)])})
NEW = ClusterView(
    4,
    {"w1": Work.of(["a"], [("a", 0), ("b", 1)]), "w2": Work.of(["b"], [("b", 0)])},
    {"w3": Held(Work.of(["c"]), 9_000)},
)


def _meta(worker: str, view: ClusterView) -> JoinMetadata:
    return JoinMetadata(
        worker, f"http://{worker}", 12, NEW.owners.get(worker, Work()), frozenset({"gone"}), view
    )


def test_work_and_metadata_round_trip() -> None:
    meta = _meta("w1", NEW)
    assert JoinMetadata.decode(meta.encode()) == meta
    assert Work.from_json(Work.of(["x"], [("x", 10), ("x", 9)]).to_json()) == Work.of(
        ["x"], [("x", 9), ("x", 10)]
    )
    assert Work.of(["x"], [("x", 10), ("x", 9)]).to_json() == {
        "connectors": ["x"],
        "tasks": [("x", 9), ("x", 10)],
    }


def test_decode_members_builds_only_the_newest_view() -> None:
    raws = {"m1": _meta("w1", OLD).encode(), "m2": _meta("w2", NEW).encode(), "m3": _meta("w3", OLD).encode()}
    decoded, failed = decode_members(raws)
    assert failed == {}
    assert list(decoded) == ["m1", "m2", "m3"]  # the members' order is kept
    assert decoded["m2"] == _meta("w2", NEW)
    assert decoded["m1"] == _meta("w1", ClusterView())  # everything but the view it no longer needs
    assert decoded["m3"].view == ClusterView()


def test_decode_members_names_what_it_could_not_read() -> None:
    raws = {"good": _meta("w1", NEW).encode(), "text": b"not json", "list": b"[1]", "no-id": b'{"url": "x"}'}
    decoded, failed = decode_members(raws)
    assert list(decoded) == ["good"]
    assert decoded["good"].view == NEW
    assert set(failed) == {"text", "list", "no-id"}
    assert isinstance(failed["list"], TypeError)
    assert isinstance(failed["no-id"], KeyError)


def test_the_view_survives_when_the_newest_member_is_unreadable() -> None:
    broken = b'{"worker_id": "w2", "view": {"generation": 9, "owners": {"w2": {"tasks": [["b", "x"]]}}}}'
    decoded, failed = decode_members({"m1": _meta("w1", NEW).encode(), "m2": broken})
    assert set(failed) == {"m2"}
    assert decoded["m1"].view == NEW


def test_assignments_share_one_view_and_read_back_whole() -> None:
    plans = {
        m: Assignment(
            "w1", "http://w1", 40, Work.of([m]), Work.of([], [("z", 0)]), {"w1": "http://w1"}, 500, NEW
        )
        for m in ("m1", "m2")
    }
    encoded = encode_assignments(plans)
    assert {m: Assignment.decode(raw) for m, raw in encoded.items()} == plans
    assert encoded["m1"] == plans["m1"].encode()


def test_the_compact_encoding_round_trips_and_groups_work_by_connector() -> None:
    odd = Work.of(["connectors", "x"], [("tasks", 0), ("x", 10), ("x", 9), ("connectors", 1)])
    assert odd.to_json(COMPACT_VERSION) == {"connectors": [-1, 1], "tasks": [0], "x": [-1, 9, 10]}
    assert Work.from_json(odd.to_json(COMPACT_VERSION), COMPACT_VERSION) == odd
    for version in (PROTOCOL_VERSION, COMPACT_VERSION):
        meta = JoinMetadata("w1", "http://w1", 12, odd, frozenset({"gone"}), NEW)
        assert JoinMetadata.decode(meta.encode(version)) == meta
        plan = Assignment("w1", "http://w1", 40, odd, Work.of(["z"]), {"w1": "http://w1"}, 500, NEW, None, 9)
        assert Assignment.decode(plan.encode(version)) == plan
        without_view = Assignment("w1", "http://w1", 40, odd)
        assert Assignment.decode(without_view.encode(version)) == without_view
    assert JoinMetadata("w1", "u", 1).encode(PROTOCOL_VERSION).startswith(b"{")
    assert JoinMetadata("w1", "u", 1).encode(COMPACT_VERSION)[:1] == bytes([COMPACT_VERSION])


def test_metadata_an_older_release_wrote_is_read() -> None:
    older = (
        b'{"version":1,"worker_id":"w2","url":"http://w2","config_offset":5,'
        b'"owned":{"connectors":["a"],"tasks":[["a",0]]},"deleting":[],'
        b'"view":{"generation":3,"owners":{"w2":{"connectors":["a"],"tasks":[["a",0]]}},"held":{}}}'
    )
    decoded, failed = decode_members({"m": older})
    assert failed == {}
    assert decoded["m"] == JoinMetadata(
        "w2",
        "http://w2",
        5,
        Work.of(["a"], [("a", 0)]),
        frozenset(),
        ClusterView(3, {"w2": Work.of(["a"], [("a", 0)])}),
    )


def _framed(head: bytes, tail: bytes = b"") -> bytes:
    """Version 2's frame: the version byte, the rest's length, the rest, then the view."""
    return bytes([COMPACT_VERSION]) + len(head).to_bytes(4, "big") + head + tail


def test_compressed_metadata_is_read_within_bounds() -> None:
    bomb = _framed(zlib.compress(b"{" + b" " * (80 * 1024 * 1024) + b"}"))
    rest = zlib.compress(b'{"worker_id": "w9", "view_generation": 4}')
    view_bomb = _framed(rest, zlib.compress(b"{" + b" " * (80 * 1024 * 1024) + b"}"))
    cut = JoinMetadata("w1", "u", 1).encode()[:-4]
    decoded, failed = decode_members(
        {
            "bomb": bomb,
            "view-bomb": view_bomb,
            "junk": _framed(b"not zlib"),
            "cut": cut,
            "array": _framed(zlib.compress(b"[1]")),
        }
    )
    assert decoded == {}
    assert "past" in str(failed["bomb"])
    assert "past" in str(failed["view-bomb"])
    assert isinstance(failed["junk"], ValueError)
    assert "cut short" in str(failed["cut"])
    assert isinstance(failed["array"], TypeError)
    with pytest.raises(ValueError, match="decompresses past"):
        Assignment.decode(bomb)


def test_the_leader_reads_only_the_newest_view() -> None:
    newest = _meta("w2", NEW).encode()
    older = JoinMetadata("w1", "http://w1", 12, Work(), frozenset(), OLD).encode()
    head = int.from_bytes(older[1:5], "big")
    spoiled = older[: 5 + head] + b"not zlib: never read"  # an older view, damaged
    decoded, failed = decode_members({"m1": spoiled, "m2": newest})
    assert failed == {}
    assert decoded["m2"].view == NEW
    assert decoded["m1"] == JoinMetadata("w1", "http://w1", 12)


def _group_record_bytes(connectors: int, workers: int, version: int) -> int:
    """What the broker stores for one generation of the group: every member's join metadata and
    assignment, after a plan over ``connectors`` x 2 tasks (names as users write them)."""
    names = [f"orders-sink-eu-west-{n:05d}" for n in range(connectors)]
    cluster = ClusterWork(frozenset(names), frozenset((c, t) for c in names for t in (0, 1)))
    members = {
        f"member-{w}": JoinMetadata(f"10.0.0.{w}:8083", f"http://10.0.0.{w}:8083", 1) for w in range(workers)
    }
    plans = plan(members, cluster, leader="member-0", generation=1, config_offset=1, now_ms=0, delay_ms=0)
    if version == PROTOCOL_VERSION:  # what the older release sent: the view to every member
        plans = {m: dataclasses.replace(a, view=plans["member-0"].view) for m, a in plans.items()}
    again = {
        m: JoinMetadata(meta.worker_id, meta.url, 1, plans[m].assigned, frozenset(), plans[m].view)
        for m, meta in members.items()
    }
    assignments = encode_assignments(plans, version)
    return sum(len(again[m].encode(version)) + len(assignments[m]) for m in members)


@pytest.mark.parametrize("workers", [3, 50])
def test_ten_thousand_connectors_fit_the_brokers_default_message_size(workers: int) -> None:
    limit = 1024 * 1024  # message.max.bytes' default
    assert _group_record_bytes(10_000, workers, PROTOCOL_VERSION) > limit  # SyncGroup failed every round
    assert _group_record_bytes(10_000, workers, COMPACT_VERSION) < limit / 2


def test_a_keepers_view_goes_only_in_the_encoding_the_group_speaks() -> None:
    from engine.distributed.member import GroupMember, _ConnectAssignor

    member = GroupMember(
        "127.0.0.1:9",
        "g",
        "cfg",
        client_id="c",
        join_metadata=lambda: _meta("w2", NEW),
        planner=lambda *_: {},
        on_assignment=lambda *_: None,
    )

    def sent(version: int) -> JoinMetadata:
        return JoinMetadata.decode(bytes(_ConnectAssignor(member, version).metadata(["cfg"]).user_data))

    assert sent(COMPACT_VERSION).view == sent(PROTOCOL_VERSION).view == NEW  # before a first round
    member.protocol_version = COMPACT_VERSION
    assert sent(COMPACT_VERSION).view == NEW
    assert sent(PROTOCOL_VERSION) == _meta("w2", ClusterView())
