"""The embedded engine: ``async with Engine(config) as engine:`` and the calls users make on it."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import inspect
import json
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

import structlog

from engine import offsets_admin
from engine.api._invoke import CALLBACK_TIMER, TASK_THREADS
from engine.api.connector import Connector
from engine.config.worker import WorkerConfig
from engine.configlog.base import ConfigLog
from engine.configlog.factory import open_config_log
from engine.configlog.records import (
    ConfigRecord,
    ConnectorConfigRecord,
    ConnectorTombstone,
    LoggerLevelRecord,
    PendingCleanupRecord,
    RestartRecord,
    TargetStateRecord,
    TargetStateTombstone,
    TaskCommitRecord,
    TaskCountRecord,
    TaskRestartRecord,
)
from engine.errors import (
    CleanupPending,
    ConfigError,
    ConnectorAlreadyExists,
    ConnectorNotFound,
    EngineNotRunning,
    FencingConflict,
    Forbidden,
    InvalidRequest,
    NotLeader,
    OperationTimeout,
    RebalanceNeeded,
    SettleTimeout,
    StateTimeout,
    TaskNotFound,
)
from engine.herder.deletion import DeletionOutcome
from engine.herder.herder import Herder
from engine.herder.timers import LoopTimers, Timers
from engine.herder.transition_feed import Subscription, TransitionFeed
from engine.observability.connect_metrics import CoordinatorView
from engine.observability.log_levels import LOG_LEVELS
from engine.observability.metrics import EngineMetrics
from engine.observability.request_stage import enter_stage
from engine.plugins.discovery import UNDEFINED_VERSION, PluginRegistry, plugin_version
from engine.plugins.loading import connector_type, load_connector_class
from engine.plugins.reload import ReloadResult, connectors_using, reload_plugins
from engine.spark.metrics import prometheus_families
from engine.spark.settings import SparkSettings
from engine.spark.supervisor import SparkSupervisor
from engine.storage.base import OffsetStore, StatusStore
from engine.storage.factory import open_offset_store, open_status_store
from engine.storage.status import Status
from engine.topics.base import Topics
from engine.topics.factory import open_topics
from engine.validation.connector import check_name, validate_connector_config
from engine.worker.data_plane import DataPlane, DataSettings
from engine.worker.sink_loop import group_id as sink_group_id
from states import TargetState

if TYPE_CHECKING:
    from engine.distributed.cluster import Cluster
    from engine.distributed.forwarding import RestClient
    from engine.distributed.member import MemberFactory

# settled(): this many consecutive quiet looks, with loop turns between, rule out a message in transit
_SETTLED_POLLS = 5
_SETTLE_POLL_S = 0.002
_READ_BACK_TIMEOUT_S = 60.0  # a cluster-wide log level read back from the config topic


DEFAULT_GC_THRESHOLD = (700, 10, 10)  # CPython's
ENGINE_GC_THRESHOLD2 = 1000


def _fewer_full_collections() -> None:
    """Make CPython's full (oldest-generation) collections 100x rarer, once per process.

    A worker holds many long-lived objects (its runners, lifecycles and parked coroutines: about
    240 per connector with two tasks); with the default thresholds, full collections over them took
    about 40 % of the CPU of ``bench/lifecycle.py`` at 1,000 connectors. Young collections are
    untouched, so short-lived cycles go as soon as before. A process that set its own thresholds
    keeps them.
    """
    first, second, third = gc.get_threshold()
    if (first, second, third) == DEFAULT_GC_THRESHOLD:
        gc.set_threshold(first, second, ENGINE_GC_THRESHOLD2)


def _first_cause(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The first exception in ``group`` (nested groups searched) that is not a cancellation."""
    for exc in group.exceptions:
        found = _first_cause(exc) if isinstance(exc, BaseExceptionGroup) else exc
        if not isinstance(found, asyncio.CancelledError):
            return found
    return group


