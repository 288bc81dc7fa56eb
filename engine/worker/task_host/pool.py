"""The worker's side of its task hosts: at most ``task.processes`` child processes, each task on a
host of its own while there is room, else sharing the least-loaded one.

Tasks that share a host fail together if it dies. A host lives while it hosts tasks: the last task
to leave closes it, so a restarted task always starts on a fresh one.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import signal
import sys
from collections.abc import Callable, Coroutine, Mapping
from collections.abc import Set as AbstractSet
from typing import Any, Protocol

import structlog

from engine.observability.connect_metrics import CounterValues, ProcessReading
from engine.storage.base import OffsetStore
from engine.worker.task_host.protocol import (
    LEASE_RENEW_S,
    CommittedOffsets,
    Counters,
    Flushed,
    FlushOffsets,
    Hello,
    HostMetrics,
    Lease,
    Reported,
    Stopped,
    TrackTopic,
    WriteOffsets,
    frame,
    read_frame,
)

log = structlog.get_logger(component="worker")

# a closed host that has not exited after this long is killed
_CLOSE_TIMEOUT_S = 10.0
# how often each host's resident memory is read against task.process.memory.max.bytes
MEMORY_SAMPLE_INTERVAL_S = 0.5
MEMORY_KEY = "task.process.memory.max.bytes"
_PAGE_SIZE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


class HostedTask(Protocol):
    """What a host tells the worker-side stand-in of a task it runs (``ProcessTaskRunner``)."""

    connector: str
    task: int

    def on_report(self, trigger: str, trace: str | None) -> None: ...

    def on_stopped(self) -> None: ...

    def on_counters(self, values: CounterValues) -> None: ...

    def on_host_exit(self, cause: str) -> None: ...


def exit_cause(returncode: int) -> str:
    """How a host ended, in the words a task's trace carries."""
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        cause = f"Task process exited with signal {name} ({returncode})"
        if returncode == -signal.SIGKILL:  # what the kernel's OOM killer and cgroup limits send
            cause += (
                "; it may have run out of memory (the kernel's OOM killer or a memory limit sends SIGKILL)"
            )
        return cause
    return f"Task process exited with exit code {returncode}"


def memory_exceeded(limit: int, rss: int) -> str:
    """The trace of a task whose host the worker killed over ``task.process.memory.max.bytes``."""
    return f"Task process exceeded {MEMORY_KEY}={limit} (RSS {rss} bytes); killed"


