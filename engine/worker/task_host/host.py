"""The child's side: one task host runs the tasks its worker sends it, with the same ``TaskFactory``,
``TaskRunner`` and loops a worker uses in-process, over Kafka clients of its own.

Its protocol travels on stdin and on a duplicate of stdout; stdout itself is pointed at stderr, so a
task that prints cannot garble the pipe, and everything it logs reaches the worker's log. Source
offsets are written and flushed by the worker's offset store (``WriteOffsets``/``FlushOffsets``),
so every reader (REST, the next task, the next host) sees one store.
"""

from __future__ import annotations

import asyncio
import contextlib
import faulthandler
import itertools
import os
import signal
import sys
import time
from collections.abc import Coroutine, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import structlog

from engine.api._invoke import TASK_THREADS
from engine.config.worker import WorkerConfig
from engine.errors import EngineError, trace_of
from engine.observability.connect_metrics import (
    ConnectMetrics,
    CounterValues,
    Kind,
    ProcessReading,
    TaskCounters,
)
from engine.observability.logs import configure_logging
from engine.storage.offsets import MemoryOffsetStore
from engine.storage.status import MemoryStatusStore
from engine.topics.factory import open_topics
from engine.worker.data_plane import DataPlane, DataSettings
from engine.worker.report import Report
from engine.worker.task_factory import TaskFactory, load_task_class
from engine.worker.task_host.protocol import (
    LEASE_S,
    Abandon,
    CommittedOffsets,
    Counters,
    Flushed,
    FlushOffsets,
    Hello,
    HostMetrics,
    Lease,
    Reported,
    Retarget,
    StartTask,
    Stopped,
    StopTask,
    TrackTopic,
    WriteOffsets,
    frame,
    read_frame,
)
from engine.worker.task_runner import TaskRunner
from states import TargetState

log = structlog.get_logger(component="task_host")

# how often each task's counters travel to the worker's /metrics
COUNTERS_INTERVAL_S = 1.0


class Pipe:
    """The host's end of its pipe to the worker."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer
        self._requests = itertools.count(1)
        self._flushes: dict[int, asyncio.Future[str | None]] = {}

    def send(self, message: object) -> None:
        if not self._writer.is_closing():
            self._writer.write(frame(message))

    async def flush_offsets(self) -> None:
        request = next(self._requests)
        waiter = self._flushes[request] = asyncio.get_running_loop().create_future()
        self.send(FlushOffsets(request))
        try:
            error = await waiter
        finally:
            self._flushes.pop(request, None)
        if error is not None:
            raise EngineError(f"The worker could not flush source offsets: {error}")

    def flushed(self, message: Flushed) -> None:
        waiter = self._flushes.get(message.request)
        if waiter is not None and not waiter.done():
            waiter.set_result(message.error)


class WorkerOffsets(MemoryOffsetStore):
    """The worker's offset store as a task in the host sees it: read from a snapshot taken when the
    task started, written through to the worker."""

    def __init__(self, pipe: Pipe, offsets_topic: str | None) -> None:
        super().__init__()
        self._pipe = pipe
        self.offsets_topic = offsets_topic  # where exactly-once tasks' transactions write offsets

    def seed(self, connector: str, offsets: list[tuple[Mapping[str, Any], Mapping[str, Any]]]) -> None:
        """The worker's committed offsets when a task starts here."""
        super().apply_committed(connector, offsets)

    def apply_committed(
        self, connector: str, offsets: list[tuple[Mapping[str, Any], Mapping[str, Any]]]
    ) -> None:
        """An exactly-once task committed these in its transaction: the worker's store learns them too."""
        super().apply_committed(connector, offsets)
        self._pipe.send(CommittedOffsets(connector, [(dict(p), dict(o)) for p, o in offsets]))

    def write(
        self, connector: str, offsets: Iterable[tuple[Mapping[str, Any], Mapping[str, Any] | None]]
    ) -> None:
        pairs = [(dict(p), None if o is None else dict(o)) for p, o in offsets]
        super().write(connector, pairs)  # checks the types as the worker's store would
        self._pipe.send(WriteOffsets(connector, pairs))

    async def flush(self) -> None:
        await self._pipe.flush_offsets()


