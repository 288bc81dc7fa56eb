"""Consumer groups of the in-process log: membership, Kafka's range assignment, and a hand-over barrier.

Rebalances are eager, as with aiokafka: every member revokes its whole assignment and then gets
its new one. A member takes a partition only once its previous owner has revoked it, so two
members never read one partition at the same time. Members revoke and take during their own
``getmany``; a member that does not poll for ``rebalance_timeout_s`` while others wait on it is
evicted (Kafka's ``max.poll.interval.ms``) and rejoins on its next poll.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Collection, Mapping

from engine.topics.base import RebalanceCallback, TopicPartition

Assignment = frozenset[TopicPartition]


def range_assign(
    subscriptions: Mapping[str, Collection[str]], partitions_of: Callable[[str], int]
) -> dict[str, Assignment]:
    """Kafka's ``RangeAssignor``: per topic, members sorted by id get contiguous ranges, the first
    ``partitions % members`` one partition more."""
    assigned: dict[str, set[TopicPartition]] = {member: set() for member in subscriptions}
    topics = sorted({topic for wanted in subscriptions.values() for topic in wanted})
    for topic in topics:
        members = sorted(member for member, wanted in subscriptions.items() if topic in wanted)
        count = partitions_of(topic)
        each, extra = divmod(count, len(members))
        for i, member in enumerate(members):
            start = each * i + min(i, extra)
            length = each + (1 if i < extra else 0)
            assigned[member].update(TopicPartition(topic, p) for p in range(start, start + length))
    return {member: frozenset(tps) for member, tps in assigned.items()}


class Member:
    """One consumer's view of the group: what it should own (``target``) and what it owns."""

    def __init__(
        self,
        member_id: str,
        topics: Collection[str],
        on_assign: RebalanceCallback,
        on_revoke: RebalanceCallback,
    ) -> None:
        self.id = member_id
        self.topics = frozenset(topics)
        self.on_assign = on_assign
        self.on_revoke = on_revoke
        self.target: Assignment = frozenset()
        self.assignment: Assignment = frozenset()
        self.applied = -1  # the generation whose target is ``assignment``
        self.in_group = False
        self.last_poll = time.monotonic()


class Group:
    def __init__(self, group_id: str, partitions_of: Callable[[str], int], wake: Callable[[], None]) -> None:
        self.id = group_id
        self.generation = 0
        self.members: dict[str, Member] = {}
        self._owners: dict[TopicPartition, Member] = {}
        self._partitions_of = partitions_of
        self._wake = wake
        self._ids = itertools.count()

    def new_member_id(self) -> str:
        return f"{self.id}-{next(self._ids):06d}"  # sorts in join order, so the first joiner ranks first

    def join(self, member: Member) -> None:
        member.in_group = True
        member.last_poll = time.monotonic()
        self.members[member.id] = member
        self.rebalance()

    def leave(self, member: Member) -> None:
        if self.members.pop(member.id, None) is None:
            return
        member.in_group = False
        for tp in member.assignment:  # it keeps ``assignment``, to learn on its next poll what it lost
            if self._owners.get(tp) is member:
                del self._owners[tp]
        self.rebalance()

    def subscribes_to(self, topic: str) -> bool:
        return any(topic in member.topics for member in self.members.values())

    def rebalance(self) -> None:
        self.generation += 1
        targets = range_assign({m.id: m.topics for m in self.members.values()}, self._partitions_of)
        for member in self.members.values():
            member.target = targets[member.id]
        self._wake()

    def release(self, member: Member) -> Assignment:
        """Give up everything ``member`` owns; returns what it owned."""
        owned = member.assignment
        for tp in owned:
            if self._owners.get(tp) is member:
                del self._owners[tp]
        member.assignment = frozenset()
        self._wake()
        return owned

    def try_take(self, member: Member, timeout_s: float) -> bool:
        """Make ``member``'s target its assignment if no one else still owns a part of it.

        Owners that have not polled within ``timeout_s`` are evicted first.
        """
        now = time.monotonic()
        blockers = {
            owner
            for tp in member.target
            if (owner := self._owners.get(tp)) is not None and owner is not member
        }
        for owner in blockers:
            if now - owner.last_poll > timeout_s:
                self.leave(owner)
        if member.applied == self.generation or any(
            self._owners.get(tp) not in (None, member) for tp in member.target
        ):
            return member.applied == self.generation
        for tp in member.target:
            self._owners[tp] = member
        member.assignment = member.target
        member.applied = self.generation
        return True
