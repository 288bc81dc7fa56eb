"""The herder: reads the config log, keeps its snapshot, and routes each change to its connector.

It is the only place that turns log records into lifecycle work (``docs/ARCHITECTURE.md``,
"Config log"): API calls append records and then wait until the herder has applied them.
"""

from __future__ import annotations

import asyncio
import contextvars
import time
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

import structlog

from engine.config.worker import WorkerConfig
from engine.configlog.base import ConfigLog
from engine.configlog.codec import decode, encode
from engine.configlog.records import (
    ConfigRecord,
    ConnectorConfigRecord,
    ConnectorTombstone,
    LoggerLevelRecord,
    PendingCleanupCleared,
    PendingCleanupRecord,
    TaskCommitRecord,
    TaskConfigRecord,
)
from engine.configlog.snapshot import ConfigSnapshot
from engine.errors import CorruptRecord, EngineNotRunning
from engine.herder.activity import Activity
from engine.herder.cleanups import Cleanups
from engine.herder.connector_actor import ConnectorActor
from engine.herder.messages import (
    AwaitStarted,
    Boot,
    FromLog,
    Marker,
    Message,
    Reconcile,
    RunCleanup,
    Shutdown,
)
from engine.herder.ownership import Ownership, StandaloneOwnership
from engine.herder.timers import LoopTimers, Timers
from engine.herder.transition_feed import TransitionEvent, TransitionFeed
from engine.observability.log_levels import LOG_LEVELS, InvalidLogLevel
from engine.observability.metrics import EngineMetrics
from engine.storage.base import OffsetStore, StatusStore
from states import TransitionRecord

if TYPE_CHECKING:
    from engine.worker.data_plane import DataPlane

log = structlog.get_logger(component="herder")


