"""What crosses the group protocol: join metadata and assignments, as bytes and back."""

from __future__ import annotations

from engine.distributed.protocol import (
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
