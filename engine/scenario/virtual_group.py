"""An in-process group coordinator for cluster scenarios: membership, rounds and their order, seeded.

Kafka's coordinator decides who leads, when a round happens and, in effect, in which order the
members act on their assignments; the real workers then run the real ``Cluster`` and planner.
Here the scenario runner plays the coordinator: workers join and leave through
``VirtualMember`` (the ``Membership`` seam of ``engine.distributed.cluster.Cluster``), a killed or
partitioned worker stays in the group until its session expires on the virtual clock, and every
choice the protocol leaves open (the leader when there is none, the order the members apply a
round's assignments) is drawn from the run's seeded random generator, so a seed replays a run.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field

import structlog

from engine.distributed.member import Planner, cut_off_after_s
from engine.distributed.protocol import Assignment, JoinMetadata
from engine.distributed.settings import ClusterSettings
from engine.testing.faults import VirtualClock

log = structlog.get_logger(component="scenario")

MAX_ROUNDS = 50  # per settle: more means the members keep asking for rounds (a rebalance storm)


class RebalanceStorm(RuntimeError):
    """The group did not settle: members kept asking for new rounds."""


@dataclass(eq=False)
class VirtualMember:
    """One worker's seat: what ``Cluster`` calls (start, stop, request_rejoin) and what the group reads."""

    group: VirtualGroup
    worker: str  # the scenario's worker name (w1, w2, ...)
    settings: ClusterSettings
    join_metadata: Callable[[], JoinMetadata]
    planner: Planner
    on_assignment: Callable[[Assignment, int], None]
    on_cut_off: Callable[[], None]
    member_id: str = ""
    dead: bool = False  # killed: no LeaveGroup, no heartbeats
    partitioned: bool = False  # cut off from the coordinator: misses heartbeats, still runs its work
    expires_at: float | None = None  # virtual time its session expires (dead or partitioned)
    cut_off_at: float | None = None  # virtual time a partitioned member gives its work up (KAFKA-9184)
    cut: bool = False  # it did: told its ``Cluster`` once, until healed
    assignments: list[int] = field(default_factory=list)  # generations it was handed

    @property
    def reachable(self) -> bool:
        return not self.dead and not self.partitioned

    async def start(self) -> None:
        self.group.join(self)

    async def stop(self) -> None:
        """A clean shutdown leaves the group at once; a dead or cut-off worker cannot say goodbye."""
        if self.reachable:
            self.group.leave(self)

    def request_rejoin(self) -> None:
        if self.reachable and self.member_id in self.group.members:
            self.group.wanted = True

    def request_rejoin_for_change(self) -> None:
        """At once: the scenario's rounds run when it settles, a burst already shares one."""
        self.request_rejoin()

    def change_covered(self) -> None:
        """Nothing waits: rounds run when the scenario settles."""

    def in_contact(self) -> bool:
        return self.cut_off_at is None or self.group.clock.now < self.cut_off_at


