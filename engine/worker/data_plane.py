"""What the source and sink loops share within one worker: topics, one producer, stores, settings."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.config.kafka_clients import NO_SETTINGS, OVERRIDE_PREFIXES, KafkaClients, Role
from engine.config.worker import int_setting
from engine.errors import ConfigError
from engine.observability.connect_metrics import ConnectMetrics, Kind, TaskCounters
from engine.spark.supervisor import SparkSupervisor
from engine.storage.base import OffsetStore, StatusStore
from engine.storage.status import TopicStatus
from engine.topics.base import Producer, Topics
from engine.topics.errors import TopicsError
from engine.worker.exactly_once import worker_enabled
from engine.worker.rate_limit import PacingTimers
from engine.worker.task_host.pool import TaskHosts

# Java Connect gives every task a thread of its own; a pool this size does the same for up to this
# many synchronous tasks at once, and past that they take turns. Not more by default: every thread
# that wakes from a poll() contends for the GIL with the event loop: with 1,024 threads and 2,400
# idle sync tasks, 200 deletes took 40 s instead of 0.1-0.5 s (BENCHMARKS.md, issue 29 section)
TASK_THREADS_MAX = 128

DATA_PLANE_DEFAULTS: dict[str, str] = {
    "offset.flush.interval.ms": "60000",
    "offset.flush.timeout.ms": "5000",
    "topic.tracking.enable": "true",
    "topic.tracking.allow.reset": "true",
    "consumer.max.poll.records": "500",
}


def _flag(raw: Mapping[str, str], key: str) -> bool:
    value = raw.get(key, DATA_PLANE_DEFAULTS[key]).strip().lower()
    if value not in ("true", "false"):
        raise ConfigError(
            f"Invalid value {value} for configuration {key}: Expected value to be either true or false",
            errors={key: ["Expected value to be either true or false"]},
        )
    return value == "true"


# Connect's types for these keys, as its "Not a number of type ..." names them
_LONG_KEYS = frozenset({"offset.flush.interval.ms", "offset.flush.timeout.ms"})


def _positive_int(raw: Mapping[str, str], key: str) -> int:
    value = raw.get(key, DATA_PLANE_DEFAULTS[key]).strip()
    try:
        number = int(value)
    except ValueError:
        kind = "LONG" if key in _LONG_KEYS else "INT"
        raise ConfigError(
            f"Invalid value {value} for configuration {key}: Not a number of type {kind}",
            errors={key: [f"Not a number of type {kind}"]},
        ) from None
    if number < 0:
        raise ConfigError(
            f"Invalid value {value} for configuration {key}: Value must be at least 0",
            errors={key: ["Value must be at least 0"]},
        )
    return number


@dataclass(frozen=True, slots=True)
class DataSettings:
    """The worker keys the loops read: ``offset.flush.*``, ``topic.tracking.*``, ``consumer.max.poll.records``,
    ``exactly.once.source.support``, ``task.threads.max``, ``task.processes`` and
    ``task.process.memory.max.bytes``."""

    offset_flush_interval_s: float
    offset_flush_timeout_s: float
    topic_tracking: bool
    topic_tracking_reset: bool
    max_poll_records: int
    exactly_once: bool  # exactly.once.source.support=enabled: source tasks write in transactions
    # task.threads.max: how many synchronous poll()/put() calls run at once (the engine's task threads)
    task_threads_max: int
    # task.processes: how many task host processes run this worker's tasks (0: in this process)
    task_processes: int = 0
    # task.process.memory.max.bytes: a task host whose RSS passes this is killed, its tasks FAILED (0: no ceiling)
    task_process_memory_max_bytes: int = 0

    @classmethod
    def parse(cls, raw: Mapping[str, str]) -> DataSettings:
        return cls(
            offset_flush_interval_s=_positive_int(raw, "offset.flush.interval.ms") / 1000,
            offset_flush_timeout_s=_positive_int(raw, "offset.flush.timeout.ms") / 1000,
            topic_tracking=_flag(raw, "topic.tracking.enable"),
            topic_tracking_reset=_flag(raw, "topic.tracking.allow.reset"),
            max_poll_records=max(1, _positive_int(raw, "consumer.max.poll.records")),
            exactly_once=worker_enabled(raw),
            task_threads_max=int_setting(raw, "task.threads.max", TASK_THREADS_MAX, minimum=1),
            task_processes=int_setting(raw, "task.processes", 0),
            task_process_memory_max_bytes=int_setting(raw, "task.process.memory.max.bytes", 0),
        )


@dataclass
class DataPlane:
    """Owned by the herder; ``topics`` is opened and closed by the engine."""

    topics: Topics
    worker: Mapping[str, str]
    offsets: OffsetStore
    status: StatusStore
    settings: DataSettings
    worker_id: str
    spark: SparkSupervisor | None = None
    metrics: ConnectMetrics | None = None  # the engine's Connect families; None: counted, never exposed
    clients: KafkaClients = NO_SETTINGS  # Kafka client settings: worker-level, overrides, the policy
    timers: PacingTimers | None = None  # what rate limits wait on: the engine's timers (None: real time)
    hosts: TaskHosts | None = None  # task.processes > 0: the task hosts tasks run in (None: in this process)
    # whether this worker may still run a task (connector, task id): False once a cluster member is cut
    # off from its group (KAFKA-9184) or the task is no longer assigned here; the loops then write
    # nothing until the herder stops the task
    runs_task: Callable[[str, int], bool] = lambda connector, task: True
    _producer: Producer | None = field(default=None, init=False)

    def producer(self) -> Producer:
        """One producer for every source task of the worker, made on first use."""
        if self._producer is None:
            self._producer = self.topics.producer()
        return self._producer

    def connector_clients(self, role: Role, config: Mapping[str, str]) -> dict[str, Any] | None:
        """A connector's Kafka ``role`` client arguments when it sets ``<role>.override.*`` (then its
        clients are its own); None: the worker's shared clients serve it."""
        prefix = OVERRIDE_PREFIXES[role]
        if not any(key.startswith(prefix) for key in config):
            return None
        return self.clients.for_connector(role, config)

    async def open_producer(self, config: Mapping[str, str]) -> Producer:
        """The shared producer, started; a failure names the ``producer.*`` settings the worker lacks."""
        try:
            await self.topics.open_producer()
        except TopicsError as exc:
            raise self.client_failure("producer", config, exc) from exc
        return self.producer()

    def client_failure(self, role: Role, config: Mapping[str, str], exc: TopicsError) -> TopicsError:
        """``exc`` (a connector's ``role`` client could not start) with the security settings it lacks, if any."""
        advice = self.clients.missing_security(role, config)
        return exc if advice is None else TopicsError(f"{exc}. {advice}", retriable=exc.retriable)

    def task_started(self, connector: str, task: int, kind: Kind) -> TaskCounters:
        """Fresh counters for a new task instance, exposed at ``/metrics`` until ``task_stopped``."""
        if self.metrics is None:
            return TaskCounters(kind)
        return self.metrics.task_started(connector, task, kind)

    def task_stopped(self, connector: str, task: int, counters: TaskCounters) -> None:
        if self.metrics is not None:
            self.metrics.task_stopped(connector, task, counters)

    def track_topic(self, connector: str, task: int, topic: str) -> None:
        """Record ``topic`` as active for ``connector`` the first time one of its tasks uses it."""
        if self.settings.topic_tracking and not self.status.has_topic(connector, topic):
            self.status.put_topic(TopicStatus(topic, connector, task, int(time.time() * 1000)))