def rss_bytes(pid: int) -> int | None:
    """A process's resident set size from ``/proc/<pid>/statm`` (Linux); None if it cannot be read."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as statm:
            return int(statm.read().split()[1]) * _PAGE_SIZE
    except (OSError, IndexError, ValueError):
        return None


class TaskHost:
    """One child process and the tasks it runs, keyed as on its pipe."""

    def __init__(self, process: asyncio.subprocess.Process, hosts: TaskHosts) -> None:
        self.process = process
        self.tasks: dict[int, HostedTask] = {}
        self.exited = False
        self.killed_for: str | None = None  # why the worker killed it, for its tasks' traces
        self.reading: ProcessReading | None = None  # its plugin metrics and clients, as last sent
        # tasks' counters as last sent, applied when /metrics is read (``apply_counters``): applying
        # each second's message at once held the worker's loop ~4 ms per 1,700 tasks
        self.counters: dict[int, CounterValues] = {}
        self.leased: frozenset[tuple[str, int]] | None = None  # what the last Lease sent named
        self.placements = 0  # bumped whenever ``tasks`` changes: a lease is computed again only then
        self.leased_from: tuple[int, object] | None = None  # (placements, the worker's set) it came from
        self._hosts = hosts
        self._closing = False
        self._reader = asyncio.create_task(self._read(), name=f"task-host:{process.pid}")

    @property
    def pid(self) -> int:
        return self.process.pid

    def send(self, message: object) -> None:
        stdin = self.process.stdin
        if self.exited or stdin is None or stdin.is_closing():
            return  # its death is reported to every task by _read
        with contextlib.suppress(ConnectionError, RuntimeError):
            stdin.write(frame(message))

    def apply_counters(self) -> None:
        """Hand each task the counters last sent for it."""
        counters, self.counters = self.counters, {}
        for key, values in counters.items():
            if (task := self.tasks.get(key)) is not None:
                task.on_counters(values)

    def leave(self, key: int) -> None:
        """The task is done here; the last one out closes the host."""
        self.tasks.pop(key, None)
        self.counters.pop(key, None)
        self.placements += 1
        if not self.tasks:
            self.close()

    def close(self) -> None:
        """End the host: closing its stdin tells it to stop what it runs and exit."""
        if self._closing:
            return
        self._closing = True
        self._hosts.forget(self)
        if self.process.stdin is not None:
            with contextlib.suppress(ConnectionError, RuntimeError):
                self.process.stdin.close()

    def kill(self, cause: str | None = None) -> None:
        """SIGKILL; ``cause`` replaces the signal in the traces of tasks still running here."""
        if not self.exited:
            if cause is not None and self.killed_for is None:
                self.killed_for = cause
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()

    async def wait_closed(self, timeout: float) -> None:
        try:
            await asyncio.wait_for(asyncio.shield(self._reader), timeout)
        except TimeoutError:
            self.kill()
            await self._reader

    async def _read(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        try:
            while (message := await read_frame(stdout)) is not None:
                self._dispatch(message)
        except Exception as exc:  # a garbled pipe: the host cannot be trusted any longer
            log.error("task_host.protocol_error", pid=self.pid, error=repr(exc))
            self.kill()
        returncode = await self.process.wait()
        self.exited = True
        self._hosts.forget(self)
        self._hosts.running.discard(self)
        tasks, self.tasks = self.tasks, {}
        if not tasks:
            log.info("task_host.exited", pid=self.pid, returncode=returncode)
            return
        cause = self.killed_for or exit_cause(returncode)
        log.warning("task_host.died", pid=self.pid, returncode=returncode, cause=cause, tasks=len(tasks))
        for task in tasks.values():
            task.on_host_exit(cause)

    def _dispatch(self, message: object) -> None:
        match message:
            case Reported(key=key, trigger=trigger, trace=trace):
                if (task := self.tasks.get(key)) is not None:
                    if (values := self.counters.pop(key, None)) is not None:
                        task.on_counters(values)  # sent just before: its series exist from its start
                    task.on_report(trigger, trace)
            case Stopped(key=key):
                if (task := self.tasks.get(key)) is not None:
                    task.on_stopped()
            case Counters(counters=counters):
                self.counters.update(counters)
            case HostMetrics(reading=reading):
                self.reading = reading
            case WriteOffsets(connector=connector, offsets=offsets):
                self._hosts.offsets.write(connector, offsets)
            case CommittedOffsets(connector=connector, offsets=offsets):
                self._hosts.offsets.apply_committed(connector, list(offsets))
            case FlushOffsets(request=request):
                self._hosts.spawn(self._flush(request))
            case TrackTopic(connector=connector, task=task_id, topic=topic):
                self._hosts.track_topic(connector, task_id, topic)
            case _:
                log.warning("task_host.unknown_message", pid=self.pid, message=type(message).__name__)

    async def _flush(self, request: int) -> None:
        error: str | None = None
        try:
            await self._hosts.offsets.flush()
        except Exception as exc:  # the task's commit fails, as it would in-process
            error = repr(exc)
        self.send(Flushed(request, error))


class TaskHosts:
    """A worker's task hosts (``task.processes`` > 0): placing tasks, closing hosts at shutdown."""

    def __init__(
        self,
        limit: int,
        worker: Mapping[str, str],
        offsets: OffsetStore,
        track_topic: Callable[[str, int, str], None],
        *,
        log_level: str = "INFO",
        memory_max_bytes: int = 0,
        tasks_run: Callable[[], AbstractSet[tuple[str, int]] | None] = lambda: None,
    ) -> None:
        self.limit = limit
        self.memory_max_bytes = memory_max_bytes  # task.process.memory.max.bytes (0: no ceiling)
        self.offsets = offsets
        self.track_topic = track_topic
        self._worker = dict(worker)
        self._log_level = log_level
        self._hosts: list[TaskHost] = []  # open to new tasks
        self.running: set[TaskHost] = set()  # every process not yet exited, closing ones included
        self._keys = itertools.count(1)
        self._placing = asyncio.Lock()
        self._background: set[asyncio.Task[None]] = set()
        self._sampler: asyncio.Task[None] | None = None
        # what the worker may run (KAFKA-9184; None: all), a new set whenever it changes: leased to hosts
        self.tasks_run = tasks_run
        self._leases: asyncio.Task[None] | None = None
        if memory_max_bytes > 0 and rss_bytes(os.getpid()) is None:
            log.warning(
                "task_host.memory_unsampled",
                limit=memory_max_bytes,
                reason=f"{MEMORY_KEY} needs /proc/<pid>/statm (Linux): no ceiling is enforced here",
            )

    @property
    def hosts(self) -> list[TaskHost]:
        """The live hosts (tests and ``/metrics`` read it)."""
        return list(self._hosts)

    def apply_counters(self) -> None:
        """Every live host's tasks' counters as last sent (``ConnectMetrics.refresh_tasks``)."""
        for host in list(self.running):
            host.apply_counters()

    def readings(self) -> list[ProcessReading]:
        """Each live host's plugin metrics and clients, for the worker's ``/metrics``."""
        return [h.reading for h in list(self.running) if not h.exited and h.reading is not None]

    def spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def place(self, task: HostedTask) -> tuple[TaskHost, int]:
        """A host for ``task`` and its key there: an empty one, a new one while under the limit, else the
        least-loaded."""
        async with self._placing:
            open_hosts = [h for h in self._hosts if not h.exited]
            empty = [h for h in open_hosts if not h.tasks]
            if empty:
                host = empty[0]
            elif len(open_hosts) < self.limit:
                host = await self._start_host()
            else:
                host = min(open_hosts, key=lambda h: len(h.tasks))
            key = next(self._keys)
            host.tasks[key] = task
            host.placements += 1
            return host, key

    def forget(self, host: TaskHost) -> None:
        with contextlib.suppress(ValueError):
            self._hosts.remove(host)

    async def _start_host(self) -> TaskHost:
        # the worker's sys.path: plugins (plugin.path, PYTHONPATH, the test suite) import the same there
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "engine.worker.task_host",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=None,  # inherited: its JSON log lines reach the worker's log
            env=env,
        )
        host = TaskHost(process, self)
        offsets_log = getattr(
            self.offsets, "log", None
        )  # a KafkaOffsetStore's: its topic is the offsets topic
        host.send(Hello(self._worker, self._log_level, getattr(offsets_log, "topic", None)))
        self._hosts.append(host)
        self.running.add(host)
        log.info("task_host.started", pid=process.pid, hosts=len(self._hosts), limit=self.limit)
        if self._leases is None:
            self._leases = asyncio.get_running_loop().create_task(
                self._renew_leases(), name="task-host-leases"
            )
        if self.memory_max_bytes > 0 and self._sampler is None:
            self._sampler = asyncio.get_running_loop().create_task(
                self._sample_memory(), name="task-host-memory"
            )
        return host

    async def _renew_leases(self) -> None:
        """Tell each host, every ``LEASE_RENEW_S``, which of its tasks this worker still runs: a host
        writes only under a fresh lease, so a worker that is stopped or cut off from its group stops
        its hosts' writes as well."""
        while True:
            await asyncio.sleep(LEASE_RENEW_S)
            self.renew_leases()

    def renew_leases(self) -> None:
        """Renew every host's lease; its set of tasks is computed again only when the host's tasks or
        the worker's set (a new object for each assignment) changed, and sent only when it differs."""
        runnable = self.tasks_run()
        for host in list(self.running):
            if host.exited:
                continue
            basis = (host.placements, runnable)
            if host.leased_from == basis:  # the same set object compares at once, by identity
                host.send(Lease(None))
                continue
            tasks = frozenset([(t.connector, t.task) for t in list(host.tasks.values())])
            if runnable is not None:
                tasks &= runnable
            unchanged = tasks == host.leased
            host.leased, host.leased_from = tasks, basis
            host.send(Lease(None if unchanged else tasks))

    async def _sample_memory(self) -> None:
        """Kill a host whose resident memory passed ``task.process.memory.max.bytes``: its tasks FAILED
        with the limit and the RSS seen, rather than the whole machine paging or the OOM killer choosing."""
        while True:
            await asyncio.sleep(MEMORY_SAMPLE_INTERVAL_S)
            self.check_memory()

    def check_memory(self) -> None:
        limit = self.memory_max_bytes
        for host in list(self.running):
            rss = None if host.exited or host.killed_for is not None else rss_bytes(host.pid)
            if rss is not None and rss > limit:
                log.error(
                    "task_host.memory_exceeded", pid=host.pid, rss=rss, limit=limit, tasks=len(host.tasks)
                )
                host.kill(memory_exceeded(limit, rss))

    def abort(self) -> None:
        """The worker's run ended abnormally: no host outlives it."""
        for background in (self._sampler, self._leases):
            if background is not None:
                background.cancel()
        for host in list(self.running):
            host.kill()

    async def close(self) -> None:
        """At shutdown, after every task stopped: close what is left, kill what does not exit."""
        hosts = list(self.running)
        for host in hosts:
            host.close()
        for host in hosts:
            await host.wait_closed(_CLOSE_TIMEOUT_S)
        for background in (self._sampler, self._leases):
            if background is not None:
                background.cancel()
        for task in list(self._background):
            task.cancel()
