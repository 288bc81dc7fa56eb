"""Task processes without a broker: the setting, the in-process fallback, the pipe's framing and
the words a dead host leaves in its tasks' traces."""

from __future__ import annotations

import asyncio
import os
import pickle
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
import structlog
from prometheus_client.core import Metric
from prometheus_client.exposition import generate_latest

from engine import Engine
from engine.api.metrics import CumulativeCount, PluginMetricsRegistry
from engine.config.kafka_clients.accounting import ClientStats
from engine.config.worker import WorkerConfig
from engine.errors import ConfigError
from engine.observability.connect_metrics import ConnectMetrics, ProcessReading, TaskCounters
from engine.storage.offsets import MemoryOffsetStore
from engine.storage.status import MemoryStatusStore
from engine.worker.data_plane import DataSettings
from engine.worker.task_host.host import Host, Pipe
from engine.worker.task_host.pool import TaskHost, TaskHosts, exit_cause, memory_exceeded, rss_bytes
from engine.worker.task_host.protocol import (
    LEASE_S,
    Counters,
    HostMetrics,
    Lease,
    Reported,
    StartTask,
    frame,
    read_frame,
)


def test_task_processes_defaults_to_the_workers_own_process() -> None:
    assert DataSettings.parse({}).task_processes == 0
    assert DataSettings.parse({"task.processes": "3"}).task_processes == 3
    with pytest.raises(ConfigError, match=r"task\.processes"):
        DataSettings.parse({"task.processes": "-1"})


def test_the_memory_ceiling_is_off_by_default_and_checked() -> None:
    assert DataSettings.parse({}).task_process_memory_max_bytes == 0
    parsed = DataSettings.parse({"task.process.memory.max.bytes": "268435456"})
    assert parsed.task_process_memory_max_bytes == 268435456
    with pytest.raises(ConfigError, match=r"task\.process\.memory\.max\.bytes: Value must be at least 0"):
        DataSettings.parse({"task.process.memory.max.bytes": "-1"})
    with pytest.raises(ConfigError, match=r"Invalid value 256m for configuration task\.process\.memory"):
        DataSettings.parse({"task.process.memory.max.bytes": "256m"})


def test_a_hosts_resident_memory_is_read_from_proc() -> None:
    rss = rss_bytes(os.getpid())
    assert rss is not None
    assert rss > 10 << 20  # this interpreter with pytest loaded
    assert rss_bytes(2**22 + 1) is None  # no such process
    assert memory_exceeded(268435456, 301989888) == (
        "Task process exceeded task.process.memory.max.bytes=268435456 (RSS 301989888 bytes); killed"
    )


def test_in_process_topics_keep_tasks_in_the_worker_and_say_why() -> None:
    with structlog.testing.capture_logs() as logs:
        engine = Engine({"task.processes": "2"})
    assert engine.data_settings.task_processes == 0
    [line] = [e for e in logs if e["event"] == "engine.task_processes_ignored"]
    assert line["log_level"] == "info"
    assert "bootstrap.servers" in line["reason"]


def test_a_dead_host_is_named_by_its_signal_or_exit_code() -> None:
    assert exit_cause(-11) == "Task process exited with signal SIGSEGV (-11)"
    assert exit_cause(-9) == (
        "Task process exited with signal SIGKILL (-9); it may have run out of memory"
        " (the kernel's OOM killer or a memory limit sends SIGKILL)"
    )
    assert exit_cause(3) == "Task process exited with exit code 3"


async def test_messages_cross_the_pipe_as_they_are() -> None:
    counters = TaskCounters("source")
    counters.source_record_poll = 7
    start = StartTask(1, "c", 0, "m.Task", {"a": "b"}, {"x": "y"}, "STARTED", "42", [({"p": 1}, {"o": 2})])
    reader = asyncio.StreamReader()
    reader.feed_data(frame(start) + frame(Counters({1: counters.values()})))
    reader.feed_eof()
    assert await read_frame(reader) == start
    message = await read_frame(reader)
    assert isinstance(message, Counters)
    assert message.counters[1] == counters.values()
    assert await read_frame(reader) is None


