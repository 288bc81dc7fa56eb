"""One engine's run, start to end: its stores opened side by side, the herder and the data plane
composed in one task group beside the mode's membership, and everything stopped and closed in order.

Kafka's ``Connect`` class plays this part around its herder; the embedding API (``engine.Engine``)
holds one and calls it for ``start``, ``shutdown`` and ``abort``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

import structlog

from engine.api._invoke import CALLBACK_TIMER, TASK_THREADS
from engine.config.worker import WorkerConfig
from engine.configlog.base import ConfigLog
from engine.errors import EngineNotRunning
from engine.herder.herder import Herder
from engine.herder.ownership import Ownership
from engine.herder.timers import Timers
from engine.herder.transition_feed import TransitionFeed
from engine.observability.log_levels import LOG_LEVELS, ROOT
from engine.observability.metrics import EngineMetrics
from engine.spark.supervisor import SparkSupervisor
from engine.storage.base import OffsetStore, StatusStore
from engine.storage.offsets import FileOffsetStore
from engine.storage.target_cluster import check_target_cluster
from engine.topics.base import ClusterTopics, Topics
from engine.worker.data_plane import DataPlane, DataSettings
from engine.worker.gc_tuning import fewer_full_collections
from engine.worker.task_host.pool import TaskHosts


class RunningMode(Protocol):
    """What a run asks of the worker's mode, standalone or a cluster member (``engine.distributed.mode``)."""

    @property
    def ownership(self) -> Ownership:
        """Which connectors and tasks run here: what the herder asks."""
        ...

    @property
    def reported_worker_id(self) -> str | None:
        """The worker id metrics and log lines carry: a cluster member's; None standalone."""
        ...

    async def join(self, running: asyncio.Task[None], set_stage: Callable[[str], None]) -> str | None:
        """Return once the worker may serve requests; or why it could not join its cluster in time.

        ``running`` is the engine's main task: when it ends first, its failure is raised here.
        """
        ...

    async def run(self, herder: Herder, booted: asyncio.Future[None]) -> None:
        """The mode's own work while the engine runs (a member's group protocol); cancelled at the end."""
        ...

    async def leave(self) -> None:
        """Shutdown begins: stop taking on work before the herder stops every unit."""
        ...

    def runs_task(self, connector: str, task: int) -> bool:
        """Whether this worker may still run the task: a cluster member cut off from its group
        (KAFKA-9184), or no longer assigned the task, may not; always True standalone. Task loops ask
        it before each write."""
        ...

    def tasks_run(self) -> AbstractSet[tuple[str, int]] | None:
        """``runs_task`` for every task at once (None: any task, standalone), for the task hosts'
        leases: a set operation where thousands of calls would hold the loop."""
        ...


