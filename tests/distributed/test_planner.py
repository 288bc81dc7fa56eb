"""The leader's plan: balanced, sticky, two-phase moves, held work of departed workers, cleanups."""

from __future__ import annotations

import random

from engine.distributed.planner import ClusterWork, plan
from engine.distributed.protocol import Assignment, ClusterView, Held, JoinMetadata, Work

NOTHING = Work()
NO_VIEW = ClusterView()


def meta(
    worker: str, owned: Work = NOTHING, *, view: ClusterView = NO_VIEW, deleting: frozenset[str] = frozenset()
) -> JoinMetadata:
    return JoinMetadata(worker, f"http://{worker}", 10, owned, deleting, view)


def work(connectors: int, tasks_each: int) -> ClusterWork:
    names = [f"c{i}" for i in range(connectors)]
    return ClusterWork(frozenset(names), frozenset((c, n) for c in names for n in range(tasks_each)))


def run(
    members: dict[str, JoinMetadata],
    cluster: ClusterWork,
    *,
    now_ms: int = 1_000_000,
    delay_ms: int = 0,
    leader: str = "m1",
) -> dict[str, Assignment]:
    return plan(
        members, cluster, leader=leader, generation=7, config_offset=10, now_ms=now_ms, delay_ms=delay_ms
    )


def owned_by(plans: dict[str, Assignment], members: dict[str, JoinMetadata]) -> dict[str, Work]:
    return {members[m].worker_id: a.assigned for m, a in plans.items()}


def test_new_work_is_spread_evenly_without_revocations() -> None:
    members = {f"m{i}": meta(f"w{i}") for i in (1, 2, 3)}
    plans = run(members, work(6, 2))
    assert sorted(len(a.assigned.connectors) for a in plans.values()) == [2, 2, 2]
    assert sorted(len(a.assigned.tasks) for a in plans.values()) == [4, 4, 4]
    assert not any(a.revoked for a in plans.values())
    assert {a.leader for a in plans.values()} == {"w1"}
    assert plans["m2"].urls == {"w1": "http://w1", "w2": "http://w2", "w3": "http://w3"}


def test_balanced_work_stays_where_it_runs() -> None:
    first = {f"m{i}": meta(f"w{i}") for i in (1, 2, 3)}
    plans = run(first, work(6, 2))
    again = {m: meta(first[m].worker_id, plans[m].assigned, view=plans[m].view) for m in first}
    assert {m: a.assigned for m, a in run(again, work(6, 2)).items()} == {
        m: a.assigned for m, a in plans.items()
    }


def test_a_joining_worker_gets_work_in_two_phases() -> None:
    cluster = work(6, 0)
    one = Work.of(["c0", "c1", "c2"])
    two = Work.of(["c3", "c4", "c5"])
    members = {"m1": meta("w1", one), "m2": meta("w2", two), "m3": meta("w3")}
    phase1 = run(members, cluster)
    revoked = phase1["m1"].revoked | phase1["m2"].revoked
    assert revoked.size == 2  # each old worker gives up one connector...
    assert not phase1["m3"].assigned  # ...which nobody gets until it is stopped
    assert not (revoked & (phase1["m1"].assigned | phase1["m2"].assigned))
    members = {m: meta(members[m].worker_id, phase1[m].assigned, view=phase1[m].view) for m in members}
    phase2 = run(members, cluster)
    assert phase2["m3"].assigned.connectors == revoked.connectors
    assert not any(a.revoked for a in phase2.values())


def test_departed_workers_work_is_held_until_the_delay_passes() -> None:
    view = ClusterView(3, {"w1": Work.of(["c0"]), "w2": Work.of(["c1"]), "w3": Work.of(["c2"])})
    members = {"m1": meta("w1", Work.of(["c0"]), view=view), "m2": meta("w2", Work.of(["c1"]), view=view)}
    held = run(members, work(3, 0), now_ms=1_000, delay_ms=5_000)
    assert all("c2" not in a.assigned.connectors for a in held.values())
    assert held["m1"].rejoin_after_ms == 5_000
    assert held["m1"].view.held == {"w3": Held(Work.of(["c2"]), 6_000)}
    # the next round, still inside the delay, keeps holding it with the same deadline
    members = {m: meta(members[m].worker_id, held[m].assigned, view=held[m].view) for m in members}
    still = run(members, work(3, 0), now_ms=3_000, delay_ms=5_000)
    assert still["m1"].rejoin_after_ms == 3_000
    after = run(members, work(3, 0), now_ms=6_001, delay_ms=5_000)
    assert sum("c2" in a.assigned.connectors for a in after.values()) == 1
    assert after["m1"].rejoin_after_ms is None


