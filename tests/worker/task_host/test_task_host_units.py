"""Task processes without a broker: the setting, the in-process fallback, the pipe's framing and
the words a dead host leaves in its tasks' traces."""

from __future__ import annotations

import asyncio
import os
import pickle
from collections.abc import Iterator

import pytest
import structlog
from prometheus_client.core import Metric
from prometheus_client.exposition import generate_latest

from engine import Engine
from engine.api.metrics import CumulativeCount, PluginMetricsRegistry
from engine.config.kafka_clients.accounting import ClientStats
from engine.errors import ConfigError
from engine.observability.connect_metrics import ConnectMetrics, ProcessReading, TaskCounters
from engine.storage.status import MemoryStatusStore
from engine.worker.data_plane import DataSettings
from engine.worker.task_host.pool import exit_cause, memory_exceeded, rss_bytes
from engine.worker.task_host.protocol import Counters, StartTask, frame, read_frame


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
    reader.feed_data(frame(start) + frame(Counters(1, counters)))
    reader.feed_eof()
    assert await read_frame(reader) == start
    message = await read_frame(reader)
    assert isinstance(message, Counters)
    assert message.counters.source_record_poll == 7
    assert await read_frame(reader) is None


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
