"""This worker's seat in the Connect group, through the broker's group coordinator.

aiokafka's consumer group is the membership protocol: the worker subscribes to the config topic
(the protocol needs a topic; no partition is ever assigned or fetched), and a custom assignor
carries join metadata and assignments in ``user_data`` (aiokafka's ``AbstractPartitionAssignor``:
the leader's ``assign`` sees every member's metadata, ``on_assignment`` hands each member its own). aiokafka
rebalances eagerly; the cooperative part lives in the planner and in ``Cluster``.

A worker offers one group protocol, ``connect-engine-compact`` (``protocol.py``'s version 2).
Offering the JSON one of 0.1.0 (``connect-engine-sessioned``) beside it would let the two releases
share a group during a rolling upgrade, but with two protocols offered the broker now and then held
a new group's JoinGroup for minutes (Apache Kafka 4.1, two workers starting together; never with
one): a worker of this release waits while 0.1.0 workers hold the group (``start``), so a cluster is
upgraded by stopping all its workers first.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

import structlog
from aiokafka import AIOKafkaConsumer
from aiokafka.coordinator.assignors.abstract import AbstractPartitionAssignor
from aiokafka.coordinator.protocol import ConsumerProtocolMemberAssignment, ConsumerProtocolMemberMetadata
from aiokafka.errors import InconsistentGroupProtocolError, KafkaError

from engine.config.kafka_clients.starting import start_client
from engine.distributed.protocol import (
    COMPACT_VERSION,
    PROTOCOL_VERSION,
    Assignment,
    ClusterView,
    JoinMetadata,
    decode_members,
    encode_assignments,
)
from engine.distributed.settings import ClusterSettings

log = structlog.get_logger(component="group")

ASSIGNOR_NAMES = {COMPACT_VERSION: "connect-engine-compact", PROTOCOL_VERSION: "connect-engine-sessioned"}
# getmany() is what tells aiokafka the member is alive (max.poll.interval): it waits this long
_POLL_MS = 1000
# the watcher overslept by this much: the process itself was paused (SIGSTOP, a suspended VM)
_PAUSE_S = 3.0
_FOREIGN_RETRY_S = 2.0  # while another protocol's members hold the group
_RETRY_JOIN_S = 0.5

Planner = Callable[[Mapping[str, JoinMetadata], str, int], dict[str, Assignment]]

# A round costs every member in proportion to the cluster (the leader plans every connector and
# task, each member compares its work with the config), so after a large one a config change waits
# this long per connector or task before asking for the next round, and the changes read meanwhile
# share it: a script creating or deleting thousands one after another causes a round per gap, not
# one or two per connector. Below _GAP_FROM_UNITS (a few hundred connectors) a change rejoins at once.
_GAP_PER_UNIT_S = 1 / 15_000
_GAP_MAX_S = 2.0
_GAP_FROM_UNITS = 1_200
_V1_BYTES_PER_UNIT = 17  # a version 1 assignment (whole view, JSON) per connector or task, roughly


def round_gap_s(cluster_size: int) -> float:
    """How long after a round over this many connectors and tasks a change waits to rejoin (0: at once)."""
    if cluster_size < _GAP_FROM_UNITS:
        return 0.0
    return min(_GAP_MAX_S, cluster_size * _GAP_PER_UNIT_S)


class Membership(Protocol):
    """A worker's seat in the group, as ``Cluster`` uses it: ``GroupMember`` through the broker, or
    the scenario runner's in-process group (``engine.scenario.virtual_group``), which decides
    itself when rounds happen and in which order members hear their assignments."""

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    def request_rejoin(self) -> None: ...

    def request_rejoin_for_change(self) -> None:
        """A config change needs a round: now, or once the gap after the last round has passed
        (``round_gap_s``: a burst of changes then shares a round)."""
        ...

    def change_covered(self) -> None:
        """A round planned after every change this member asked a round for: a rejoin still waiting
        out the gap is not needed (each member asks for a change it reads, and without this a burst
        read by three workers at different moments could make three rounds per gap)."""
        ...

    def in_contact(self) -> bool:
        """Whether this member may still be in the group: the coordinator answered it within
        ``cut_off_after_s`` (past that it calls its ``on_cut_off`` and the worker stops its work)."""
        ...


MemberFactory = Callable[
    [
        ClusterSettings,
        Callable[[], JoinMetadata],
        Planner,
        Callable[[Assignment, int], None],
        Callable[[], None],
    ],
    Membership,
]


def cut_off_after_s(session_timeout_ms: int, heartbeat_interval_ms: int) -> float:
    """KAFKA-9184's rule, as Connect's ``WorkerCoordinator.poll`` applies it: once no heartbeat was
    answered for ``session.timeout.ms`` the coordinator is marked unknown, and when rediscovering it
    fails for ``heartbeat.interval.ms`` more the member revokes its whole assignment. By then the
    coordinator has dropped the member, and the leader hands its work on only after
    ``scheduled.rebalance.max.delay.ms``: with a delay above the heartbeat interval, the cut-off copy
    has stopped before another starts."""
    return (session_timeout_ms + heartbeat_interval_ms) / 1000


class _ConnectAssignor(AbstractPartitionAssignor):  # type: ignore[misc]
    """Hands the leader's plan to the group in one encoding; never assigns a partition."""

    def __init__(self, member: GroupMember, version: int) -> None:
        self._member = member
        self._version = version

    @property
    def name(self) -> str:  # the group protocol's name, as the broker compares them
        return ASSIGNOR_NAMES[self._version]

    def metadata(self, topics: Iterable[str]) -> ConsumerProtocolMemberMetadata:
        """A keeper's view goes only in the encoding the group speaks (in both before a first round):
        were a worker speaking only the other one to join, that one round would plan without a view,
        as after a leader change that lost every keeper."""
        meta = self._member.join_metadata()
        if self._member.protocol_version not in (0, self._version):
            meta = dataclasses.replace(meta, view=ClusterView())
        return ConsumerProtocolMemberMetadata(0, sorted(topics), meta.encode(self._version))

    def assign(self, cluster: Any, members: Mapping[str, Any]) -> dict[str, Any]:
        return self._member.plan_for(members, self._version)

    def on_assignment(self, assignment: Any) -> None:
        self._member.assigned(bytes(assignment.user_data), self._version)


