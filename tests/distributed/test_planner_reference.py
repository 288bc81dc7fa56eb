"""The planner's helpers, rewritten for 10,000 connectors x 50 members, give exactly the plans they gave:
the code before the rewrite is kept here as the reference and both run over random clusters."""

from __future__ import annotations

import random
from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Generic, TypeVar

import pytest

from engine.distributed.planner import ClusterWork, _balance, plan
from engine.distributed.protocol import Assignment, ClusterView, Held, JoinMetadata, TaskId, Work

ItemT = TypeVar("ItemT", str, TaskId)

# ---- the reference: engine/distributed/planner.py before the rewrite (quadratic, but plainly right) ----


def reference_plan(
    members: Mapping[str, JoinMetadata],
    work: ClusterWork,
    *,
    leader: str,
    generation: int,
    config_offset: int,
    now_ms: int,
    delay_ms: int,
) -> dict[str, Assignment]:
    """One assignment per member id; ``leader`` is the member id of the member planning."""
    order = sorted(members, key=lambda m: (members[m].worker_id, m))
    everything = work.all
    owned = _reference_owners(members, order, everything)
    view = _reference_view(members)
    present = {members[m].worker_id for m in order}
    held, returned = _reference_held(view, present, owned, everything, now_ms, delay_ms)
    for member in order:  # a returning worker gets back what was held for it (once, if it joined twice)
        back = returned.pop(members[member].worker_id, None)
        if back:
            owned[member] = owned[member] | back
    taken = Work()
    for w in owned.values():
        taken = taken | w
    for h in held.values():
        taken = taken | h.work
    unassigned = everything - taken
    revoked: dict[str, Work] = {m: Work() for m in order}
    connectors = reference_balance(
        {m: owned[m].connectors - work.cleanups for m in order},
        unassigned.connectors - work.cleanups,
        may_revoke=not held,
    )
    tasks = reference_balance({m: owned[m].tasks for m in order}, unassigned.tasks, may_revoke=not held)
    final: dict[str, Work] = {}
    for m in order:
        kept_cleanups = owned[m].connectors & work.cleanups
        final[m] = Work(frozenset(connectors.assigned[m]) | kept_cleanups, frozenset(tasks.assigned[m]))
        revoked[m] = Work(frozenset(connectors.revoked[m]), frozenset(tasks.revoked[m]))
    for name in sorted(unassigned.connectors & work.cleanups):  # orphaned cleanups: least loaded
        target = min(order, key=lambda m: (final[m].size, members[m].worker_id))
        final[target] = final[target] | Work.of([name])
    new_view = ClusterView(generation, {members[m].worker_id: final[m] for m in order}, held)
    urls = {members[m].worker_id: members[m].url for m in order}
    deadline = min((h.deadline_ms for h in held.values()), default=None)
    leader_meta = members[leader]
    return {
        m: Assignment(
            leader=leader_meta.worker_id,
            leader_url=leader_meta.url,
            config_offset=config_offset,
            assigned=final[m],
            revoked=revoked[m],
            urls=urls,
            rejoin_after_ms=None if deadline is None else max(0, deadline - now_ms),
            view=new_view,
        )
        for m in order
    }


def _reference_owners(
    members: Mapping[str, JoinMetadata], order: list[str], everything: Work
) -> dict[str, Work]:
    """What each member runs and may keep: owned work that still exists, plus running deletions.

    A unit claimed twice (it should not happen) stays with the first member by worker id.
    """
    claimed = Work()
    owned: dict[str, Work] = {}
    for m in order:
        meta = members[m]
        mine = Work(meta.owned.connectors | meta.deleting, meta.owned.tasks) & everything
        mine = mine - claimed
        owned[m] = mine
        claimed = claimed | mine
    return owned


def _reference_view(members: Mapping[str, JoinMetadata]) -> ClusterView:
    return max((meta.view for meta in members.values()), key=lambda v: v.generation, default=ClusterView())


def _reference_held(
    view: ClusterView,
    present: set[str],
    owned: Mapping[str, Work],
    everything: Work,
    now_ms: int,
    delay_ms: int,
) -> tuple[dict[str, Held], dict[str, Work]]:
    """Work of departed workers still waiting for them, and work of those who came back."""
    running = Work()
    for w in owned.values():
        running = running | w
    held: dict[str, Held] = {}
    returned: dict[str, Work] = {}
    departed = {**{w: Held(work, now_ms + delay_ms) for w, work in view.owners.items()}, **view.held}
    for worker, entry in departed.items():
        waiting = (entry.work & everything) - running
        if not waiting:
            continue
        if worker in present:
            returned[worker] = waiting
        elif delay_ms > 0 and entry.deadline_ms > now_ms:
            held[worker] = Held(waiting, entry.deadline_ms)
    return held, returned


@dataclass(slots=True)
class _ReferenceBalanced(Generic[ItemT]):
    assigned: dict[str, set[ItemT]]
    revoked: dict[str, set[ItemT]]


