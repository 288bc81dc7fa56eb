"""Distributed mode's ownership: which connectors and tasks this worker runs, per the group.

The herder asks it what it owns; the group member feeds it assignments. Applying one means
catching up to the leader's config offset, telling each affected connector actor to reconcile
(start what is new, plain-stop what left), and, after revocations, rejoining so the leader can
hand the freed work on (the second phase of incremental cooperative rebalancing).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Protocol

import structlog

from engine.configlog.records import ConfigRecord, SessionKeyRecord
from engine.configlog.snapshot import ConfigSnapshot
from engine.distributed.forwarding import RestClient, forward_task_configs
from engine.distributed.member import MemberFactory, Membership, broker_member
from engine.distributed.planner import ClusterWork, plan
from engine.distributed.protocol import Assignment, ClusterView, JoinMetadata, Work
from engine.distributed.request_signing import Refusal, SessionKey, sign, verify
from engine.distributed.settings import ClusterSettings
from engine.errors import ForwardingFailed
from engine.herder.cleanups import Cleanups
from engine.herder.messages import Message, Reconcile
from engine.herder.pacing import paced
from engine.herder.timers import LoopTimers, TimerHandle, Timers

log = structlog.get_logger(component="cluster")


_FORWARDS_IN_FLIGHT = 16  # task configs sent to the leader at once by one follower
_FORWARD_QUEUE_S = 10.0  # how long one waits for a turn before its connector asks again later


class ClusterHost(Protocol):
    """What the cluster needs of the herder it serves: what was read, what is deleting, a mailbox."""

    snapshot: ConfigSnapshot
    read_end: int
    cleanups: Cleanups  # its ``deleting``: the deletions running here

    async def wait_read(self, offset: int, timeout: float) -> None: ...

    async def append(self, records: list[ConfigRecord]) -> int: ...

    def post(self, connector: str, message: Message) -> None: ...


class Cluster:
    """This worker's view of the group: leader, members' URLs, and its own assignment.

    The herder's ``Ownership`` in distributed mode.
    """

    distributed = True

    def __init__(
        self,
        settings: ClusterSettings,
        rest_client: RestClient,
        *,
        member_factory: MemberFactory | None = None,
        timers: Timers | None = None,
    ) -> None:
        """``member_factory`` and ``timers`` are seams for the scenario runner's deterministic
        cluster (an in-process group, a virtual clock); the defaults are the broker and real time."""
        self.settings = settings
        self.rest_client = rest_client  # forwards to the leader (REST requests, task configs)
        self.worker_id = settings.worker_id
        self.owned = Work()
        self.generation = -1
        self.leader: str | None = None
        self.leader_url: str | None = None
        self.urls: Mapping[str, str] = {}
        self.view = ClusterView()
        # the newest assignment received, applied or not (Connect's ``assignmentSnapshot``), and
        # what an assignment being applied is still stopping: a member joins saying it owns both
        # and what runs here. Saying only ``owned`` while a received assignment waited made the
        # leader give that work to another worker as well: with 10,000 connectors, hundreds of
        # tasks ran on two workers at once.
        self._promised = Work()
        self._promised_view = ClusterView()
        self._releasing = Work()
        self.rebalances_applied = 0
        self._herder: ClusterHost | None = None
        self._pending: asyncio.Queue[tuple[Assignment, int]] = asyncio.Queue()
        self._rebalance_wanted_at = -1  # config offset whose change needs a rebalance, until one covers it
        self._joined = asyncio.Event()
        self._closing = False
        self._timer: TimerHandle | None = None
        self._key_timer: TimerHandle | None = None
        self._rotation: asyncio.Task[None] | None = None
        self._timers: Timers = timers if timers is not None else LoopTimers()
        self._applying = False
        self._revoking: asyncio.Future[None] | None = None  # stops after a cut-off (KAFKA-9184)
        self._forwards = asyncio.Semaphore(_FORWARDS_IN_FLIGHT)
        self.member: Membership = (member_factory or broker_member)(
            settings, self._join_metadata, self._plan, self._received, self._cut_off
        )

    # ---- what the herder and the engine ask -----------------------------------------------

    def owns_connector(self, name: str) -> bool:
        return name in self.owned.connectors

    def owns_task(self, name: str, task: int) -> bool:
        return (name, task) in self.owned.tasks

    def runs_task(self, connector: str, task: int) -> bool:
        """Whether this worker may still run the task: it is assigned here and the group coordinator
        answered recently enough (KAFKA-9184). Task loops ask it before each ``put``, send and
        InitProducerId, so a worker that resumes after a long pause writes nothing, and fences
        nobody, before its cut-off has stopped its tasks, nor after it rejoined."""
        return self.member.in_contact() and (connector, task) in self.owned.tasks

    def tasks_run(self) -> frozenset[tuple[str, int]]:
        """Every task ``runs_task`` answers True for."""
        return self.owned.tasks if self.member.in_contact() else frozenset()

    @property
    def is_leader(self) -> bool:
        return self.leader is not None and self.leader == self.worker_id

    @property
    def needs_rebalance(self) -> bool:
        """A config change is not yet covered by an assignment (Connect's ``RebalanceNeededException``)."""
        return self._rebalance_wanted_at >= 0

    def work_changed(self, offset: int) -> None:
        """A record changed the set of connectors, tasks or cleanups: a rebalance is due.

        Every worker that reads it asks, as each of Connect's does (``DistributedHerder``'s config
        listener sets ``needsReconfigRebalance`` on leader and followers alike): a round completes
        once every member has rejoined, and a follower that waited for its next heartbeat to hear of
        the round held it up by up to ``heartbeat.interval.ms``, twice per new connector.
        """
        self._rebalance_wanted_at = max(self._rebalance_wanted_at, offset)
        self.member.request_rejoin_for_change()

    async def forward_task_configs(self, connector: str, configs: list[dict[str, str]]) -> bool:
        """A follower hands its connector's task configs to the leader (Connect's ``forwardRequest``), a
        few at a time: a follower starting thousands of connectors at once would otherwise send the
        leader thousands of requests together, and most would time out. A turn waited for past
        ``_FORWARD_QUEUE_S`` is a ``ForwardingFailed``: the connector's actor asks again after a
        backoff and meanwhile handles its other messages (an assignment's, above all)."""
        try:
            async with asyncio.timeout(_FORWARD_QUEUE_S):  # the actor waiting here handles nothing else
                await self._forwards.acquire()
        except TimeoutError:
            raise ForwardingFailed(
                503,
                f"Could not forward task configs of {connector} to the leader: {_FORWARDS_IN_FLIGHT} "
                f"requests were in flight for {_FORWARD_QUEUE_S:g} s",
            ) from None
        try:
            return await forward_task_configs(self, connector, configs)
        finally:
            self._forwards.release()

    @property
    def busy(self) -> bool:
        """An assignment is received but not applied yet, or a session key is being written (the
        scenario runner settles on this)."""
        return (
            self._applying
            or not self._pending.empty()
            or (self._rotation is not None and not self._rotation.done())
            or (self._revoking is not None and not self._revoking.done())
        )

    # ---- KIP-507: the session key and signed internal requests ----------------------------

    @property
    def session_key(self) -> SessionKey | None:
        """The latest session key read from the config topic (None before the leader wrote one)."""
        record = self._herder.snapshot.session_key if self._herder is not None else None
        return None if record is None else SessionKey(record.key, record.algorithm, record.creation_timestamp)

    def sign(self, body: bytes) -> dict[str, str]:
        """Headers signing an internal request's body; none before a key was read, as Connect sends it."""
        key = self.session_key
        return {} if key is None else sign(key, self.settings.signing.signature_algorithm, body)

    def verify(self, headers: Mapping[str, str], body: bytes) -> Refusal | None:
        """Why an internal request must be refused (400, 403, 503), or None when it is signed properly."""
        return verify(headers, body, self.session_key, self.settings.signing)

    def _check_key_rotation(self) -> None:
        """The leader writes a new session key when there is none, it expired, or it does not fit this
        worker's algorithm and size (Connect's ``checkForKeyRotation``); then again at its expiry."""
        if self._key_timer is not None:
            self._key_timer.cancel()
            self._key_timer = None
        if not self.is_leader or self._closing or self._herder is None:
            return
        if self._rotation is not None and not self._rotation.done():
            return
        settings = self.settings.signing
        now = int(self._timers.time() * 1000)
        key = self.session_key
        if key is None or key.needs_rotation(settings, now):
            self._rotation = asyncio.ensure_future(
                self._write_key(self._herder, SessionKey.generate(settings, now))
            )
            return
        delay = (key.creation_timestamp + settings.ttl_ms - now) / 1000
        self._key_timer = self._timers.call_later(max(delay, 0.0), self._check_key_rotation)

    async def _write_key(self, herder: ClusterHost, key: SessionKey) -> None:
        try:
            offset = await herder.append([SessionKeyRecord(key.key, key.algorithm, key.creation_timestamp)])
            await herder.wait_read(offset + 1, self.settings.sync_timeout_s * 10)
        except Exception as exc:  # a write or read-back failure: retried shortly
            log.warning("cluster.session_key_not_written", worker=self.worker_id, reason=repr(exc))
            self._key_timer = self._timers.call_later(1.0, self._check_key_rotation)
            return
        log.info("cluster.session_key_distributed", worker=self.worker_id, algorithm=key.algorithm)
        asyncio.get_running_loop().call_soon(
            self._check_key_rotation
        )  # once this task is done: the next expiry

    @property
    def rebalancing(self) -> bool:
        """Connect's ``rebalancing`` gauge: no assignment yet, one received and not applied, or one owed."""
        return not self._joined.is_set() or self.busy or self.needs_rebalance

    async def joined(self, timeout: float) -> None:
        """Return once a first assignment has been applied."""
        async with asyncio.timeout(timeout):
            await self._joined.wait()

    # ---- running --------------------------------------------------------------------------

    async def run(self, herder: ClusterHost) -> None:
        """Join the group and apply assignments until cancelled; leaving the group is in ``finally``."""
        self._herder = herder
        try:
            await self.member.start()
            while True:
                assignment, generation = await self._pending.get()
                while not self._pending.empty():  # only the newest assignment counts
                    assignment, generation = self._pending.get_nowait()
                if not self._closing:
                    self._applying = True
                    try:
                        await self._apply(herder, assignment, generation)
                    finally:
                        self._applying = False
        finally:
            self._cancel_timer()
            if self._key_timer is not None:
                self._key_timer.cancel()
            if self._rotation is not None:
                self._rotation.cancel()
            await self.member.stop()

    async def leave(self) -> None:
        """Stop applying assignments (shutdown: the herder stops the work, then the member leaves)."""
        self._closing = True

    def _received(self, assignment: Assignment, generation: int) -> None:
        if not assignment.error:
            self._promised, self._promised_view = assignment.assigned, assignment.view
        self._pending.put_nowait((assignment, generation))

    def _cut_off(self) -> None:
        """The member lost the coordinator past Connect's rule (``member.cut_off_after_s``): revoke
        the whole assignment now (Connect's ``onRevoked`` from ``WorkerCoordinator.poll``), so the
        member rejoins owning nothing and the leader never sees its work twice. The generation stays
        the one the work ran in: the UNASSIGNED statuses the stops write carry it, and the status
        store keeps the new owner's newer ones (``engine.storage.status``)."""
        old = self.owned
        herder = self._herder
        self._promised = Work()
        while not self._pending.empty():  # assignments received before: stale, their generation is over
            self._pending.get_nowait()
        if not old or herder is None:
            return
        self.owned = Work()
        log.warning(
            "cluster.assignment_revoked_cut_off",
            worker=self.worker_id,
            generation=self.generation,
            connectors=len(old.connectors),
            tasks=len(old.tasks),
            reason="the group coordinator was unreachable: stopping this worker's connectors and tasks "
            "before the group hands them to other workers",
        )
        revoking = asyncio.get_running_loop().create_task(
            _reconcile(herder, sorted(old.connectors | {c for c, _ in old.tasks}))
        )
        self._revoking = revoking  # awaited by the next assignment's ``_apply``

    async def _apply(self, herder: ClusterHost, assignment: Assignment, generation: int) -> None:
        if assignment.error:
            log.error("cluster.assignment_error", error=assignment.error, generation=generation)
            return
        if self._revoking is not None:  # a cut-off's stops write their UNASSIGNED in the old generation
            await self._revoking
        try:
            await herder.wait_read(assignment.config_offset, self.settings.sync_timeout_s)
        except TimeoutError:
            log.warning("cluster.config_behind_leader", wanted=assignment.config_offset, read=herder.read_end)
        if not self.member.in_contact():  # cut off meanwhile: the assignment's generation is over
            if self._pending.empty():  # nothing newer came: the next join says what still runs here
                self._promised, self._promised_view = self.owned, self.view
            return
        old, new = self.owned, assignment.assigned
        self.owned, self.generation, self.view = new, generation, assignment.view
        self.leader, self.leader_url, self.urls = assignment.leader, assignment.leader_url, assignment.urls
        if assignment.config_offset > self._rebalance_wanted_at:
            self._rebalance_wanted_at = -1
            self.member.change_covered()
        changed = sorted((old.connectors ^ new.connectors) | {c for c, _ in old.tasks ^ new.tasks})
        self._releasing = old - new
        try:
            await _reconcile(herder, changed)
        finally:
            self._releasing = Work()
        self.rebalances_applied += 1
        self._check_key_rotation()
        self._joined.set()
        log.info(
            "cluster.assignment_applied",
            worker=self.worker_id,
            generation=generation,
            leader=assignment.leader,
            connectors=len(new.connectors),
            tasks=len(new.tasks),
            started=(new - old).size,
            stopped=(old - new).size,
            revoked=assignment.revoked.size,
        )
        if assignment.revoked:
            self.member.request_rejoin()  # phase two: the freed work goes to its new owner
        elif self.needs_rebalance and (self.is_leader or self.leader is None):
            # a change read after the leader planned; its rejoin request may have been swallowed
            # by the rebalance in progress (aiokafka resets the rejoin flag when a join completes)
            self.member.request_rejoin_for_change()
        self._cancel_timer()
        if self.is_leader and assignment.rejoin_after_ms is not None:
            self._timer = self._timers.call_later(
                assignment.rejoin_after_ms / 1000 + 0.05, self.member.request_rejoin
            )

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    # ---- the group protocol's callbacks ----------------------------------------------------

    def _join_metadata(self) -> JoinMetadata:
        herder = self._herder
        read_end = herder.read_end if herder is not None else 0
        deleting = frozenset(herder.cleanups.deleting) if herder is not None else frozenset()
        owned = self._promised | self.owned | self._releasing
        return JoinMetadata(self.worker_id, self.settings.url, read_end, owned, deleting, self._promised_view)

    def _plan(
        self, members: Mapping[str, JoinMetadata], leader: str, generation: int
    ) -> dict[str, Assignment]:
        herder = self._herder
        if herder is None or leader not in members:
            return {}
        snapshot = herder.snapshot
        connectors = frozenset(snapshot.connectors)
        tasks = frozenset((c, n) for c in connectors for n in range(len(snapshot.tasks.get(c, ()))))
        cleanups = frozenset(snapshot.pending_cleanups) - connectors
        behind = max((m.config_offset for m in members.values()), default=0) - herder.read_end
        if behind > 0:  # plan anyway: reading a record that changes the work triggers another round
            log.info("cluster.leader_behind", records=behind)
        return plan(
            members,
            ClusterWork(connectors, tasks, cleanups),
            leader=leader,
            generation=generation,
            config_offset=herder.read_end,
            now_ms=int(self._timers.time() * 1000),
            delay_ms=self.settings.scheduled_rebalance_max_delay_ms,
        )


async def _reconcile(herder: ClusterHost, connectors: list[str]) -> None:
    """Every named connector's actor matches what runs here to the assignment; returns once all did.

    Handed out a chunk at a time (``engine.herder.pacing``): thousands at once held the event loop for
    seconds, and REST requests with it."""
    loop = asyncio.get_running_loop()
    done: list[asyncio.Future[None]] = []

    def post(name: str) -> None:
        future: asyncio.Future[None] = loop.create_future()
        herder.post(name, Reconcile(future))
        done.append(future)

    await paced(connectors, post)
    for future in done:  # most are done by now: a gather would queue a callback for each of them
        if not future.done():
            await future