def test_a_tasks_counters_cross_as_flat_values_and_are_taken_back_whole() -> None:
    counters = TaskCounters("sink")
    counters.sink_record_read = 12
    counters.batch(5)
    counters.commit(True, 0.25)
    counters.errors.record_failure()
    counters.errors.total_dlq_produced = 3
    copy = TaskCounters("source")  # the worker's copy takes the host's kind as well
    copy.set_values(counters.values())
    assert copy.values() == counters.values()
    assert (copy.kind, copy.sink_record_read, copy.batch_max, copy.commit_ms) == ("sink", 12, 5, 250.0)
    assert copy.errors == counters.errors
    assert copy.errors is not counters.errors


def test_a_hosts_reading_is_exposed_with_the_workers_own_names_and_labels() -> None:
    registry = PluginMetricsRegistry()
    handle = registry.handle({"connector": "c", "task": "1"})
    handle.sensor("polls").add(handle.metric_name("poll-count", "poll() calls."), CumulativeCount())
    handle.add_metric(handle.metric_name("lag"), lambda: 4.0)
    reading = ProcessReading(
        registry.read(), [(ClientStats("producer", "host-producer", outgoing_bytes=99), 1)]
    )
    assert pickle.loads(pickle.dumps(reading)) == reading  # it crosses the pipe as it is
    metrics = ConnectMetrics(MemoryStatusStore())
    metrics.other_processes = lambda: [reading]
    text = generate_latest(_Collect(metrics)).decode()
    assert 'kafka_connect_plugins_poll_count_total{connector="c",task="1"} 0.0' in text
    assert 'kafka_connect_plugins_lag{connector="c",task="1"} 4.0' in text
    assert 'kafka_producer_outgoing_byte_total{clientid="host-producer"} 99.0' in text
    assert 'kafka_producer_connection_count{clientid="host-producer"} 1.0' in text