class Runtime:
    """Starts, runs and stops one engine's herder over its stores; ``herder`` while it runs."""

    def __init__(
        self,
        worker: WorkerConfig,
        mode: RunningMode,
        data_settings: DataSettings,
        *,
        config_log: ConfigLog,
        status: StatusStore,
        offsets: OffsetStore,
        topics: Topics,
        spark: SparkSupervisor,
        metrics: EngineMetrics,
        feed: TransitionFeed,
        timers: Timers,
    ) -> None:
        self._worker = worker
        self._mode = mode
        self._data_settings = data_settings
        self._log = config_log
        self._status = status
        self._offsets = offsets
        self._topics = topics
        self._spark = spark
        self._metrics = metrics
        self._feed = feed
        self._timers = timers
        self._herder: Herder | None = None
        self._main: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        # what start() is doing, and since when (epoch ms): /health's "starting" answer names it
        self.startup_stage: tuple[str, int] = (
            "initializing and reading to the end of internal topics",
            _now_ms(),
        )

    @property
    def herder(self) -> Herder:
        if self._herder is None or self._main is None or self._main.done():
            raise EngineNotRunning
        return self._herder

    def _enter_startup_stage(self, stage: str) -> None:
        self.startup_stage = (stage, _now_ms())

    async def start(self) -> None:
        """Open the log and stores, replay the log, and return once every connector is booted."""
        if self._main is not None:
            return
        fewer_full_collections()
        self._enter_startup_stage("initializing and reading to the end of internal topics")
        # side by side: on Kafka each open is a few round trips (a worker joining a cluster waits on all)
        try:
            opened = await asyncio.gather(
                self._log.open(),
                self._status.open(),
                self._offsets.open(),
                self._topics.open(),
                return_exceptions=True,
            )
        except asyncio.CancelledError:
            # stopped while starting (SIGTERM, a caller's timeout): nothing left open
            await self._close_stores()
            raise
        failure = next((r for r in opened if isinstance(r, BaseException)), None)
        if failure is not None:
            await self._close_stores()
            raise failure
        await self._check_source_offsets_cluster()
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
        assert self._main is not None
        not_joined = await self._mode.join(self._main, self._enter_startup_stage)
        if not_joined is not None:
            await self.shutdown()
            raise EngineNotRunning(not_joined)

    async def _check_source_offsets_cluster(self) -> None:
        """Source offsets kept in a file, outside the cluster: warn when it was written for another one
        (``engine.storage.target_cluster``). Never a reason not to start."""
        if not isinstance(self._offsets, FileOffsetStore) or not isinstance(self._topics, ClusterTopics):
            return
        try:
            cluster_id = await self._topics.lookup_cluster_id()
        except Exception as exc:  # the data plane's own failure shows when a task uses it
            structlog.get_logger(component="storage").info("storage.target_cluster_unknown", error=repr(exc))
            return
        if cluster_id is not None:
            await asyncio.to_thread(check_target_cluster, self._offsets.file.journal.path, cluster_id)

    async def _close_stores(self) -> None:
        for store in (self._topics, self._offsets, self._status, self._log):
            with contextlib.suppress(Exception):
                await store.close()

    async def _run(self, ready: asyncio.Future[None]) -> None:
        CALLBACK_TIMER.set(self._metrics.callback)  # this task's context: every unit and runner inherits it
        # tasks' synchronous poll()/put() get threads of their own, apart from the lifecycle calls'
        task_threads = ThreadPoolExecutor(
            self._data_settings.task_threads_max, thread_name_prefix="connect-task"
        )
        TASK_THREADS.set(task_threads)
        hosts: TaskHosts | None = None
        worker_id = self._mode.reported_worker_id
        if worker_id is not None:  # every log line, and every callback's thread, knows which worker it is
            structlog.contextvars.bind_contextvars(worker=worker_id)
        try:
            async with asyncio.TaskGroup() as tg:
                data = DataPlane(
                    self._topics,
                    self._worker.raw,
                    self._offsets,
                    self._status,
                    self._data_settings,
                    self._worker.worker_id,
                    self._spark,
                    metrics=self._metrics.connect,
                    clients=self._worker.kafka,
                    timers=self._timers,
                    runs_task=self._mode.runs_task,
                )
                if self._data_settings.task_processes > 0:
                    data.hosts = hosts = TaskHosts(
                        self._data_settings.task_processes,
                        self._worker.raw,
                        self._offsets,
                        data.track_topic,
                        log_level=logging.getLevelName(LOG_LEVELS.effective(ROOT)),
                        memory_max_bytes=self._data_settings.task_process_memory_max_bytes,
                        tasks_run=self._mode.tasks_run,
                    )
                    self._metrics.connect.other_processes = hosts.readings
                    self._metrics.connect.refresh_tasks = hosts.apply_counters
                self._herder = Herder(
                    self._log,
                    self._status,
                    self._offsets,
                    self._worker,
                    tg,
                    self._feed,
                    self._metrics,
                    data,
                    ownership=self._mode.ownership,
                    timers=self._timers,
                )
                reader = tg.create_task(self._herder.run(ready), name="configlog-reader")
                member = tg.create_task(self._mode.run(self._herder, ready), name="group")
                await self._stop.wait()
                await self._mode.leave()
                await self._herder.shutdown()
                if hosts is not None:  # after every task stopped: what is left are hosts to close
                    await hosts.close()
                await self._status.flush()
                member.cancel()  # after every unit stopped: leaving hands the work to the others
                reader.cancel()
        finally:
            if hosts is not None:  # aborted or failed: no host outlives the worker's run
                hosts.abort()
            # a poll() still running was abandoned with its task: its thread is not waited for
            task_threads.shutdown(wait=False, cancel_futures=True)
            await self._spark.shutdown()  # after every task stopped: no job outlives its task
            await self._topics.close()
            await self._log.close()
            await self._status.close()
            await self._offsets.close()

    async def run(self) -> None:
        """Start, then run until cancelled or ``shutdown()``."""
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
        """Stop at once, as a killed process would: no ``stop()``, no status writes, nothing flushed."""
        self._stop.set()
        main = self._main
        if main is not None and not main.done():
            if self._herder is not None:
                self._herder.abort()
            main.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await main


def _first_cause(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The first exception in ``group`` (nested groups searched) that is not a cancellation."""
    for exc in group.exceptions:
        found = _first_cause(exc) if isinstance(exc, BaseExceptionGroup) else exc
        if not isinstance(found, asyncio.CancelledError):
            return found
    return group


def _now_ms() -> int:
    return int(time.time() * 1000)