class Herder:
    """Owns every connector actor; lives inside the engine's TaskGroup until shutdown."""

    def __init__(
        self,
        config_log: ConfigLog,
        status: StatusStore,
        offsets: OffsetStore,
        worker: WorkerConfig,
        tg: asyncio.TaskGroup,
        feed: TransitionFeed | None = None,
        metrics: EngineMetrics | None = None,
        data: DataPlane | None = None,
        ownership: Ownership | None = None,
        timers: Timers | None = None,
    ) -> None:
        self.log = config_log
        self.timers: Timers = timers if timers is not None else LoopTimers()  # auto-restart backoffs
        # what this worker runs: everything standalone, what the group assigns in a cluster
        self.ownership: Ownership = ownership if ownership is not None else StandaloneOwnership()
        self.data = data
        self.status = status
        self.metrics = metrics if metrics is not None else EngineMetrics(status)
        self._transition_counts = self.metrics.transitions.values
        self.offsets = offsets
        self.worker = worker
        self._tg = tg
        self.snapshot = ConfigSnapshot()
        self.feed = feed if feed is not None else TransitionFeed()
        self.skipped_records = 0
        self.read_end = 0  # one past the last log offset the reader has handled
        self._actors: dict[str, ConnectorActor] = {}
        self.activity = Activity(self._actors.get)
        self._actor_tasks: dict[str, asyncio.Task[None]] = {}
        self._applied: dict[str, int] = {}
        self._waiters: dict[str, list[tuple[int, asyncio.Future[None]]]] = {}
        self._read_waiters: list[tuple[int, asyncio.Future[None]]] = []
        self._loop = asyncio.get_running_loop()
        self._failure: BaseException | None = None
        self._booted = False
        self._closing = False
        self._spawned: set[asyncio.Task[None]] = set()
        self._forget_spawned = self._spawned.discard
        self._plain_context = contextvars.Context()
        self.cleanups = Cleanups(self)  # deletions' unfinished cleanups: attempts, retries, outcomes
        self.metrics.scheduled_restarts = lambda: sum(
            a.restarts.scheduled for a in list(self._actors.values())
        )
        # Bound once (structlog's cache-on-first-use, per engine): the lazy module logger would
        # assemble a new bound logger for every transition, even when INFO is filtered out.
        self._transition_log = log.bind()

    # ---- ActorServices ---------------------------------------------------------------------

    def spawn(self, coro: Coroutine[Any, Any, None], name: str) -> asyncio.Task[None]:
        task = self._tg.create_task(coro, name=name)
        self._spawned.add(task)
        # one shared callback and context: by default each registration copies the context
        task.add_done_callback(self._forget_spawned, context=self._plain_context)
        return task

    async def append(self, records: list[ConfigRecord]) -> int:
        return await self.log.append([encode(r) for r in records])

    async def submit_task_configs(self, connector: str, configs: list[dict[str, str]]) -> None:
        """Task configs and their commit (Kafka's ``KafkaConfigBackingStore.putTaskConfigs``); in a cluster
        only the leader writes them."""
        if not self.ownership.is_leader and await self.ownership.forward_task_configs(connector, configs):
            return
        records: list[ConfigRecord] = [TaskConfigRecord(connector, n, c) for n, c in enumerate(configs)]
        records.append(TaskCommitRecord(connector, len(configs)))
        await self.append(records)

    @property
    def distributed(self) -> bool:
        return self.ownership.distributed

    @property
    def generation(self) -> int:
        """The group generation statuses carry (0 outside a cluster, as in Connect standalone)."""
        return max(self.ownership.generation, 0)

    def owns_connector(self, connector: str) -> bool:
        return self.ownership.owns_connector(connector)

    def owns_task(self, connector: str, task: int) -> bool:
        return self.ownership.owns_task(connector, task)

    def post(self, connector: str, message: Message) -> None:
        if self._closing and connector not in self._actors:
            return
        self._actor(connector).mailbox.put(message)

    def post_threadsafe(self, connector: str, message: Message) -> None:
        self._loop.call_soon_threadsafe(self.post, connector, message)

    def published(self, record: TransitionRecord, trace: str | None) -> None:
        event = "connector.state_changed" if record.task is None else "task.state_changed"
        counts = self._transition_counts
        key = (
            "connector" if record.task is None else "task",
            record.trigger,
            record.from_state,
            record.to_state,
        )
        counts[key] = counts.get(key, 0.0) + 1
        extra = {"trace": trace} if trace else {}  # a failure's trace stays in the log, whatever REST shows
        self._transition_log.info(
            event,
            connector=record.connector,
            task=record.task,
            trigger=record.trigger,
            from_state=record.from_state,
            to_state=record.to_state,
            worker=self.worker.worker_id,
            **extra,
        )
        if self.feed.listened:
            self.feed.publish(
                TransitionEvent(
                    record.connector,
                    record.task,
                    record.trigger,
                    record.from_state,
                    record.to_state,
                    trace,
                    time.time(),
                )
            )

    def applied(self, connector: str, offset: int) -> None:
        self._applied[connector] = max(offset, self._applied.get(connector, -1))
        waiters = self._waiters.get(connector)
        if not waiters:
            return
        remaining = []
        for wanted, future in waiters:
            if wanted <= offset:
                if not future.done():
                    future.set_result(None)
            else:
                remaining.append((wanted, future))
        if remaining:
            self._waiters[connector] = remaining
        else:
            del self._waiters[connector]

    # ---- actors ---------------------------------------------------------------------------

    @property
    def live_actors(self) -> list[str]:
        """Connectors that have an actor right now, idle or running (diagnostics, leak checks)."""
        return sorted(self._actors)

    def _actor(self, name: str) -> ConnectorActor:
        actor = self._actors.get(name)
        if actor is None:
            actor = self._actors[name] = ConnectorActor(name, self)
        return actor

    def wake(self, actor: ConnectorActor) -> None:
        """A message was queued for ``actor``: start its coroutine unless one runs (an idle actor
        keeps none), and mark it for the quiet checks."""
        self.activity.actor_active(actor)
        if actor.running or self._actors.get(actor.name) is not actor:
            return
        try:
            task = self._tg.create_task(self._run_actor(actor), name=f"actor:{actor.name}")
        except RuntimeError:  # the task group is shutting down after a failure: nothing runs any more
            return
        actor.running = True
        self._actor_tasks[actor.name] = task

    async def _run_actor(self, actor: ConnectorActor) -> None:
        try:
            await actor.run()
        finally:
            if self._actor_tasks.get(actor.name) is asyncio.current_task():
                del self._actor_tasks[actor.name]
            if actor.running:  # finished, failed or cancelled (a return on an empty mailbox clears it)
                actor.running = False
                if self._actors.get(actor.name) is actor:
                    del self._actors[actor.name]
                    left = actor.mailbox.drain()
                    if not self._closing:
                        self._hand_over(actor.name, left)

    def _hand_over(self, name: str, left: list[Message]) -> None:
        """Messages a destroyed actor left: log events start a new incarnation; the rest is stale.

        Offsets alone (markers, or the last records of a deletion) are applied here: a new actor
        started only to acknowledge them would wait on its mailbox forever.
        """
        if any(isinstance(m, (FromLog, Boot, RunCleanup, Reconcile)) for m in left):
            for message in left:
                self.post(name, message)
            return
        for message in left:
            if isinstance(message, Marker):
                self.applied(name, message.offset)
            elif isinstance(message, AwaitStarted) and not message.done.done():
                message.done.set_result(None)  # the connector is gone: nothing more will start

    # ---- reading the log ------------------------------------------------------------------

    async def run(self, ready: asyncio.Future[None]) -> None:
        """Replay the log into the snapshot, boot what it holds, then apply new records live."""
        # the end is probed while the reader already replays: catching up costs one round trip less
        probe = asyncio.ensure_future(self.log.end_offset())
        probe.add_done_callback(lambda _: self._maybe_boot(probe, ready))
        try:
            async for entry in self.log.entries():
                self.read_end = entry.offset + 1
                if self._read_waiters:
                    self._wake_readers()
                try:
                    record = decode(entry.key, entry.value)
                except CorruptRecord as exc:
                    self.skipped_records += 1
                    log.warning(
                        "configlog.record_skipped", key=exc.key, reason=exc.reason, offset=entry.offset
                    )
                    record = None
                if not self._booted:
                    if record is not None:
                        self.snapshot.apply(record, entry.offset)
                    self._maybe_boot(probe, ready)
                    continue
                if record is not None:
                    self._route(record, entry.offset)
        except BaseException as exc:
            probe.cancel()
            self._fail_waiters(exc)
            raise

    def _maybe_boot(self, probe: asyncio.Future[int], ready: asyncio.Future[None]) -> None:
        """Boot once the replay has reached the end the probe saw (or fail start-up with the probe)."""
        if self._booted or ready.done() or not probe.done():
            return
        if probe.cancelled():
            return
        if (error := probe.exception()) is not None:
            ready.set_exception(error)
            return
        if self.read_end >= probe.result():
            self._boot()
            ready.set_result(None)

    def _route(self, record: ConfigRecord, offset: int) -> None:
        if isinstance(record, LoggerLevelRecord):
            _apply_cluster_level(record.namespace, record.level)
            return
        if self.ownership.distributed and self._changes_work(record):
            self.ownership.work_changed(offset)
        event = self.snapshot.apply(record, offset)
        if isinstance(record, (PendingCleanupRecord, PendingCleanupCleared)):
            self.cleanups.read_back(record)
        name = getattr(record, "connector", None)
        if event is not None:
            self.post(event.connector, FromLog(event, offset))
        elif name is not None:
            if name in self._actors:
                self.post(name, Marker(offset))
            else:
                self.applied(name, offset)

    def _changes_work(self, record: ConfigRecord) -> bool:
        """Does this record (not yet applied) add or remove a connector, task or cleanup? Then rebalance."""
        snap = self.snapshot
        match record:
            case ConnectorConfigRecord(connector=name):
                return name not in snap.connectors
            case ConnectorTombstone(connector=name):
                return name in snap.connectors
            case TaskCommitRecord(connector=name, tasks=count):
                return name in snap.connectors and count != len(snap.tasks.get(name, ()))
            case PendingCleanupRecord(connector=name) | PendingCleanupCleared(connector=name):
                return True
        return False

    def _boot(self) -> None:
        self._booted = True
        snap = self.snapshot
        log.info(
            "configlog.caught_up",
            connectors=len(snap.connectors),
            pending_cleanups=len(snap.pending_cleanups),
            skipped=self.skipped_records,
        )
        # unlike Connect, which ignores the levels written before it started, a worker that joins
        # later takes the cluster's levels too (docs/compatibility.md, "Cluster-wide log levels")
        for namespace, level in snap.logger_levels.items():
            _apply_cluster_level(namespace, level)
        for name, config in snap.connectors.items():
            self.post(
                name,
                Boot(
                    config,
                    snap.target(name),
                    snap.tasks.get(name, ()),
                    snap.applied.get(name),
                    snap.incarnations.get(name, ""),
                ),
            )
        if self.ownership.distributed:
            return  # a cleanup runs where the group assigns it, once assignments come
        for name, record in snap.pending_cleanups.items():
            if name not in snap.connectors:
                self.post(name, RunCleanup(record))

    # ---- quiescence ------------------------------------------------------------------------

    def busy_count(self, parked: Callable[[str, str], bool]) -> int:
        """Actors handling a message, runners in flight, late cleanups not parked on purpose, clears not
        written back yet: 0 means nothing will change by itself (scheduled retries aside)."""
        # an auto-restart waiting for its backoff is a timer: its message, once posted, makes its actor busy
        return self.activity.busy_count(parked) + self.cleanups.busy(parked)

    # ---- what API calls wait on -----------------------------------------------------------

    async def wait_applied(self, connector: str, offset: int) -> None:
        if self._failure is not None:
            raise EngineNotRunning(f"The engine has stopped: {self._failure!r}")
        if self._applied.get(connector, -1) >= offset:
            return
        future: asyncio.Future[None] = self._loop.create_future()
        self._waiters.setdefault(connector, []).append((offset, future))
        await future

    async def wait_started(self, connector: str, timeout: float) -> None:
        """Until the connector's latest configuration started it (or failed, or settled paused or
        stopped) and its task configs are applied; ``TimeoutError`` after ``timeout``."""
        done: asyncio.Future[None] = self._loop.create_future()
        self.post(connector, AwaitStarted(done))
        async with asyncio.timeout(timeout):
            await done

    async def wait_read(self, offset: int, timeout: float) -> None:
        """Return once every config record before ``offset`` has been read (a leader's assignment offset)."""
        if self.read_end >= offset:
            return
        future: asyncio.Future[None] = self._loop.create_future()
        self._read_waiters.append((offset, future))
        async with asyncio.timeout(timeout):
            await future

    def _wake_readers(self) -> None:
        still = []
        for wanted, future in self._read_waiters:
            if wanted <= self.read_end:
                if not future.done():
                    future.set_result(None)
            elif not future.done():
                still.append((wanted, future))
        self._read_waiters = still

    def _fail_waiters(self, exc: BaseException) -> None:
        self._failure = exc
        for waiters in self._waiters.values():
            for _, future in waiters:
                if not future.done():
                    future.set_exception(EngineNotRunning(f"The engine has stopped: {exc!r}"))
        self._waiters.clear()

    def abort(self) -> None:
        """A crash: abandon every runner so nothing they do later is written anywhere."""
        self._closing = True
        self.cleanups.close()
        self._fail_waiters(EngineNotRunning("The engine was aborted"))
        for actor in self._actors.values():
            actor.abandon_runners()
        self.feed.close()

    async def shutdown(self) -> None:
        """Stop every connector and task with plain ``stop()`` (statuses UNASSIGNED)."""
        self._closing = True
        self.cleanups.close()
        for name in list(self._actors):
            self.post(name, Shutdown())
        tasks = list(self._actor_tasks.values())
        if tasks:
            await asyncio.wait(tasks)
        for task in list(self._spawned):
            task.cancel()
        self.feed.close()


def _apply_cluster_level(namespace: str, level: str) -> None:
    """A ``logger-cluster-`` record read from the log: every worker applies it (KIP-976)."""
    try:
        LOG_LEVELS.set(namespace, level)
    except InvalidLogLevel:
        log.warning("configlog.logger_level_ignored", namespace=namespace, level=level)
        return
    log.info("logger.cluster_level_applied", namespace=namespace, level=level)