class _Collect:
    def __init__(self, metrics: ConnectMetrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterator[Metric]:
        return self.metrics.collect()


class _Written:
    """The host's end of its pipe, kept in memory: the frames the host sent."""

    def __init__(self) -> None:
        self.data = bytearray()

    def is_closing(self) -> bool:
        return False

    def write(self, data: bytes) -> None:
        self.data += data

    async def messages(self) -> list[object]:
        reader = asyncio.StreamReader()
        reader.feed_data(bytes(self.data))
        reader.feed_eof()
        self.data.clear()
        found = []
        while (message := await read_frame(reader)) is not None:
            found.append(message)
        return found


def _host() -> tuple[Host, _Written]:
    written = _Written()
    return Host(WorkerConfig.parse({}), Pipe(written)), written  # type: ignore[arg-type]


def test_a_lease_without_tasks_renews_the_ones_named_last() -> None:
    host, _ = _host()
    host.handle(Lease(frozenset({("c", 0), ("c", 1)})))
    assert (host.runs_task("c", 0), host.runs_task("c", 1)) == (True, True)
    host._lease_at -= LEASE_S + 1  # the worker went quiet past the lease
    assert not host.runs_task("c", 0)
    host.handle(Lease(None))
    assert (host.runs_task("c", 0), host.runs_task("c", 1)) == (True, True)
    host.handle(Lease(frozenset({("c", 1)})))
    assert (host.runs_task("c", 0), host.runs_task("c", 1)) == (False, True)


async def test_only_counters_that_changed_cross_the_pipe_in_one_message() -> None:
    host, written = _host()
    loops = {key: SimpleNamespace(counters=TaskCounters("source")) for key in (1, 2, 3)}
    host.runners.update({key: SimpleNamespace(loop=loop) for key, loop in loops.items()})  # type: ignore[misc]
    host.send_counters()
    [first, _] = await written.messages()
    assert isinstance(first, Counters)
    assert sorted(first.counters) == [1, 2, 3]
    host.send_counters()
    assert [type(m) for m in await written.messages()] == [HostMetrics]  # nothing changed: no Counters
    loops[2].counters.source_record_poll = 5
    host.send_counters()
    [changed, _] = await written.messages()
    assert isinstance(changed, Counters)
    assert list(changed.counters) == [2]
    assert changed.counters[2] == loops[2].counters.values()


class _Stub:
    def __init__(self, connector: str, task: int) -> None:
        self.connector, self.task = connector, task


async def test_a_worker_names_its_hosts_tasks_again_only_when_they_change(tmp_path: Path) -> None:
    """On a real pipe to a child process: a full lease, then renewals of a few bytes, then a new
    set when the worker stops running one of the tasks."""
    running = [frozenset({("c", 0), ("c", 1)})]  # as a cluster's: a new set for each assignment
    hosts = TaskHosts(1, {}, MemoryOffsetStore(), lambda *_: None, tasks_run=lambda: running[0])
    received = tmp_path / "received"
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        f"import shutil, sys; shutil.copyfileobj(sys.stdin.buffer, open({str(received)!r}, 'wb'))",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    host = TaskHost(process, hosts)
    host.tasks.update({1: _Stub("c", 0), 2: _Stub("c", 1)})  # type: ignore[dict-item]
    hosts.running.add(host)
    hosts.renew_leases()
    hosts.renew_leases()
    running[0] = frozenset({("c", 1)})
    hosts.renew_leases()
    hosts.renew_leases()
    host.leave(2)  # the host's own tasks change: ("c", 1) is gone from its lease too
    hosts.renew_leases()
    host.tasks.clear()
    host.close()
    await host.wait_closed(10)
    reader = asyncio.StreamReader()
    reader.feed_data(received.read_bytes())
    reader.feed_eof()
    leases = []
    while (message := await read_frame(reader)) is not None:
        leases.append(message)
    assert leases == [
        Lease(frozenset({("c", 0), ("c", 1)})),
        Lease(None),
        Lease(frozenset({("c", 1)})),
        Lease(None),
        Lease(frozenset()),
    ]


class _Counted:
    def __init__(self) -> None:
        self.values: list[tuple[object, ...]] = []
        self.reports: list[tuple[str, str | None]] = []

    def on_counters(self, values: tuple[object, ...]) -> None:
        self.values.append(values)

    def on_report(self, trigger: str, trace: str | None) -> None:
        self.reports.append((trigger, trace))


async def test_a_hosts_counters_wait_for_a_scrape_or_the_tasks_next_report() -> None:
    """A second's counters of thousands of tasks are kept and handed over when ``/metrics`` is read;
    a task's counters sent before its report are handed over with the report (its series exist from
    its start, as in process)."""
    hosts = TaskHosts(1, {}, MemoryOffsetStore(), lambda *_: None)
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        "import sys; sys.stdin.read()",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    host = TaskHost(process, hosts)
    hosts.running.add(host)
    tasks = {key: _Counted() for key in (1, 2, 3)}
    host.tasks.update(tasks)  # type: ignore[arg-type]
    first, second = TaskCounters("source"), TaskCounters("source")
    second.source_record_poll = 9
    host._dispatch(Counters({1: first.values(), 2: first.values()}))
    assert [t.values for t in tasks.values()] == [[], [], []]
    host._dispatch(Counters({1: second.values(), 2: second.values()}))
    hosts.apply_counters()
    assert [t.values for t in tasks.values()] == [[second.values()], [second.values()], []]
    host._dispatch(Counters({3: first.values()}))  # sent before task 3's report
    assert tasks[3].values == []
    host._dispatch(Reported(3, "start", None))
    assert tasks[3].values == [first.values()]
    assert tasks[3].reports == [("start", None)]
    host.tasks.clear()
    host.close()
    await host.wait_closed(10)