def reference_balance(
    current: Mapping[str, AbstractSet[ItemT]], unassigned: AbstractSet[ItemT], *, may_revoke: bool
) -> _ReferenceBalanced[ItemT]:
    """Each member ends within one of the others; the most loaded keep the larger shares."""
    members = list(current)
    assigned: dict[str, set[ItemT]] = {m: set(current[m]) for m in members}
    revoked: dict[str, set[ItemT]] = {m: set() for m in members}
    if not members:
        return _ReferenceBalanced(assigned, revoked)
    total = sum(len(s) for s in assigned.values()) + len(unassigned)
    floor, extra = divmod(total, len(members))
    by_load = sorted(members, key=lambda m: (-len(assigned[m]), m))
    targets = {m: floor + (1 if i < extra else 0) for i, m in enumerate(by_load)}
    if may_revoke:
        for m in members:
            excess = len(assigned[m]) - targets[m]
            if excess > 0:
                moving = sorted(assigned[m], key=repr)[-excess:]
                assigned[m].difference_update(moving)
                revoked[m].update(moving)
    for item in sorted(unassigned, key=repr):
        below = [m for m in members if len(assigned[m]) < targets[m]]
        target = min(below or members, key=lambda m: (len(assigned[m]), m))
        assigned[target].add(item)
    return _ReferenceBalanced(assigned, revoked)


# ---- random clusters ---------------------------------------------------------------------------------


def _names(rng: random.Random) -> list[str]:
    """Connector names whose repr order differs from their plain order (quotes, backslashes, accents)."""
    plain = [f"c{n}" for n in range(rng.randint(0, 40))]
    odd = ["it's", 'say "hi"', "back\\slash", "é", "Z", "a b"]
    return plain + rng.sample(odd, rng.randint(0, len(odd)))


def _subset(rng: random.Random, items: list[ItemT], share: float) -> frozenset[ItemT]:
    return frozenset(i for i in items if rng.random() < share)


def _random_round(rng: random.Random) -> tuple[dict[str, JoinMetadata], ClusterWork, str, int, int]:
    names = _names(rng)
    ghosts = [f"gone{n}" for n in range(3)]  # owned, but no longer in the config
    connectors = [n for n in names if rng.random() < 0.9]
    cleanups = [n for n in names if n not in connectors] + ghosts[: rng.randint(0, 2)]
    tasks = [(c, t) for c in connectors for t in range(rng.randint(0, 3))]
    everything_c = connectors + ghosts
    everything_t = tasks + [(g, 0) for g in ghosts]
    workers = [f"w{n}" for n in range(rng.randint(1, 7))]
    present = rng.sample(workers, rng.randint(1, len(workers)))
    now_ms = 1_000_000
    owners = {w: Work(_subset(rng, everything_c, 0.4), _subset(rng, everything_t, 0.4)) for w in workers}
    held = {
        w: Held(
            Work(_subset(rng, everything_c, 0.2), _subset(rng, everything_t, 0.2)),
            now_ms + rng.choice([-1, 5]),
        )
        for w in workers
        if rng.random() < 0.3
    }
    view = ClusterView(rng.randint(0, 5), owners if rng.random() < 0.8 else {}, held)
    members: dict[str, JoinMetadata] = {}
    for n, worker in enumerate(present):
        owned = Work(
            _subset(rng, everything_c, 0.35), _subset(rng, everything_t, 0.35)
        )  # overlaps on purpose
        deleting = _subset(rng, cleanups + ghosts, 0.3)
        member_view = view if rng.random() < 0.5 else ClusterView()
        members[f"m{n}-{worker}"] = JoinMetadata(worker, f"http://{worker}", 3, owned, deleting, member_view)
    work = ClusterWork(frozenset(connectors), frozenset(tasks), frozenset(cleanups) - frozenset(connectors))
    leader = rng.choice(sorted(members))
    return members, work, leader, now_ms, rng.choice([0, 0, 10])


def _outcome(plans: Mapping[str, Assignment], leader: str) -> tuple[object, ...]:
    """Each member's work, and the view (which the reference gave every member, the plan its keepers)."""
    view = plans[leader].view
    return (
        {m: (a.assigned, a.revoked, a.rejoin_after_ms) for m, a in plans.items()},
        dict(view.owners),
        dict(view.held),
    )


@pytest.mark.parametrize("seed", range(300))
def test_the_plan_is_the_one_the_reference_gives(seed: int) -> None:
    rng = random.Random(seed)
    members, work, leader, now_ms, delay_ms = _random_round(rng)
    new = plan(members, work, leader=leader, generation=9, config_offset=3, now_ms=now_ms, delay_ms=delay_ms)
    old = reference_plan(
        members, work, leader=leader, generation=9, config_offset=3, now_ms=now_ms, delay_ms=delay_ms
    )
    assert _outcome(new, leader) == _outcome(old, leader)


@pytest.mark.parametrize("seed", range(300))
def test_balance_is_the_reference_balance(seed: int) -> None:
    rng = random.Random(seed)
    members = [f"m{n}" for n in rng.sample(range(60), rng.randint(0, 12))]
    items: list[TaskId] = [(c, t) for c in _names(rng) for t in range(rng.randint(1, 3))]
    current = {m: set(_subset(rng, items, rng.random() * 0.6)) for m in members}
    taken = set().union(*current.values())
    unassigned = {i for i in items if i not in taken and rng.random() < 0.8}
    for may_revoke in (True, False):
        new = _balance(current, unassigned, may_revoke=may_revoke)
        old = reference_balance(current, unassigned, may_revoke=may_revoke)
        assert (new.assigned, new.revoked) == (old.assigned, old.revoked)