def test_a_returning_worker_gets_its_work_back() -> None:
    view = ClusterView(
        3, {"w1": Work.of(["c0"]), "w2": Work.of(["c1"])}, {"w3": Held(Work.of(["c2"], [("c2", 0)]), 9_000)}
    )
    members = {
        "m1": meta("w1", Work.of(["c0"]), view=view),
        "m2": meta("w2", Work.of(["c1"]), view=view),
        "m9": meta("w3"),
    }
    plans = run(
        members,
        ClusterWork(frozenset({"c0", "c1", "c2"}), frozenset({("c2", 0)})),
        now_ms=2_000,
        delay_ms=5_000,
    )
    assert plans["m9"].assigned == Work.of(["c2"], [("c2", 0)])
    assert not plans["m9"].view.held


def test_without_a_delay_lost_work_moves_at_once() -> None:
    view = ClusterView(3, {"w1": Work.of(["c0"]), "w3": Work.of(["c1"])})
    members = {"m1": meta("w1", Work.of(["c0"]), view=view), "m2": meta("w2", view=view)}
    plans = run(members, work(2, 0), delay_ms=0)
    assert plans["m2"].assigned.connectors == {"c1"}


def test_a_running_deletion_stays_with_its_worker_and_orphans_find_one() -> None:
    cluster = ClusterWork(frozenset({"a", "b"}), frozenset(), cleanups=frozenset({"gone", "orphan"}))
    members = {"m1": meta("w1", Work.of(["a", "b"]), deleting=frozenset({"gone"})), "m2": meta("w2")}
    plans = run(members, cluster)
    assert "gone" in plans["m1"].assigned.connectors
    assert "orphan" in plans["m2"].assigned.connectors  # least loaded after balancing
    assert all("gone" not in a.revoked.connectors for a in plans.values())


def test_no_unit_of_work_is_ever_assigned_twice_or_while_revoked() -> None:
    rng = random.Random(7)
    workers = [f"w{i}" for i in range(5)]
    owned: dict[str, Work] = {}
    view = ClusterView()
    for round_ in range(200):
        present = rng.sample(workers, rng.randint(1, 5))
        cluster = work(rng.randint(0, 12), rng.randint(0, 3))
        members = {f"m-{w}": meta(w, owned.get(w, Work()), view=view) for w in present}
        plans = run(
            members, cluster, now_ms=round_ * 1000, delay_ms=rng.choice([0, 2500]), leader=f"m-{present[0]}"
        )
        seen = Work()
        for m, a in plans.items():
            assert not (a.assigned & seen), f"round {round_}: {m} got work someone else has"
            assert not (a.revoked & a.assigned)
            running_before = owned.get(members[m].worker_id, Work())
            others_before = Work()
            for w, mine in owned.items():
                if w != members[m].worker_id and w in present:
                    others_before = others_before | mine
            assert not (a.assigned - running_before) & others_before, "work moved without a revocation first"
            seen = seen | a.assigned
        owned = {members[m].worker_id: a.assigned for m, a in plans.items()}
        view = next(iter(plans.values())).view


def test_a_worker_id_seen_twice_gets_its_held_work_once() -> None:
    """A killed worker's old membership lingers until the broker drops it, beside its restart."""
    view = ClusterView(3, {"w1": Work.of(["c0"])}, {"w2": Held(Work.of(["c1"]), 9_000)})
    members = {"m1": meta("w1", Work.of(["c0"]), view=view), "old": meta("w2"), "new": meta("w2")}
    plans = run(members, work(2, 0), now_ms=1_000, delay_ms=5_000)
    assert sum("c1" in a.assigned.connectors for a in plans.values()) == 1


def test_the_view_goes_to_the_leader_and_two_keepers_and_survives_the_leaders_loss() -> None:
    members = {f"m{i}": meta(f"w{i}") for i in range(1, 7)}
    plans = run(members, work(12, 2), leader="m5", delay_ms=60_000)
    keepers = {m for m, a in plans.items() if a.view}
    assert keepers == {"m5", "m1", "m2"}  # the leader, then the first others by worker id
    assert all(a.view == NO_VIEW for m, a in plans.items() if m not in keepers)
    assert all(a.cluster_size == 36 for a in plans.values())
    # the leader is gone: the next leader (no keeper itself) finds the view in a keeper's metadata
    # and holds the departed leader's work for the delay instead of handing it out at once
    after = {
        m: meta(members[m].worker_id, plans[m].assigned, view=plans[m].view) for m in members if m != "m5"
    }
    again = run(after, work(12, 2), leader="m6", now_ms=1_001_000, delay_ms=60_000)
    assert again["m6"].view.held == {"w5": Held(plans["m5"].assigned, 1_061_000)}
    assert not any(a.assigned & plans["m5"].assigned for a in again.values())