class Engine:
    """Runs connectors in this process; every call goes through the config log.

    With no config the log lives in memory. ``config.storage.file.filename`` makes it a durable
    file; ``bootstrap.servers`` (+ ``config.storage.topic``) makes it a Kafka topic.
    ``shutdown()`` is idempotent and safe before start: connectors and tasks get plain
    ``stop()``, never the deletion callbacks.
    """

    def __init__(
        self,
        worker_config: Mapping[str, str] | None = None,
        *,
        config_log: ConfigLog | None = None,
        offset_store: OffsetStore | None = None,
        topics: Topics | None = None,
        timers: Timers | None = None,
        status_store: StatusStore | None = None,
        membership: MemberFactory | None = None,
        rest_client: RestClient | None = None,
    ) -> None:
        """``config_log``/``offset_store``/``topics``/``status_store`` hand in stores that outlive this engine
        (tests, replays); ``timers`` is the clock auto-restart backoffs, rate-limit waits and the leader's
        rebalance delay run on (real time by default; scenarios and tests install a virtual one);
        ``membership`` and ``rest_client`` replace the broker's group and HTTP between workers (the
        scenario runner's in-process cluster)."""
        self.worker = WorkerConfig.parse(worker_config)
        self._timers: Timers = timers if timers is not None else LoopTimers()
        # group.id makes this engine a member of a distributed cluster (Kafka's DistributedHerder)
        self.cluster: Cluster | None = None
        if self.worker.get("group.id"):
            from engine.distributed.cluster import Cluster
            from engine.distributed.forwarding import RestClient
            from engine.distributed.settings import ClusterSettings

            self.cluster = Cluster(
                ClusterSettings.from_worker(self.worker),
                rest_client if rest_client is not None else RestClient(self.worker),
                member_factory=membership,
                timers=self._timers,
            )
        self.data_settings = DataSettings.parse(self.worker.raw)
        self.topics: Topics = topics if topics is not None else open_topics(self.worker)
        # one per engine; nothing Spark-related happens until a task first runs a job
        self.spark = SparkSupervisor(SparkSettings.from_worker(self.worker.raw))
        self._log: ConfigLog = config_log if config_log is not None else open_config_log(self.worker)
        client_id = f"connect-engine-{self.worker.worker_id}"
        own = self.worker.kafka.own()  # the worker's own clients: the top-level security settings
        self._status = (
            status_store
            if status_store is not None
            else open_status_store(self.worker.raw, client_id=client_id, client_args=own)
        )
        self._offsets = (
            offset_store
            if offset_store is not None
            else open_offset_store(self.worker.raw, client_id=client_id, client_args=own)
        )
        # this engine's own: several engines count apart; a cluster member reports only its own work
        self.metrics = EngineMetrics(
            self._status, worker_id=self.worker.worker_id if self.cluster is not None else None
        )
        if self.cluster is not None:
            cluster = self.cluster
            self.metrics.connect.rebalances = lambda: (cluster.rebalances_applied, cluster.generation)
            self.metrics.connect.coordinator = lambda: CoordinatorView(
                f"connect-engine-{cluster.worker_id}-group",
                len(cluster.owned.connectors),
                len(cluster.owned.tasks),
                cluster.rebalancing,
                cluster.leader or "",
                cluster.rebalances_applied,
                cluster.generation,
            )
        self.metrics.extra.append(lambda: prometheus_families(self.spark.metrics))
        self._herder: Herder | None = None
        self._feed = TransitionFeed()  # here, not in the herder, so subscribers can see the boot
        self._main: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()
        # what start() is doing, and since when (epoch ms): /health's "starting" answer names it
        self.startup_stage: tuple[str, int] = (
            "initializing and reading to the end of internal topics",
            _now_ms(),
        )

    # ---- lifecycle of the engine itself ---------------------------------------------------

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.shutdown()

    async def start(self) -> None:
        """Open the log and stores, replay the log, and return once every connector is booted."""
        if self._main is not None:
            return
        _fewer_full_collections()
        self.startup_stage = ("initializing and reading to the end of internal topics", _now_ms())
        # side by side: on Kafka each open is a few round trips (a worker joining a cluster waits on all)
        try:
            opened = await asyncio.gather(
                self._log.open(),
                self._status.open(),
                self._offsets.open(),
                self.topics.open(),
                return_exceptions=True,
            )
        except (
            asyncio.CancelledError
        ):  # stopped while starting (SIGTERM, a caller's timeout): nothing left open
            await self._close_stores()
            raise
        failure = next((r for r in opened if isinstance(r, BaseException)), None)
        if failure is not None:
            await self._close_stores()
            raise failure
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._main = asyncio.create_task(self._run(ready), name="engine")
        done, _ = await asyncio.wait({ready, self._main}, return_when=asyncio.FIRST_COMPLETED)
        if ready not in done:
            main, self._main = self._main, None  # raised here, once: shutdown() has nothing left to await
            try:
                await main  # re-raises why the engine could not start
            except BaseExceptionGroup as group:  # the task group's wrapping: the cause itself, said once
                raise _first_cause(group) from None
        if ready.exception() is not None:  # the log's end could not be read
            with contextlib.suppress(BaseExceptionGroup):  # the same failure, as the task group wraps it
                await self.abort()
            self._main = None
            raise ready.exception()  # type: ignore[misc]
        if self.cluster is not None:
            await self._join(self.cluster)

    async def _close_stores(self) -> None:
        for store in (self.topics, self._offsets, self._status, self._log):
            with contextlib.suppress(Exception):
                await store.close()

    async def _join(self, cluster: Cluster) -> None:
        """Distributed: return once the group has given this worker its first assignment."""
        assert self._main is not None
        self.startup_stage = ("ensuring membership in the cluster", _now_ms())
        # a broker may take a rebalance timeout or two (a dead member still listed) before a real plan
        joined = asyncio.ensure_future(
            cluster.joined(max(60.0, 2 * cluster.settings.rebalance_timeout_ms / 1000))
        )
        done, _ = await asyncio.wait({joined, self._main}, return_when=asyncio.FIRST_COMPLETED)
        if joined not in done:
            joined.cancel()
            await self._main
        try:
            joined.result()
        except TimeoutError:
            await self.shutdown()
            raise EngineNotRunning(
                f"Worker {self.worker.worker_id} did not join group {cluster.settings.group_id} in time"
            ) from None

    async def _run(self, ready: asyncio.Future[None]) -> None:
        CALLBACK_TIMER.set(self.metrics.callback)  # this task's context: every unit and runner inherits it
        # tasks' synchronous poll()/put() get threads of their own, apart from the lifecycle calls'
        task_threads = ThreadPoolExecutor(
            self.data_settings.task_threads_max, thread_name_prefix="connect-task"
        )
        TASK_THREADS.set(task_threads)
        if self.cluster is not None:  # every log line, and every callback's thread, knows which worker it is
            structlog.contextvars.bind_contextvars(worker=self.worker.worker_id)
        try:
            async with asyncio.TaskGroup() as tg:
                data = DataPlane(
                    self.topics,
                    self.worker.raw,
                    self._offsets,
                    self._status,
                    self.data_settings,
                    self.worker.worker_id,
                    self.spark,
                    metrics=self.metrics.connect,
                    clients=self.worker.kafka,
                    timers=self._timers,
                )
                self._herder = Herder(
                    self._log,
                    self._status,
                    self._offsets,
                    self.worker,
                    tg,
                    self._feed,
                    self.metrics,
                    data,
                    ownership=self.cluster,
                    timers=self._timers,
                )
                reader = tg.create_task(self._herder.run(ready), name="configlog-reader")
                member = None
                if self.cluster is not None:
                    member = tg.create_task(self._membership(self.cluster, self._herder, ready), name="group")
                await self._stop.wait()
                if self.cluster is not None:
                    await self.cluster.leave()
                await self._herder.shutdown()
                await self._status.flush()
                if member is not None:  # after every unit stopped: leaving hands the work to the others
                    member.cancel()
                reader.cancel()
        finally:
            # a poll() still running was abandoned with its task: its thread is not waited for
            task_threads.shutdown(wait=False, cancel_futures=True)
            await self.spark.shutdown()  # after every task stopped: no job outlives its task
            await self.topics.close()
            await self._log.close()
            await self._status.close()
            await self._offsets.close()

    @staticmethod
    async def _membership(cluster: Cluster, herder: Herder, booted: asyncio.Future[None]) -> None:
        await asyncio.shield(booted)  # join with the whole config log read: the leader plans from it
        await cluster.run(herder)

    async def run(self) -> None:
        """Run until cancelled or ``shutdown()``; for programs whose whole job is the engine."""
        await self.start()
        assert self._main is not None
        try:
            await asyncio.shield(self._main)
        finally:
            await self.shutdown()

    async def shutdown(self) -> None:
        self._stop.set()
        if self._main is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._main

    async def abort(self) -> None:
        """Stop at once, as a killed process would: no ``stop()``, no status writes, nothing flushed.

        For crash tests: whatever the config log holds is all a restarted engine will know.
        """
        self._stop.set()
        main = self._main
        if main is not None and not main.done():
            if self._herder is not None:
                self._herder.abort()
            main.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await main

    async def settled(
        self, *, parked: Callable[[str, str], bool] = lambda connector, unit: False, timeout: float = 30.0
    ) -> None:
        """Return once every record is applied and no connector or task has work in flight.

        ``parked(connector, unit)`` (unit ``"connector"`` or ``"task-N"``) names callbacks stuck
        on purpose, such as a test's injected block, so they do not keep the engine from settling.
        Raises ``SettleTimeout`` after ``timeout``.
        """
        herder = self.herder
        calm = 0
        try:
            async with asyncio.timeout(timeout):
                while calm < _SETTLED_POLLS:
                    # units append as they work (task configs), so the end is re-read when all is quiet
                    quiet = (
                        herder.busy_count(parked) == 0 and herder.read_end >= await herder.log.end_offset()
                    )
                    calm = calm + 1 if quiet else 0
                    await asyncio.sleep(0 if calm else _SETTLE_POLL_S)
        except TimeoutError:
            raise SettleTimeout(
                f"The engine did not settle within {timeout:g} s: "
                f"{herder.busy_count(parked)} unit(s) or runner(s) still busy"
            ) from None

    @property
    def herder(self) -> Herder:
        if self._herder is None or self._main is None or self._main.done():
            raise EngineNotRunning
        return self._herder

    @property
    def skipped_records(self) -> int:
        """Config-log records skipped as malformed since start."""
        return self.herder.skipped_records

    # ---- writing intent -------------------------------------------------------------------

    def _lock(self, name: str) -> asyncio.Lock:
        lock = self._locks.get(name)
        if lock is None:
            lock = asyncio.Lock()
            self._locks[name] = lock
        return lock

    async def _write(self, name: str, records: Sequence[ConfigRecord]) -> None:
        enter_stage(f"writing a config for connector {name} to the config topic")
        herder = self.herder
        offset = await herder.append(list(records))
        await herder.wait_applied(name, offset)

    def _leader_only(self) -> None:
        """Distributed: leader-only writes fail fast on a follower or while a rebalance is due (Kafka's
        ``DistributedHerder``: ``NotLeaderException``, ``RebalanceNeededException``)."""
        cluster = self.cluster
        if cluster is None:
            return
        if cluster.needs_rebalance:
            raise RebalanceNeeded
        if not cluster.is_leader:
            raise NotLeader(cluster.leader_url)

    def _require(self, name: str) -> dict[str, str]:
        config = self.herder.snapshot.connectors.get(name)
        if config is None:
            raise ConnectorNotFound(name)
        return config

    async def _checked_config(self, name: str, config: Mapping[str, str]) -> dict[str, str]:
        check_name(name)
        full = {str(k): v for k, v in config.items()}
        given = full.setdefault("name", name)
        if given != name:
            raise ConfigError(
                f"Connector name configuration ({given}) doesn't match connector name in the URL ({name})"
            )
        # as Connect's validateConnectorConfig: the connector validates what it will be started with, its
        # ${provider:path:key} references resolved (the log keeps the references); one that does not resolve
        # is left as written here, and fails the connector when it starts, naming the key
        try:
            resolved = self.worker.transformer.resolve(full)
        except ConfigError:
            resolved = full
        await validate_connector_config(
            resolved, timeout=self.worker.callback_timeout, clients=self.worker.kafka
        )
        if self.cluster is not None:
            from engine.distributed.sink_group import check_sink_group

            check_sink_group(name, full, self.cluster.settings.group_id)
        if self.data_settings.exactly_once:
            from engine.worker.exactly_once import check_connector

            check_connector(load_connector_class(full.get("connector.class", "")), full)
        return {k: str(v) for k, v in full.items()}

    async def create_connector(
        self,
        name: str,
        config: Mapping[str, str],
        initial_state: str | TargetState | None = None,
        *,
        wait_started: bool = True,
        initial_offsets: Sequence[Any] | None = None,
    ) -> dict[str, Any]:
        """Create a connector (RUNNING, or ``initial_state`` RUNNING/PAUSED/STOPPED); returns its info once
        it started (or failed) and its tasks are configured, so its status is there to read.
        ``wait_started=False`` returns once the config is written (scenarios settle instead).

        ``initial_offsets`` (KIP-995): KIP-875 offsets the connector starts from, checked as
        ``PATCH /offsets`` checks them before anything is written; the connector is written STOPPED,
        its offsets set, then moved to ``initial_state``. The info then has ``offsets_status``."""
        target = _target(initial_state)
        self._leader_only()
        checked = await self._checked_config(name, config)
        async with self._lock(name):
            if name in self.herder.snapshot.connectors:
                raise ConnectorAlreadyExists(name)
            await self._previous_cleanup_done(name)
            initial = (
                None
                if initial_offsets is None
                else await offsets_admin.check_initial(
                    load_connector_class(checked.get("connector.class", "")), name, checked, initial_offsets
                )
            )
            records: list[ConfigRecord] = []
            if initial is not None:
                records.append(TargetStateRecord(name, TargetState.STOPPED))
            elif target is not None:
                records.append(TargetStateRecord(name, target))
            records.append(ConnectorConfigRecord(name, checked))
            await self._write(name, records)
            if initial is not None:
                await offsets_admin.write_initial(
                    initial, self._offsets, self.topics, name, sink_group_id(name, checked)
                )
                if target is not TargetState.STOPPED:
                    await self._write(name, [TargetStateRecord(name, target or TargetState.STARTED)])
        if wait_started:
            await self._started(name)  # outside the lock: a delete may come in while it starts, as in Connect
        info = await self.connector_info(name)
        if initial is not None:
            info["offsets_status"] = initial.message
        return info

    async def put_connector_config(
        self, name: str, config: Mapping[str, str], *, wait_started: bool = True
    ) -> dict[str, Any]:
        """Create or replace a connector's config; the target state is left as it is. Returns once the
        connector (re)started and its tasks are configured, unless ``wait_started=False``."""
        _, info = await self.put_connector_config_created(name, config, wait_started=wait_started)
        return info

    async def put_connector_config_created(
        self, name: str, config: Mapping[str, str], *, wait_started: bool = True
    ) -> tuple[bool, dict[str, Any]]:
        """``put_connector_config``, also saying whether it created the connector (Connect's
        ``Herder.Created``: REST answers 201 then, 200 for an update). Whether it creates and the info
        it returns are decided under the connector's lock, as Connect's herder serialises a PUT with a
        DELETE: a DELETE that comes after cannot turn the answer into a 404."""
        self._leader_only()
        checked = await self._checked_config(name, config)
        async with self._lock(name):
            incarnation = self.herder.snapshot.incarnations.get(name)
            created = name not in self.herder.snapshot.connectors
            if created:
                await self._previous_cleanup_done(name)
                incarnation = None  # a creation: its record's offset becomes the incarnation
            await self._write(name, [ConnectorConfigRecord(name, checked, incarnation)])
            info = await self.connector_info(name)
        if wait_started:
            await self._started(name)
            with contextlib.suppress(ConnectorNotFound):  # deleted meanwhile: the answer is the write's
                info = await self.connector_info(name)
        return created, info

    async def _started(self, name: str) -> None:
        """Read-your-writes, as Kafka's standalone herder answers: once the connector started (or
        failed) and its tasks are configured, so a status read right after never misses. In a
        cluster the owner may be another worker: the write is the answer, as in Connect."""
        if self.cluster is not None:
            return
        enter_stage(f"starting connector {name}")
        try:
            await self.herder.wait_started(name, self.worker.callback_timeout)
        except TimeoutError:
            if self.herder.status.connector(name) is None:  # a task slow to start is no reason to fail
                raise OperationTimeout(f"starting connector {name}") from None

    async def _previous_cleanup_done(self, name: str) -> None:
        """Creating a name whose previous incarnation is still being cleaned up waits for that cleanup,
        at most ``connector.deleted.timeout.ms``, then fails with ``CleanupPending`` (409): an old
        ``deleted()`` must never run beside a new ``start()``."""
        herder = self.herder
        if not herder.cleanup_pending(name):
            return
        enter_stage(f"waiting for the cleanup of a previous connector named {name}")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.worker.deleted_timeout
        while herder.cleanup_pending(name):
            if loop.time() >= deadline:
                known = herder.cleanups.get(name)
                record = herder.snapshot.pending_cleanups.get(name)
                incarnation = (
                    known.incarnation if known is not None else record.incarnation if record else None
                )
                detail = f"incarnation {incarnation}"
                if known is not None:
                    detail += f", {known.state.value.lower()} after {known.attempts} attempt(s)"
                raise CleanupPending(name, detail)
            await asyncio.sleep(0.05)

    async def pause_connector(self, name: str) -> None:
        """Ask for PAUSED; returns once the connector's actor has applied the request (its runners are told),
        not once they are paused.

        As in Connect, where ``PUT /pause`` answers 202 Accepted: the connector and each task then pause
        on their own and report PAUSED (a task busy in ``poll`` or ``put`` first finishes that call), so
        the state follows shortly. ``await engine.wait_for_state(name, "PAUSED", tasks=n)`` waits for it.
        """
        await self._set_target(name, TargetState.PAUSED)

    async def resume_connector(self, name: str) -> None:
        """Ask for RUNNING again; returns as ``pause_connector`` does, before the tasks report RUNNING
        (``wait_for_state(name, "RUNNING", tasks=n)`` waits for that)."""
        await self._set_target(name, TargetState.STARTED)

    async def stop_connector(self, name: str) -> None:
        """STOPPED: every task is shut down and its config removed (0 tasks), as KIP-875 does."""
        self._leader_only()
        async with self._lock(name):
            self._require(name)
            await self._write(name, [TaskCommitRecord(name, 0), TargetStateRecord(name, TargetState.STOPPED)])

    async def _set_target(self, name: str, target: TargetState) -> None:
        async with self._lock(name):
            self._require(name)
            await self._write(name, [TargetStateRecord(name, target)])

    async def restart_connector(
        self, name: str, include_tasks: bool = False, only_failed: bool = False
    ) -> dict[str, Any] | None:
        """Plain restart (both False) returns None; otherwise the KIP-745 plan (RESTARTING marks)."""
        self._leader_only()
        async with self._lock(name):
            self._require(name)
            plan = None
            if include_tasks or only_failed:
                plan = self._restart_plan(name, include_tasks, only_failed)
            await self._write(name, [RestartRecord(name, include_tasks, only_failed)])
        return plan

    def _restart_plan(self, name: str, include_tasks: bool, only_failed: bool) -> dict[str, Any]:
        try:
            plan = self._state_info(name)
        except ConnectorNotFound:
            raise ConnectorNotFound(name, f"Status for connector {name} not found") from None
        if not only_failed or plan["connector"]["state"] == "FAILED":
            plan["connector"]["state"] = "RESTARTING"
        for task in plan["tasks"]:
            if include_tasks and (not only_failed or task["state"] == "FAILED"):
                task["state"] = "RESTARTING"
        return plan

    async def restart_task(self, name: str, task: int) -> None:
        self._leader_only()
        async with self._lock(name):
            standalone = self.cluster is None  # Connect's two herders word these differently
            if name not in self.herder.snapshot.connectors:
                raise ConnectorNotFound(
                    name, f"Connector {name} not found" if standalone else f"Unknown connector: {name}"
                )
            if task < 0 or task >= len(self.herder.snapshot.tasks.get(name, ())):
                error = TaskNotFound(name, task)
                if standalone:
                    error.args = (f"Task {name}-{task} not found",)
                raise error
            await self._write(name, [TaskRestartRecord(name, task)])

    async def delete_connector(self, name: str) -> DeletionOutcome:
        """Delete and return once ``deleted()`` has run (or failed, or timed out: see the outcome).

        Distributed: returns once the tombstone is written and read back; the connector's owner
        runs ``deleted()`` when it reads it (the outcome says ``deferred``).
        """
        self._leader_only()
        async with self._lock(name):
            config = self._require(name)
            tasks = len(self.herder.snapshot.tasks.get(name, ()))
            # The pending cleanup goes first so a crash after the tombstone still runs deleted().
            incarnation = self.herder.snapshot.incarnations.get(name)
            records: list[ConfigRecord] = [
                PendingCleanupRecord(name, config, tasks, incarnation),
                ConnectorTombstone(name),
                TargetStateTombstone(name),
            ]
            if self.cluster is not None:
                enter_stage(f"writing a config for connector {name} to the config topic")
                offset = await self.herder.append(records)
                await self.herder.wait_read(offset + 1, self.worker.callback_timeout)
                return DeletionOutcome(name, succeeded=False, deferred=True)
            await self._write(name, records)
        outcome = self.herder.deletion_outcome(name)
        if outcome is None:  # the unit was cut off mid-deletion (abort): the pending cleanup remains
            raise EngineNotRunning(f"The engine stopped before the deletion of {name} finished")
        return outcome

    async def put_task_configs(self, name: str, configs: Sequence[Mapping[str, str]]) -> None:
        """Distributed, leader only: write task configs a connector's owner generated (the internal
        ``POST /connectors/{c}/tasks``), then their commit record."""
        if self.cluster is None:
            raise InvalidRequest("Task configs are written by the engine itself outside a cluster")
        if not self.cluster.is_leader:
            raise NotLeader(self.cluster.leader_url)
        self._require(name)
        await self.herder.submit_task_configs(name, [{str(k): str(v) for k, v in c.items()} for c in configs])

    async def fence_zombie_source_tasks(self, name: str) -> None:
        """Distributed, leader only: a round of zombie fencing for an exactly-once source connector
        (the internal ``PUT /connectors/{c}/fence``, Connect's ``DistributedHerder.fenceZombieSourceTasks``).

        When task configs were written after the connector's last task count record, the producers of
        that earlier generation (its recorded task count) are fenced out, then a ``tasks-fencing-<c>``
        record with the current task count is written; with no earlier record, or one task before and
        after, there is nothing to fence and only the record is written."""
        cluster = self.cluster
        if cluster is None:
            raise InvalidRequest(
                "Kafka Connect in standalone mode does not support exactly-once source connectors."
            )
        if not cluster.is_leader:
            raise NotLeader(cluster.leader_url)
        async with self._lock(name):
            snapshot = self.herder.snapshot
            config = snapshot.connectors.get(name)
            if config is None:
                raise ConnectorNotFound(name, f"Connector {name} not found")
            if self._type(config) != "source":
                raise InvalidRequest(f"Connector {name} is not a source connector")
            enter_stage(f"reading to the end of the config topic before fencing connector {name}")
            await self.herder.wait_read(await self.herder.log.end_offset(), cluster.settings.sync_timeout_s)
            if name not in snapshot.pending_fencing:
                return  # every earlier generation was fenced already
            previous = snapshot.task_count_records.get(name)
            tasks = snapshot.tasks.get(name, ())
            if previous is not None and (previous, len(tasks)) != (1, 1):
                from engine.worker.exactly_once import fence_producers

                enter_stage(f"initiating a round of zombie fencing for connector {name}")
                await fence_producers(
                    self.worker.raw, self.worker.kafka.worker_level("producer"), name, previous
                )
                await self.herder.wait_read(
                    await self.herder.log.end_offset(), cluster.settings.sync_timeout_s
                )
                if snapshot.tasks.get(name, ()) is not tasks:
                    raise FencingConflict(
                        "Fencing failed because new task configurations were generated for the connector"
                    )
            enter_stage(f"writing a task count record for connector {name} to the config topic")
            offset = await self.herder.append([TaskCountRecord(name, len(tasks))])
            await self.herder.wait_read(offset + 1, self.worker.callback_timeout)

    async def set_cluster_logger_level(self, namespace: str, level: str) -> None:
        """KIP-976 ``scope=cluster``: in a cluster, a ``logger-cluster-<namespace>`` record every worker
        applies when it reads it (this one included, before this returns); standalone, this worker."""
        LOG_LEVELS.validate(level)
        if self.cluster is None:
            LOG_LEVELS.set(namespace, level)
            return
        offset = await self.herder.append([LoggerLevelRecord(namespace, level)])
        await self.herder.wait_read(offset + 1, _READ_BACK_TIMEOUT_S)

    async def append_record(self, key: str, value: Mapping[str, Any] | bytes | None) -> int:
        """Append one raw config record (tests, replays); malformed ones are skipped and counted."""
        raw = value if value is None or isinstance(value, bytes) else json.dumps(value).encode()
        return await self.herder.log.append([(key, raw)])

    # ---- reading state --------------------------------------------------------------------

    async def connectors(self) -> list[str]:
        return sorted(self.herder.snapshot.connectors)

    def connector_cleanups(self) -> list[dict[str, Any]]:
        """Deleted connectors whose cleanup has not succeeded yet (state RUNNING, LINGERING, WAITING or
        PENDING), plus those given up here (GAVE_UP): connector, incarnation, attempts, last error, next
        attempt (epoch ms)."""
        return self.herder.cleanup_listing()

    async def connector_config(self, name: str) -> dict[str, str]:
        return dict(self._require(name))

    def reload_plugins(self, registry: PluginRegistry | None = None) -> ReloadResult:
        """See plugins installed since the worker started (``engine/plugins/reload.py``); a distribution
        some connector uses keeps its loaded version. ``registry`` (the REST app's) is refreshed in place."""

        def in_use(packages: frozenset[str]) -> list[str]:
            running = {n: c for n, c in self.herder.snapshot.connectors.items() if self._runs_here(n)}
            return connectors_using(running, packages)

        result = reload_plugins(self.worker.get("plugin.path"), in_use, registry)
        if registry is not None:
            registry.refresh(result.registry)
        return result

    def _runs_here(self, name: str) -> bool:
        """Some instance of the connector (or of a task) is alive in this process: RUNNING or PAUSED."""
        me = self.worker.worker_id
        units = [self._status.connector(name), *self._status.tasks(name).values()]
        return any(
            s is not None and s.worker_id == me and s.state in ("RUNNING", "PAUSED", "RESTARTING")
            for s in units
        )

    async def connector_info(self, name: str) -> dict[str, Any]:
        """Connect's ConnectorInfo: name, config, tasks, type."""
        config = self._require(name)
        tasks = self.herder.snapshot.tasks.get(name, ())
        return {
            "name": name,
            "config": dict(config),
            "tasks": [{"connector": name, "task": n} for n in range(len(tasks))],
            "type": self._type(config),
        }

    async def task_configs(self, name: str) -> list[dict[str, Any]]:
        """Connect's ``GET /connectors/{c}/tasks``: each task's id and raw config."""
        self._require(name)
        return [
            {"id": {"connector": name, "task": n}, "config": dict(c)}
            for n, c in enumerate(self.herder.snapshot.tasks.get(name, ()))
        ]

    async def connector_status(self, name: str) -> dict[str, Any]:
        """Connect's ConnectorStateInfo; ConnectorNotFound until a first status exists."""
        return self._state_info(name)

    async def task_status(self, name: str, task: int) -> dict[str, Any]:
        status = self._status.tasks(name).get(task)
        if status is None:
            raise ConnectorNotFound(name, f"No status found for task {name}-{task}")
        return _status_json(status, id=task)

    async def connector_active_topics(self, name: str) -> list[str]:
        """The topics the connector's tasks produced to or consumed from (KIP-558); [] for an unknown name."""
        if not self.data_settings.topic_tracking:
            raise Forbidden("Topic tracking is disabled.")
        return self._status.topics(name)

    async def reset_connector_active_topics(self, name: str) -> None:
        """Forget the connector's active topics; no existence check, as in Connect."""
        if not self.data_settings.topic_tracking:
            raise Forbidden("Topic tracking is disabled.")
        if not self.data_settings.topic_tracking_reset:
            raise Forbidden("Topic tracking reset is disabled.")
        self._status.reset_topics(name)

    async def connector_offsets(self, name: str) -> dict[str, Any]:
        """KIP-875's ``GET /connectors/{c}/offsets`` shape: ``{"offsets": [{"partition", "offset"}]}``.

        A source's come from the offset store; a sink's are its consumer group's committed offsets
        (``connect-<name>`` or ``consumer.override.group.id``), as Kafka's worker lists them.
        """
        config = self._require(name)
        if self._is_sink(config):
            committed = await self.topics.group_offsets(sink_group_id(name, config))
            return {"offsets": offsets_admin.sink_offsets_json(committed)}
        store = self._offsets
        return {"offsets": [{"partition": p, "offset": store.get(name, p)} for p in store.partitions(name)]}

    @staticmethod
    def _is_sink(config: Mapping[str, str]) -> bool:
        try:
            return offsets_admin.is_sink(load_connector_class(config.get("connector.class", "")))
        except ConfigError:
            return False

    async def alter_connector_offsets(self, name: str, offsets: Sequence[Any]) -> str:
        """KIP-875 ``PATCH /offsets``: only for a STOPPED connector with no tasks; returns Connect's message."""
        async with self._lock(name):
            config, cls = self._stopped_for_offsets(name)
            if offsets_admin.is_sink(cls):
                sink = offsets_admin.sink_offsets(offsets)
                by_connector = await offsets_admin.call_alter_offsets(cls, name, config, sink)
                await offsets_admin.write_group_offsets(self.topics, name, sink_group_id(name, config), sink)
            else:
                pairs = offsets_admin.source_offsets(offsets)
                by_connector = await offsets_admin.call_alter_offsets(
                    cls, name, config, offsets_admin.source_hook_offsets(pairs)
                )
                self._offsets.write(name, pairs)
        return offsets_admin.result_message(by_connector, offsets_admin.ALTERED)

    async def reset_connector_offsets(self, name: str) -> str:
        """KIP-875 ``DELETE /offsets``: every known partition's offset removed; idempotent."""
        async with self._lock(name):
            config, cls = self._stopped_for_offsets(name)
            if offsets_admin.is_sink(cls):
                group = sink_group_id(name, config)
                committed = await self.topics.group_offsets(group)
                hook: Any = {offsets_admin.api_partition(tp): None for tp in committed}
                by_connector = await offsets_admin.call_alter_offsets(cls, name, config, hook)
                await offsets_admin.delete_group(self.topics, name, group)
            else:
                partitions = self._offsets.partitions(name)
                by_connector = await offsets_admin.call_alter_offsets(
                    cls, name, config, offsets_admin.source_hook_offsets([(p, None) for p in partitions])
                )
                self._offsets.reset(name)
        return offsets_admin.result_message(by_connector, offsets_admin.RESET)

    def _stopped_for_offsets(self, name: str) -> tuple[dict[str, str], type[Connector]]:
        config = self._require(name)
        snapshot = self.herder.snapshot
        if snapshot.target(name) is not TargetState.STOPPED or snapshot.tasks.get(name):
            raise InvalidRequest(offsets_admin.not_stopped_message(name))
        return config, load_connector_class(config.get("connector.class", ""))

    def _state_info(self, name: str) -> dict[str, Any]:
        connector = self._status.connector(name)
        if connector is None:
            raise ConnectorNotFound(name, f"No status found for connector {name}")
        snapshot = self.herder.snapshot
        config = snapshot.connectors.get(name)
        if config is None:  # deleted, its deleted() still running: the type is the deleted config's
            pending = snapshot.pending_cleanups.get(name)
            config = pending.properties if pending is not None else {}
        connector_version, task_version = _running_versions(config.get("connector.class", ""))
        return {
            "name": name,
            "connector": {**_status_json(connector), "version": connector_version},
            "tasks": [
                {**_status_json(s, id=n), "version": task_version}
                for n, s in self._status.tasks(name).items()
            ],
            "type": self._type(config),
        }

    @staticmethod
    def _type(config: Mapping[str, str]) -> str:
        try:
            return connector_type(load_connector_class(config.get("connector.class", "")))
        except ConfigError:
            return "unknown"

    # ---- waiting --------------------------------------------------------------------------

    def transitions(self) -> Subscription:
        """Every transition from now on (callable before ``start`` to see the boot too)."""
        return self._feed.subscribe()

    async def wait_for_state(
        self, name: str, state: str, tasks: int | Sequence[str] | None = None, timeout: float = 30.0
    ) -> dict[str, Any] | None:
        """Wait until the connector is in ``state`` (and its tasks match), or raise StateTimeout.

        ``tasks`` is a count (that many tasks, all in ``state``) or one state per task.
        ``state="DESTROYED"`` waits until the connector has no status at all; returns None then.
        """
        feed = self.transitions()
        try:
            async with asyncio.timeout(timeout):
                while not self._matches(name, state, tasks):
                    await anext(feed)
        except TimeoutError:
            raise StateTimeout(name, state, self._describe(name)) from None
        finally:
            await feed.aclose()
        return None if state == "DESTROYED" else self._state_info(name)

    def _matches(self, name: str, state: str, tasks: int | Sequence[str] | None) -> bool:
        connector = self._status.connector(name)
        if state == "DESTROYED":
            return connector is None
        if connector is None or connector.state != state:
            return False
        if tasks is None:
            return True
        states = [s.state for s in self._status.tasks(name).values()]
        if isinstance(tasks, int):
            return len(states) == tasks and all(s == state for s in states)
        return states == list(tasks)

    def _describe(self, name: str) -> str:
        try:
            info = self._state_info(name)
        except ConnectorNotFound:
            return "no status"
        return f"connector {info['connector']['state']}, tasks {[t['state'] for t in info['tasks']]}"