class GroupMember:
    """Joins ``group.id``, answers as leader when elected, and reports each assignment it gets."""

    versions: tuple[int, ...] = (COMPACT_VERSION,)  # the encodings offered, preferred first

    def __init__(
        self,
        bootstrap_servers: str,
        group_id: str,
        topic: str,
        *,
        client_id: str,
        join_metadata: Callable[[], JoinMetadata],
        planner: Planner,
        on_assignment: Callable[[Assignment, int], None],
        on_cut_off: Callable[[], None] = lambda: None,
        session_timeout_ms: int = 10_000,
        heartbeat_interval_ms: int = 3_000,
        rebalance_timeout_ms: int = 60_000,
        request_timeout_ms: int = 40_000,
        client_args: Mapping[str, Any] | None = None,
    ) -> None:
        self.bootstrap_servers = bootstrap_servers
        self._client_args = dict(client_args or {})  # the worker's security settings (KafkaClients.own())
        self.group_id = group_id
        self.topic = topic
        self.client_id = client_id
        self.join_metadata = join_metadata
        self._planner = planner
        self._on_assignment = on_assignment
        self._session_timeout_ms = session_timeout_ms
        self._heartbeat_interval_ms = heartbeat_interval_ms
        self._rebalance_timeout_ms = rebalance_timeout_ms
        self._request_timeout_ms = request_timeout_ms
        self._consumer: Any = None
        self._poller: asyncio.Task[None] | None = None
        self._watcher: asyncio.Task[None] | None = None
        self.rebalances = 0
        self._on_cut_off = on_cut_off
        self._cut_off_after_s = cut_off_after_s(session_timeout_ms, heartbeat_interval_ms)
        self._last_contact = time.monotonic()  # the coordinator's last answer: a heartbeat, a join
        self._lost = False  # the coordinator no longer knows this member (or never answered in time)
        self._paused = False  # the process was paused since the coordinator last answered
        self._assigned_at = float("-inf")  # when the last assignment arrived (monotonic)
        self._gap_s = 0.0  # round_gap_s of that assignment
        self._rejoin_later: asyncio.TimerHandle | None = None  # a change's rejoin waiting out the gap
        self.protocol_version = 0  # the encoding the group chose (protocol.py), once assigned

    @property
    def generation(self) -> int:
        coordinator = getattr(self._consumer, "_coordinator", None)
        return int(getattr(coordinator, "generation", -1)) if coordinator is not None else -1

    @property
    def member_id(self) -> str:
        coordinator = getattr(self._consumer, "_coordinator", None)
        return str(getattr(coordinator, "member_id", "")) if coordinator is not None else ""

    async def start(self) -> None:
        """Join the group. While members of another protocol hold it (Java Connect workers: their
        ``connect`` protocol is not our ``consumer`` one; a killed one stays until its session times
        out), the broker refuses the join: we wait and say why, instead of exiting."""
        while True:
            try:
                await self._join()
                return
            except InconsistentGroupProtocolError:
                log.warning(
                    "group.held_by_other_protocol",
                    group=self.group_id,
                    reason="the group has members of another protocol, e.g. Java Kafka Connect workers or "
                    "connect-engine 0.1.0 workers: stop them (a killed one leaves after its "
                    "session.timeout.ms); retrying",
                )
                await self.stop()
                await asyncio.sleep(_FOREIGN_RETRY_S)

    async def _join(self) -> None:
        self._consumer = AIOKafkaConsumer(
            self.topic,
            **{
                **self._client_args,
                "bootstrap_servers": self.bootstrap_servers,
                "group_id": self.group_id,
                "client_id": self.client_id,
                "enable_auto_commit": False,
                "auto_offset_reset": "latest",
                "partition_assignment_strategy": tuple(_ConnectAssignor(self, v) for v in self.versions),
                "session_timeout_ms": self._session_timeout_ms,
                "heartbeat_interval_ms": self._heartbeat_interval_ms,
                "rebalance_timeout_ms": self._rebalance_timeout_ms,
                "request_timeout_ms": self._request_timeout_ms,
                "max_poll_interval_ms": max(self._rebalance_timeout_ms, 300_000),
            },
        )
        await start_client(self._consumer)
        self._watch_heartbeats(self._consumer._coordinator)
        self._contact()
        self._poller = asyncio.create_task(self._poll(), name=f"group-member:{self.group_id}")
        self._watcher = asyncio.create_task(self._watch(), name=f"group-cut-off:{self.group_id}")
        log.info("group.joining", group=self.group_id)

    # ---- KAFKA-9184: a member the coordinator no longer answers stops its work ----------------

    def in_contact(self) -> bool:
        return not self._lost and time.monotonic() - self._last_contact <= self._cut_off_after_s

    def _contact(self) -> None:
        self._last_contact = time.monotonic()
        self._lost = False
        self._paused = False

    def _watch_heartbeats(self, coordinator: Any) -> None:
        """Note each heartbeat the coordinator answers (aiokafka's heartbeat task calls
        ``_do_heartbeat``; it has no listener), and a member id it reset: the broker dropped us.

        A rejoin starts once the coordinator is known and stops the heartbeats meanwhile: its start
        counts as an answer when the member was in contact, so a JoinGroup the coordinator holds while
        a dead member's session runs out (up to ``session.timeout.ms``) is not taken for a cut-off."""
        heartbeat, rejoin = coordinator._do_heartbeat, coordinator._do_rejoin_group

        async def watched_rejoin(subscription: Any) -> Any:
            # not for a member already silent past its cut-off (it resumes from a SIGSTOP, and
            # aiokafka's first act is a rejoin): its writes stay held until the coordinator answers
            if self.in_contact():
                self._last_contact = time.monotonic()
            return await rejoin(subscription)

        coordinator._do_rejoin_group = watched_rejoin

        async def watched() -> bool:
            answered = bool(await heartbeat())
            if answered:
                self._contact()
            elif not coordinator.member_id:  # UNKNOWN_MEMBER_ID or ILLEGAL_GENERATION: no longer a member
                self._cut_off("the coordinator no longer knows this member")
            return answered

        coordinator._do_heartbeat = watched

    async def _watch(self) -> None:
        """Checked every poll interval and first thing after the process resumes (a SIGSTOP, a long
        pause): monotonic time kept running meanwhile.

        Silence alone does not cut the member off: a coordinator that fails over to another broker
        is silent for a while too, and the member finds the new one and stays in the group (writes
        are held meanwhile: ``in_contact`` is false). A member whose process was paused past the
        silence, or whom the coordinator no longer knows, gives its work up."""
        last_tick = time.monotonic()
        while True:
            await asyncio.sleep(_POLL_MS / 1000)
            now = time.monotonic()
            if now - last_tick > _POLL_MS / 1000 + _PAUSE_S:
                self._paused = True
            last_tick = now
            silent = now - self._last_contact > self._cut_off_after_s
            # nothing to give up before a first assignment
            if silent and self._paused and not self._lost and self.rebalances:
                self._cut_off(f"no answer from the group coordinator for {self._cut_off_after_s:g} s")

    def _cut_off(self, reason: str) -> None:
        if self._lost:
            return
        self._lost = True
        log.warning(
            "group.cut_off",
            group=self.group_id,
            reason=reason,
            silent_s=round(time.monotonic() - self._last_contact, 1),
        )
        self._on_cut_off()

    async def _poll(self) -> None:
        consumer = self._consumer
        while True:
            try:
                await consumer.getmany(timeout_ms=_POLL_MS)
            except KafkaError as exc:  # the coordinator retries by itself; keep showing we are alive
                log.warning("group.poll_failed", group=self.group_id, error=repr(exc))
                await asyncio.sleep(_POLL_MS / 1000)

    def request_rejoin(self) -> None:
        """Rebalance now: this worker finished a revocation, or a change's gap has passed."""
        self._cancel_rejoin_later()
        coordinator = getattr(self._consumer, "_coordinator", None)
        if coordinator is not None:
            coordinator.request_rejoin()

    def request_rejoin_for_change(self) -> None:
        if self._rejoin_later is not None:
            return  # already asked: that round covers this change too
        wait = self._assigned_at + self._gap_s - time.monotonic()
        if wait <= 0:
            self.request_rejoin()
            return
        self._rejoin_later = asyncio.get_running_loop().call_later(wait, self.request_rejoin)

    def change_covered(self) -> None:
        self._cancel_rejoin_later()

    def _cancel_rejoin_later(self) -> None:
        if self._rejoin_later is not None:
            self._rejoin_later.cancel()
            self._rejoin_later = None

    async def stop(self) -> None:
        """Leave the group (the others rebalance at once). Idempotent, safe before start."""
        self._cancel_rejoin_later()
        for task in (self._watcher, self._poller):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._watcher = self._poller = None
        consumer, self._consumer = self._consumer, None
        if consumer is not None:
            with contextlib.suppress(KafkaError):
                await consumer.stop()

    # ---- called by the assignor, inside aiokafka's coordinator task -------------------------

    def plan_for(
        self, members: Mapping[str, Any], version: int = COMPACT_VERSION
    ) -> dict[str, ConsumerProtocolMemberAssignment]:
        decoded, failed = decode_members({m: bytes(metadata.user_data) for m, metadata in members.items()})
        for member_id, exc in failed.items():
            log.error("group.member_metadata_unreadable", member=member_id, error=repr(exc))
        try:
            plans = self._planner(decoded, self.member_id, self.generation)
        except Exception as exc:  # a planning bug must not kill the coordinator: nobody gets work
            log.exception("group.assignment_failed", error=repr(exc))
            plans = {}
        encoded = encode_assignments(plans, version)
        return {
            member_id: ConsumerProtocolMemberAssignment(0, [], encoded.get(member_id, b""))
            for member_id in members
        }

    def assigned(self, user_data: bytes, version: int = COMPACT_VERSION) -> None:
        self.rebalances += 1
        if version != self.protocol_version:  # the first round (a group of 0.1.0 workers speaks JSON)
            self.protocol_version = version
            log.info("group.protocol", group=self.group_id, protocol=ASSIGNOR_NAMES[version])
        self._contact()  # a completed join and sync: the coordinator answered, as a member again
        # a change's rejoin already waiting stays: this round may not cover it (read after the plan)
        self._assigned_at, self._gap_s = time.monotonic(), round_gap_s(len(user_data) // _V1_BYTES_PER_UNIT)
        try:
            assignment = Assignment.decode(user_data)
            if assignment.cluster_size:  # a leader of an older release does not say
                self._gap_s = round_gap_s(assignment.cluster_size)
        except (ValueError, KeyError, TypeError, IndexError) as exc:
            # the leader had no plan for us (empty: we joined late, or planning failed): ask again
            log.warning("group.assignment_missing", group=self.group_id, error=repr(exc), empty=not user_data)
            asyncio.get_running_loop().call_later(_RETRY_JOIN_S, self.request_rejoin)
            return
        self._on_assignment(assignment, self.generation)


def broker_member(
    settings: ClusterSettings,
    join_metadata: Callable[[], JoinMetadata],
    planner: Planner,
    on_assignment: Callable[[Assignment, int], None],
    on_cut_off: Callable[[], None],
) -> GroupMember:
    """The default ``MemberFactory``: membership through the broker's group coordinator."""
    return GroupMember(
        settings.bootstrap_servers,
        settings.group_id,
        settings.config_topic,
        client_id=f"connect-engine-{settings.worker_id}-group",
        join_metadata=join_metadata,
        planner=planner,
        on_assignment=on_assignment,
        on_cut_off=on_cut_off,
        session_timeout_ms=settings.session_timeout_ms,
        heartbeat_interval_ms=settings.heartbeat_interval_ms,
        rebalance_timeout_ms=settings.rebalance_timeout_ms,
        request_timeout_ms=settings.request_timeout_ms,
        client_args=settings.client_args,
    )