@dataclass
class HostDataPlane(DataPlane):
    """A task host's data plane: its own topics and producer; topic tracking and counters go to the worker."""

    pipe: Pipe | None = None
    counters: dict[tuple[str, int], TaskCounters] = field(default_factory=dict)
    _tracked: set[tuple[str, str]] = field(default_factory=set)

    def task_started(self, connector: str, task: int, kind: Kind) -> TaskCounters:
        counters = self.counters[(connector, task)] = TaskCounters(kind)
        return counters

    def task_stopped(self, connector: str, task: int, counters: TaskCounters) -> None:
        if self.counters.get((connector, task)) is counters:
            del self.counters[(connector, task)]

    def track_topic(self, connector: str, task: int, topic: str) -> None:
        """Sent once per topic; the worker's ``DataPlane.track_topic`` checks its status store."""
        if self.settings.topic_tracking and self.pipe is not None and (connector, topic) not in self._tracked:
            self._tracked.add((connector, topic))
            self.pipe.send(TrackTopic(connector, task, topic))


class Host:
    """The tasks this process runs, by their key on the pipe."""

    def __init__(self, worker: WorkerConfig, pipe: Pipe, offsets_topic: str | None = None) -> None:
        self.worker = worker
        self.pipe = pipe
        self._leased: set[tuple[str, int]] = set()  # what the worker's last Lease named
        self._lease_at = time.monotonic()
        self.offsets = WorkerOffsets(pipe, offsets_topic)
        settings = DataSettings.parse(worker.raw)
        self.topics = open_topics(worker)
        plane = HostDataPlane(
            self.topics,
            worker.raw,
            self.offsets,
            MemoryStatusStore(),
            settings,
            worker.worker_id,
            spark=None,
            # its plugins' metrics (KIP-877) register here and cross the pipe; task counters cross as Counters
            metrics=ConnectMetrics(MemoryStatusStore()),
            clients=worker.kafka,
            pipe=pipe,
            runs_task=self.runs_task,
        )
        self.plane = plane
        self.runners: dict[int, TaskRunner] = {}
        self._counters_sent: dict[int, CounterValues] = {}  # each task's counters as they last crossed
        self._spawned: set[asyncio.Task[None]] = set()
        self.threads = ThreadPoolExecutor(settings.task_threads_max, thread_name_prefix="connect-task")
        TASK_THREADS.set(self.threads)

    def runs_task(self, connector: str, task: int) -> bool:
        """The worker still runs this task and said so within ``LEASE_S``: called before each ``put``
        and each send (``DataPlane.runs_task``), from the task's thread too."""
        return (connector, task) in self._leased and time.monotonic() - self._lease_at <= LEASE_S

    def _spawn(self, coro: Coroutine[Any, Any, None], name: str) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self._spawned.add(task)
        task.add_done_callback(self._spawned.discard)
        return task

    def handle(self, message: object) -> None:
        match message:
            case StartTask():
                self._start(message)
            case Retarget(key=key, target=target):
                if (runner := self.runners.get(key)) is not None:
                    runner.transition_to(TargetState(target))
            case StopTask(key=key, deleted=deleted):
                if (runner := self.runners.get(key)) is None:
                    self.pipe.send(Stopped(key))  # it never ran here (its class would not load)
                elif deleted:
                    runner.request_stop_for_deletion()
                else:
                    runner.request_stop()
            case Abandon(key=key):
                if (runner := self.runners.get(key)) is not None:
                    runner.abandoned = True
                    if runner.body is not None:
                        runner.body.cancel()
            case Flushed():
                self.pipe.flushed(message)
            case Lease(tasks=tasks):
                if tasks is not None:
                    self._leased = set(tasks)
                self._lease_at = time.monotonic()
            case _:
                log.warning("task_host.unknown_message", message=type(message).__name__)

    def _start(self, start: StartTask) -> None:
        key = start.key
        self._leased.add((start.connector, start.task))  # the worker starts what it runs
        with structlog.contextvars.bound_contextvars(connector=start.connector, task=start.task):
            self.offsets.seed(start.connector, start.offsets)
            try:
                task_cls = load_task_class(start.task_class)
            except EngineError as exc:  # the worker loaded it: only a different sys.path gets here
                self.pipe.send(Reported(key, "fail", trace_of(exc)))
                return
            factory = TaskFactory(
                start.connector, worker=self.worker, offsets=self.offsets, data=self.plane, spawn=self._spawn
            )
            runner = factory.runner(
                start.task,
                task_cls,
                dict(start.config),
                start.connector_config,
                TargetState(start.target),
                partial(self._relay, key),
                incarnation=start.incarnation,
            )
            assert isinstance(runner, TaskRunner)  # a host's data plane has no hosts of its own
            self.runners[key] = runner
            log.info("task_host.task_started", pid=os.getpid())
            runner.launch(self._spawn)  # the body's task keeps connector= and task= bound
        assert runner.body is not None
        runner.body.add_done_callback(partial(self._finished, key))

    def _relay(self, key: int, report: Report) -> None:
        """The report, after the task's counters and metrics: in-process a task's series exist from its
        start, so the worker must have them before it reads the report (a status says RUNNING)."""
        runner = self.runners.get(key)
        if runner is not None and runner.loop is not None:
            self._send_counters({key: runner.loop.counters})
            self.send_metrics()
        self.pipe.send(Reported(key, report.trigger, report.trace))

    def _finished(self, key: int, _: object = None) -> None:
        runner = self.runners.pop(key, None)
        if runner is not None and runner.loop is not None:
            self._send_counters({key: runner.loop.counters})
        self._counters_sent.pop(key, None)
        self.send_metrics()  # the task's plugin metrics and clients went with it
        self.pipe.send(Stopped(key))

    def send_counters(self) -> None:
        """The counters that changed since they last crossed, in one message."""
        self._send_counters(
            {key: runner.loop.counters for key, runner in self.runners.items() if runner.loop is not None},
            changed_only=True,
        )
        self.send_metrics()

    def _send_counters(self, counters: Mapping[int, TaskCounters], *, changed_only: bool = False) -> None:
        changed: dict[int, CounterValues] = {}
        sent = self._counters_sent
        for key, task_counters in counters.items():
            values = task_counters.values()
            if changed_only and sent.get(key) == values:
                continue
            sent[key] = changed[key] = values
        if changed:
            self.pipe.send(Counters(changed))

    def send_metrics(self) -> None:
        assert self.plane.metrics is not None
        self.pipe.send(HostMetrics(ProcessReading.here(self.plane.metrics.plugins)))

    async def stop_all(self, timeout: float) -> None:
        """The worker went away (our stdin closed): plain stop() for what still runs, bounded."""
        for runner in self.runners.values():
            runner.request_stop()
        bodies = [r.body for r in self.runners.values() if r.body is not None]
        if bodies:
            await asyncio.wait(bodies, timeout=timeout)