def _now_ms() -> int:
    return int(time.time() * 1000)


def _target(initial_state: str | TargetState | None) -> TargetState | None:
    if initial_state is None or isinstance(initial_state, TargetState):
        return initial_state
    try:
        return TargetState.from_initial_state(initial_state)
    except ValueError as exc:
        raise ConfigError(str(exc), errors={"initial_state": [str(exc)]}) from None


def _running_versions(class_name: str) -> tuple[str, str]:
    """KAFKA-18988's ``version`` of a connector's and its tasks' status: what their classes' ``version()``
    answer (one version of a plugin is importable per process, so the installed one is the running
    one until a restart picks up a reinstalled plugin); ``undefined`` as Connect says when unknown."""
    try:
        cls = load_connector_class(class_name)
    except ConfigError:
        return UNDEFINED_VERSION, UNDEFINED_VERSION
    return plugin_version(cls) or UNDEFINED_VERSION, _task_version(cls)


@functools.cache
def _task_version(cls: type[Connector]) -> str:
    try:
        task_class: Any = cls().task_class()
    except Exception:  # plugin code: its tasks' version stays unknown
        return UNDEFINED_VERSION
    if inspect.iscoroutine(task_class):  # an async task_class(): not awaited on this synchronous path
        task_class.close()
        return UNDEFINED_VERSION
    return (plugin_version(task_class) if isinstance(task_class, type) else None) or UNDEFINED_VERSION


def _status_json(status: Status, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = dict(extra)
    body["state"] = status.state
    body["worker_id"] = status.worker_id
    if status.trace:
        body["trace"] = status.trace
    if status.restart_attempts is not None:  # restart.policy=on-failure: our addition beside Connect's shape
        body["restart_attempts"] = status.restart_attempts
        body["next_restart_ms"] = status.next_restart_ms
    return body