class VirtualGroup:
    """Members, generation, leader, and whether a round is due; ``round`` runs one, seeded."""

    def __init__(self, rng: random.Random, clock: VirtualClock) -> None:
        self.rng = rng
        self.clock = clock
        self.members: dict[str, VirtualMember] = {}  # member id -> member, while in the group
        self.by_worker: dict[str, VirtualMember] = {}  # the newest member of each worker
        self.generation = 0
        self.leader: str | None = None  # member id
        self.wanted = False
        self.rounds: list[str] = []  # one line per round, for the trace and failure messages
        self._joins: dict[str, itertools.count[int]] = {}

    def factory(
        self, worker: str
    ) -> Callable[
        [
            ClusterSettings,
            Callable[[], JoinMetadata],
            Planner,
            Callable[[Assignment, int], None],
            Callable[[], None],
        ],
        VirtualMember,
    ]:
        """The ``MemberFactory`` for worker ``worker``'s next engine."""

        def make(
            settings: ClusterSettings,
            join_metadata: Callable[[], JoinMetadata],
            planner: Planner,
            on_assignment: Callable[[Assignment, int], None],
            on_cut_off: Callable[[], None],
        ) -> VirtualMember:
            member = VirtualMember(self, worker, settings, join_metadata, planner, on_assignment, on_cut_off)
            self.by_worker[worker] = member
            return member

        return make

    @property
    def leader_worker(self) -> str | None:
        member = self.members.get(self.leader) if self.leader is not None else None
        return member.worker if member is not None else None

    # ---- membership -----------------------------------------------------------------------

    def join(self, member: VirtualMember) -> None:
        count = self._joins.setdefault(member.worker, itertools.count(1))
        member.member_id = f"{member.worker}-{next(count)}"
        self.members[member.member_id] = member
        self.wanted = True

    def leave(self, member: VirtualMember) -> None:
        if self.members.pop(member.member_id, None) is not None:
            self.wanted = True

    def kill(self, worker: str) -> None:
        member = self.by_worker.get(worker)
        if member is not None:
            member.dead = True
            member.cut_off_at = None  # a dead worker runs nothing to give up
            member.expires_at = self.clock.now + member.settings.session_timeout_ms / 1000

    def partition(self, worker: str) -> None:
        member = self.by_worker.get(worker)
        if member is not None and not member.dead:
            member.partitioned = True
            member.expires_at = self.clock.now + member.settings.session_timeout_ms / 1000
            settings = member.settings
            member.cut_off_at = self.clock.now + cut_off_after_s(
                settings.session_timeout_ms, settings.heartbeat_interval_ms
            )

    def heal(self, worker: str) -> None:
        """Heartbeats reach the coordinator again; a member whose session expired meanwhile rejoins
        under a new member id (aiokafka's answer to UNKNOWN_MEMBER_ID) and says what it still runs."""
        member = self.by_worker.get(worker)
        if member is None or not member.partitioned:
            return
        member.partitioned = False
        member.expires_at = member.cut_off_at = None
        member.cut = False
        if member.member_id not in self.members:
            self.join(member)

    def cut_offs_due(self) -> list[float]:
        """Virtual times partitioned members will give their work up (the runner stops the clock there)."""
        return [m.cut_off_at for m in self.by_worker.values() if m.cut_off_at is not None and not m.cut]

    def cut_off(self) -> list[str]:
        """Partitioned members past Connect's cut-off rule give their work up (``Cluster`` revokes it
        all), as ``GroupMember`` does when the coordinator stops answering; returns their workers."""
        due = [
            m
            for m in self.by_worker.values()
            if not m.cut and m.cut_off_at is not None and m.cut_off_at <= self.clock.now
        ]
        for member in due:
            member.cut = True
            member.on_cut_off()
        return [m.worker for m in due]

    def expire(self) -> list[str]:
        """Remove the members whose session ended by now; returns their workers."""
        gone = [
            m for m in self.members.values() if m.expires_at is not None and m.expires_at <= self.clock.now
        ]
        for member in gone:
            del self.members[member.member_id]
            self.wanted = True
        return [m.worker for m in gone]

    @property
    def waiting_on(self) -> list[str]:
        """Members the coordinator waits for before a round can complete (unreachable, session not over)."""
        return sorted(m.worker for m in self.members.values() if not m.reachable)

    # ---- rounds ---------------------------------------------------------------------------

    async def round(self, settle: Callable[[], Awaitable[None]]) -> bool:
        """One rebalance if one is due and every member can take part; ``settle`` runs after each
        member was handed its assignment. Returns whether a round ran."""
        if not self.wanted or self.waiting_on:
            return False
        self.wanted = False
        if not self.members:
            self.leader = None
            return False
        self.generation += 1
        if self.leader not in self.members:  # Kafka elects one of the members; which one is left open
            self.leader = self.rng.choice(sorted(self.members))
        leader = self.members[self.leader]
        metadata: Mapping[str, JoinMetadata] = {
            m: self.members[m].join_metadata() for m in sorted(self.members)
        }
        plans = leader.planner(metadata, self.leader, self.generation)
        order = sorted(self.members)
        self.rng.shuffle(order)  # the order members apply their assignments in is left open too
        self.rounds.append(
            f"generation {self.generation}: leader {leader.worker}, applied by "
            + ", ".join(self.members[m].worker for m in order)
        )
        log.info(
            "scenario.rebalance",
            generation=self.generation,
            leader=leader.worker,
            order=[self.members[m].worker for m in order],
        )
        for member_id in order:
            member = self.members.get(member_id)
            if member is None or not member.reachable:
                continue
            plan = plans.get(member_id)
            if plan is None:  # the leader had no plan for it: it asks again (GroupMember does the same)
                self.wanted = True
                continue
            member.assignments.append(self.generation)
            member.on_assignment(plan, self.generation)
            await settle()
        return True

    async def settle(self, settle: Callable[[], Awaitable[None]]) -> None:
        """Run rounds until none is due (or the due one waits for a session to expire)."""
        for _ in range(MAX_ROUNDS):
            if not await self.round(settle):
                return
        raise RebalanceStorm(
            f"the group kept rebalancing: {MAX_ROUNDS} rounds in a row; last: {self.rounds[-1]}"
        )
