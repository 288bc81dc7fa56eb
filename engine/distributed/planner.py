"""The leader's assignment: sticky, balanced, and incremental (Connect's cooperative protocol).

Pure: members' join metadata and the leader's view of the config log in, one ``Assignment`` per
member out. Work stays where it runs; new work goes to the least loaded; excess is *revoked*
(stopped by its owner, who rejoins) and handed on only in the next round, so nothing ever runs on
two workers at once. A departed worker's work is held for ``scheduled.rebalance.max.delay.ms``
and given back if the worker returns in time.

The cluster's view (who owns what, what is held) goes to the leader and a few more members, its
keepers, who hand it back at their next join: a new leader finds it there when the old one is gone.
Not to every member: the broker keeps every member's join metadata and assignment in one record,
and a view per member would pass its ``message.max.bytes`` at a few thousand connectors.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Generic, TypeVar

from engine.distributed.protocol import Assignment, ClusterView, Held, JoinMetadata, TaskId, Work

ItemT = TypeVar("ItemT", str, TaskId)

# the leader and two more: losing all three in one round (then a new leader assigns a departed
# worker's work at once, as Java Connect's does after a leader change) takes a zone of workers
VIEW_KEEPERS = 3


@dataclass(frozen=True, slots=True)
class ClusterWork:
    """What exists per the leader's config snapshot; ``cleanups`` ride on connector slots but are
    never moved for balance (a running ``deleted()`` must finish where it started)."""

    connectors: frozenset[str]
    tasks: frozenset[TaskId]
    cleanups: frozenset[str] = frozenset()

    @property
    def all(self) -> Work:
        return Work(self.connectors | self.cleanups, self.tasks)


def plan(
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
    owned = _current_owners(members, order, everything)
    view = _latest_view(members)
    present = {members[m].worker_id for m in order}
    held, returned = _held_work(view, present, owned, everything, now_ms, delay_ms)
    for member in order:  # a returning worker gets back what was held for it (once, if it joined twice)
        back = returned.pop(members[member].worker_id, None)
        if back:
            owned[member] = owned[member] | back
    unassigned = everything - _union([*owned.values(), *(h.work for h in held.values())])
    revoked: dict[str, Work] = {m: Work() for m in order}
    connectors = _balance(
        {m: owned[m].connectors - work.cleanups for m in order},
        unassigned.connectors - work.cleanups,
        may_revoke=not held,
    )
    tasks = _balance({m: owned[m].tasks for m in order}, unassigned.tasks, may_revoke=not held)
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
    keepers = {leader, *[m for m in order if m != leader][: VIEW_KEEPERS - 1]}
    no_view = ClusterView()
    return {
        m: Assignment(
            leader=leader_meta.worker_id,
            leader_url=leader_meta.url,
            config_offset=config_offset,
            assigned=final[m],
            revoked=revoked[m],
            urls=urls,
            rejoin_after_ms=None if deadline is None else max(0, deadline - now_ms),
            view=new_view if m in keepers else no_view,
            cluster_size=everything.size,
        )
        for m in order
    }


def _current_owners(
    members: Mapping[str, JoinMetadata], order: list[str], everything: Work
) -> dict[str, Work]:
    """What each member runs and may keep: owned work that still exists, plus running deletions.

    A unit claimed twice (it should not happen) stays with the first member by worker id. The claims
    so far grow in place: one pass over each member's work, not a copy of everything per member.
    """
    claimed_connectors: set[str] = set()
    claimed_tasks: set[TaskId] = set()
    owned: dict[str, Work] = {}
    for m in order:
        meta = members[m]
        connectors = (meta.owned.connectors | meta.deleting) & everything.connectors
        tasks = meta.owned.tasks & everything.tasks
        if claimed_connectors and not claimed_connectors.isdisjoint(connectors):
            connectors = connectors - claimed_connectors
        if claimed_tasks and not claimed_tasks.isdisjoint(tasks):
            tasks = tasks - claimed_tasks
        owned[m] = Work(connectors, tasks)
        claimed_connectors.update(connectors)
        claimed_tasks.update(tasks)
    return owned


def _union(works: Iterable[Work]) -> Work:
    """All of ``works`` at once (a chain of ``|`` copies the growing whole once per operand)."""
    works = list(works)
    return Work(
        frozenset().union(*(w.connectors for w in works)), frozenset().union(*(w.tasks for w in works))
    )


def _latest_view(members: Mapping[str, JoinMetadata]) -> ClusterView:
    return max((meta.view for meta in members.values()), key=lambda v: v.generation, default=ClusterView())


def _held_work(
    view: ClusterView,
    present: set[str],
    owned: Mapping[str, Work],
    everything: Work,
    now_ms: int,
    delay_ms: int,
) -> tuple[dict[str, Held], dict[str, Work]]:
    """Work of departed workers still waiting for them, and work of those who came back."""
    running = _union(owned.values())
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
class _Balanced(Generic[ItemT]):
    assigned: dict[str, set[ItemT]]
    revoked: dict[str, set[ItemT]]


def _balance(
    current: Mapping[str, AbstractSet[ItemT]], unassigned: AbstractSet[ItemT], *, may_revoke: bool
) -> _Balanced[ItemT]:
    """Each member ends within one of the others; the most loaded keep the larger shares.

    Each unassigned item goes to the least loaded member still below its target (ties: the lowest
    member id), taken from a heap: O(items x log members), not a scan of every member per item."""
    members = list(current)
    assigned: dict[str, set[ItemT]] = {m: set(current[m]) for m in members}
    revoked: dict[str, set[ItemT]] = {m: set() for m in members}
    if not members:
        return _Balanced(assigned, revoked)
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
    below = [(len(assigned[m]), m) for m in members if len(assigned[m]) < targets[m]]
    heapq.heapify(below)
    for item in sorted(unassigned, key=repr):
        if below:
            load, target = below[0]
            if load + 1 < targets[target]:
                heapq.heapreplace(below, (load + 1, target))
            else:
                heapq.heappop(below)
        else:  # every member at its target (the targets cover every item: not reached)
            target = min(members, key=lambda m: (len(assigned[m]), m))
        assigned[target].add(item)
    return _Balanced(assigned, revoked)