async def _serve() -> None:
    loop = asyncio.get_running_loop()
    # the protocol gets its own copy of stdout; fd 1 becomes stderr, so print() cannot garble it
    out = os.dup(1)
    os.dup2(2, 1)
    reader = asyncio.StreamReader(limit=2**26)
    await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(0, "rb", buffering=0)
    )
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(out, "wb", buffering=0)
    )
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    hello = await read_frame(reader)
    if not isinstance(hello, Hello):
        return  # the worker went away before saying anything
    configure_logging(hello.log_level, json=True)
    worker = WorkerConfig.parse(hello.worker)
    structlog.contextvars.bind_contextvars(worker=worker.worker_id, host=os.getpid())
    host = Host(worker, Pipe(writer), hello.offsets_topic)
    await host.topics.open()
    log.info("task_host.ready")
    counters = loop.create_task(_send_counters(host), name="counters")
    try:
        while (message := await read_frame(reader)) is not None:
            host.handle(message)
        await host.stop_all(worker.task_shutdown_timeout)
    finally:
        counters.cancel()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(host.topics.close(), worker.task_shutdown_timeout)
        with contextlib.suppress(Exception):
            await writer.drain()
        log.info("task_host.exiting")


async def _send_counters(host: Host) -> None:
    while True:
        await asyncio.sleep(COUNTERS_INTERVAL_S)
        host.send_counters()


def main() -> None:
    """Run until the worker closes our stdin; then exit at once, abandoning any thread still in user code."""
    faulthandler.enable()  # a segfaulting task leaves its Python stack in the worker's log
    # a host shares its worker's process group: a SIGTERM or Ctrl-C meant for the worker must not end
    # it before the worker has stopped its tasks gracefully; its stdin closing is what ends it
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    code = 0
    try:
        asyncio.run(_serve())
    except Exception:  # its tasks fail with this exit code; the cause is in the log
        log.exception("task_host.failed")
        code = 1
    sys.stderr.flush()
    os._exit(code)
