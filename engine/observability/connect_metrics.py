"""Kafka Connect's own metrics, under the names Strimzi's JMX-exporter rules give them.

Connect registers its metrics in ``ConnectMetricsRegistry`` as JMX beans such as
``kafka.connect<type=source-task-metrics, connector=X, task=Y><>source-record-poll-total``;
Strimzi's ``examples/metrics/kafka-connect-metrics.yaml`` turns those into Prometheus names
(lower case, ``-`` to ``_``), and its Grafana dashboards and alert rules query them:

=========================================================  ==================================================
rule (bean ``type``, attribute)                            Prometheus name and labels
=========================================================  ==================================================
``connector-metrics`` ``status: running``                  ``kafka_connect_connector_status{connector,status}`` 1
``connector-task-metrics`` ``status: failed``              ``kafka_connect_connector_task_status{connector,task,status}`` 1
``(.+)-metrics, connector, task`` ``<attr>``               ``kafka_connect_<type>_<attr>{connector,task}``
``connect-worker-metrics`` ``<attr>``                      ``kafka_connect_worker_<attr>``
``connect-worker-metrics, connector`` ``<attr>``           ``kafka_connect_worker_<attr>{connector}``
``connect-worker-rebalance-metrics`` ``<attr>``            ``kafka_connect_worker_rebalance_<attr>``
=========================================================  ==================================================

``connector-metrics`` ``connector-class|-type|-version``   ``kafka_connect_connector_connector_class{connector,connector_class}`` 1 (…)
``connect-coordinator-metrics, client-id`` ``assigned-*``  ``kafka_connect_coordinator_assigned_tasks{clientid}``
``(producer|consumer|admin-client)-metrics, client-id``    ``kafka_producer_connection_count{clientid}`` (…)

Strimzi's rules (since its JMX Exporter 1.0 update of June 2024) type a ``*-total`` attribute COUNTER,
an info value (``connect-protocol``, ``leader-name``, ``*-info``) UNTYPED and the rest GAUGE; here
the same: a name ending in ``_total`` is a counter (the same sample name in the text format), an info
series is a gauge whose value is 1, and the rest are gauges. Status gauges are read from the status
store at scrape time; the per-task numbers are plain attributes the task loops increment once per
batch or commit (``TaskCounters``), created when a task instance starts and dropped when it stops,
so they count "since the task was last restarted", as Connect's do. Averages, maxima and
percentages are over the task instance's life (Connect's are over its sample windows).
In distributed mode a worker reports only the connectors and tasks it runs, as a Connect worker does.
The Kafka clients' families come from ``engine.config.kafka_clients.accounting`` (aiokafka keeps no
metrics): every client the process started and has not stopped, as JMX lists every client of a JVM.
With task processes the worker's "JVM" spans its task hosts: each host's plugin metrics and clients
arrive as a ``ProcessReading`` every second and are exposed under the same names and labels.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, fields
from operator import attrgetter
from typing import Any, Literal

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric, SummaryMetricFamily

from engine.api.metrics import MetricName, PluginMetricsRegistry, StatKind
from engine.config.kafka_clients.accounting import ClientStats, live_clients
from engine.storage.base import StatusStore
from engine.storage.status import Status
from engine.tolerance.metrics import ErrorMetrics
from states import TaskState

Kind = Literal["source", "sink"]

# a task's counters as ``TaskCounters.values()`` gives them: what crosses a task host's pipe
CounterValues = tuple[Any, ...]

CONNECTOR_STATUS = "kafka_connect_connector_status"
TASK_STATUS = "kafka_connect_connector_task_status"

# Connect's ``task-error-metrics`` attributes, from ``ErrorMetrics``' fields
TASK_ERRORS: tuple[tuple[str, str, str], ...] = (
    ("total_failures", "total_record_failures", "Record processing failures in this task, retries included."),
    ("total_errors", "total_record_errors", "Records whose processing finally failed in this task."),
    (
        "total_records_skipped",
        "total_records_skipped",
        "Records skipped due to errors (errors.tolerance=all).",
    ),
    ("total_retries", "total_retries", "Operations retried."),
    ("total_errors_logged", "total_errors_logged", "Errors that were logged (errors.log.enable)."),
    ("total_dlq_produced", "deadletterqueue_produce_requests", "Attempted writes to the dead letter queue."),
    ("total_dlq_failures", "deadletterqueue_produce_failures", "Failed writes to the dead letter queue."),
    ("last_error_timestamp", "last_error_timestamp", "Epoch ms when this task last met an error (0: never)."),
)


class TaskCounters:
    """One task instance's numbers; the loops add to the attributes directly (once per batch)."""

    __slots__ = (
        "batch_max",
        "batch_records",
        "batches",
        "commit_ms",
        "commit_ms_max",
        "commits_failed",
        "commits_succeeded",
        "errors",
        "kind",
        "log_truncations",
        "sink_record_read",
        "sink_record_send",
        "source_record_poll",
        "source_record_write",
        "throttled_s",
        "throttles",
        "truncation_redelivered",
    )

    def __init__(self, kind: Kind) -> None:
        self.kind = kind
        self.source_record_poll = 0  # records returned by poll(), before transformations
        self.source_record_write = 0  # records acknowledged by the topic, after transformations
        self.sink_record_read = 0  # records read from the topics, before conversion and transformations
        self.sink_record_send = 0  # records handed to put(), after transformations
        self.batches = 0
        self.batch_records = 0
        self.batch_max = 0
        self.commits_succeeded = 0
        self.commits_failed = 0
        self.commit_ms = 0.0
        self.commit_ms_max = 0.0
        self.errors = ErrorMetrics()  # the task's ToleranceOperator counts into this
        self.throttles = 0  # waits for record.rate.limit / bytes.per.second.max (ours)
        self.throttled_s = 0.0  # their total length, on the pacer's clock
        self.log_truncations = 0  # sink: partitions found truncated below the position (leader epochs, ours)
        self.truncation_redelivered = 0  # sink: records read again because of them

    def batch(self, size: int) -> None:
        self.batches += 1
        self.batch_records += size
        if size > self.batch_max:
            self.batch_max = size

    def commit(self, succeeded: bool, seconds: float) -> None:
        """One offset commit attempt (Connect's ``recordCommitSuccess``/``recordCommitFailure``)."""
        if succeeded:
            self.commits_succeeded += 1
        else:
            self.commits_failed += 1
        ms = seconds * 1000
        self.commit_ms += ms
        if ms > self.commit_ms_max:
            self.commit_ms_max = ms

    def values(self) -> CounterValues:
        """Every counter, the kind first and the error metrics last, as one flat tuple: a task host
        compares and pickles these for thousands of tasks a second, in a fraction of the objects' time."""
        return _OWN_VALUES(self) + _ERROR_VALUES(self.errors)

    def set_values(self, values: CounterValues) -> None:
        """Take every counter from ``values()`` of another instance (the task host's copy)."""
        for name, value in zip(_OWN_NAMES, values, strict=False):
            setattr(self, name, value)
        errors = self.errors
        for name, value in zip(_ERROR_NAMES, values[len(_OWN_NAMES) :], strict=True):
            setattr(errors, name, value)


_OWN_NAMES = ("kind", *sorted(set(TaskCounters.__slots__) - {"kind", "errors"}))
_ERROR_NAMES = tuple(f.name for f in fields(ErrorMetrics))
_OWN_VALUES = attrgetter(*_OWN_NAMES)
_ERROR_VALUES = attrgetter(*_ERROR_NAMES)


@dataclass(frozen=True, slots=True)
class CoordinatorView:
    """A cluster member's group state at scrape time (Connect's coordinator and rebalance metrics)."""

    client_id: str  # the member's client.id: the ``clientid`` label of the coordinator's gauges
    assigned_connectors: int
    assigned_tasks: int
    rebalancing: bool  # a rebalance is under way: joining, an assignment not applied yet, or one owed
    leader: str  # the leader's worker id ("" while unknown)
    completed: int
    generation: int


@dataclass(frozen=True, slots=True)
class ProcessReading:
    """Another process's share of this worker's metrics (a task host's): its plugins' metrics (KIP-877)
    and its Kafka clients with their open connections, as last read there."""

    plugins: list[tuple[MetricName, StatKind, float]]
    clients: list[tuple[ClientStats, int]]

    @classmethod
    def here(cls, plugins: PluginMetricsRegistry) -> ProcessReading:
        """This process's reading, to send to the worker."""
        return cls(plugins.read(), list(live_clients()))


class ConnectMetrics:
    """One engine's Connect-named families; ``EngineMetrics.connect``."""

    def __init__(self, status: StatusStore, worker_id: str | None = None) -> None:
        self._status = status
        self._worker_id = worker_id  # distributed: only statuses this worker wrote count here
        self.tasks: dict[tuple[str, int], TaskCounters] = {}
        # distributed mode: () -> (completed rebalances, generation); None in standalone
        self.rebalances: Callable[[], tuple[int, int]] | None = None
        # distributed mode: the member's assignment and rebalance state; None in standalone (as in Connect)
        self.coordinator: Callable[[], CoordinatorView] | None = None
        self._connector_info: dict[str, tuple[str, str, str]] = {}  # name -> (class, version, type)
        self.plugins = PluginMetricsRegistry()  # KIP-877: what connectors, tasks, converters, SMTs register
        # task processes: the last reading of each live task host, exposed with this process's own
        self.other_processes: Callable[[], list[ProcessReading]] | None = None
        # task processes: bring hosted tasks' counters up to date (they are applied at scrape time)
        self.refresh_tasks: Callable[[], None] | None = None

    # ---- the herder -------------------------------------------------------------------------

    def connector_started(self, connector: str, class_name: str, version: str, kind: str) -> None:
        """The connector's info series (Connect's ``connector-metrics`` ``connector-class``, ``-version``,
        ``-type``): shown while its status says this worker runs it."""
        self._connector_info[connector] = (class_name, version, kind)

    # ---- the task loops -------------------------------------------------------------------

    def task_started(self, connector: str, task: int, kind: Kind) -> TaskCounters:
        """A new task instance: fresh counters (Connect's count "since the task was last restarted")."""
        counters = self.tasks[(connector, task)] = TaskCounters(kind)
        return counters

    def task_stopped(self, connector: str, task: int, counters: TaskCounters) -> None:
        """The instance is gone (stopped, restarted, deleted, moved): its series go, unless a newer one took over."""
        if self.tasks.get((connector, task)) is counters:
            del self.tasks[(connector, task)]

    # ---- scraping ---------------------------------------------------------------------------

    def _mine(self, status: Status | None) -> bool:
        return status is not None and (self._worker_id is None or status.worker_id == self._worker_id)

    def collect(self) -> Iterator[Metric]:
        if self.refresh_tasks is not None:
            self.refresh_tasks()
        yield from self._statuses()
        yield from self._tasks()
        yield from self._rebalance()
        others = self.other_processes() if self.other_processes is not None else []
        yield from client_families([client for reading in others for client in reading.clients])
        yield from self._plugin_families([metric for reading in others for metric in reading.plugins])

    def _statuses(self) -> Iterator[Metric]:
        connector_status = GaugeMetricFamily(
            CONNECTOR_STATUS,
            "The status of the connector (1 for the current one): unassigned, running, paused, "
            "stopped, failed or restarting.",
            labels=("connector", "status"),
        )
        task_status = GaugeMetricFamily(
            TASK_STATUS,
            "The status of the connector task (1 for the current one): unassigned, running, paused, "
            "failed or restarting.",
            labels=("connector", "task", "status"),
        )
        per_connector = {
            state: GaugeMetricFamily(
                f"kafka_connect_worker_connector_{state}_task_count",
                f"The number of {state} tasks of the connector on this worker.",
                labels=("connector",),
            )
            for state in ("total", *(s.value.lower() for s in TaskState))
        }
        info = [
            GaugeMetricFamily(
                f"kafka_connect_connector_connector_{attr}",
                f"1, with the connector's {attr} in the connector_{attr} label.",
                labels=("connector", f"connector_{attr}"),
            )
            for attr in ("class", "version", "type")
        ]
        connectors = tasks = 0
        names = set(self._status.connector_names())
        for gone in self._connector_info.keys() - names:  # deleted: its info goes with its status
            self._connector_info.pop(gone, None)
        for name in sorted(names):
            status = self._status.connector(name)
            if self._mine(status):
                assert status is not None
                connectors += 1
                connector_status.add_metric((name, status.state.lower()), 1)
                described = self._connector_info.get(name)
                if described is not None:
                    for family, value in zip(info, described, strict=True):
                        family.add_metric((name, value), 1)
            counts = dict.fromkeys(per_connector, 0)
            for number, task in self._status.tasks(name).items():
                if not self._mine(task):
                    continue
                tasks += 1
                task_status.add_metric((name, str(number), task.state.lower()), 1)
                counts["total"] += 1
                state = task.state.lower()
                counts[state] = counts.get(state, 0) + 1
            if counts["total"]:
                for state, family in per_connector.items():
                    family.add_metric((name,), counts.get(state, 0))
        yield connector_status
        yield from info
        yield task_status
        yield GaugeMetricFamily(
            "kafka_connect_worker_connector_count",
            "The number of connectors run in this worker.",
            value=connectors,
        )
        yield GaugeMetricFamily(
            "kafka_connect_worker_task_count", "The number of tasks run in this worker.", value=tasks
        )
        yield from per_connector.values()

    def _tasks(self) -> Iterator[Metric]:
        labels = ("connector", "task")
        poll = CounterMetricFamily(
            "kafka_connect_source_task_source_record_poll_total",
            "Records produced or polled by the task, before transformations.",
            labels=labels,
        )
        write = CounterMetricFamily(
            "kafka_connect_source_task_source_record_write_total",
            "Records written to the topics by the task, after transformations (filtered records excluded).",
            labels=labels,
        )
        read = CounterMetricFamily(
            "kafka_connect_sink_task_sink_record_read_total",
            "Records read from the topics by the task, before transformations.",
            labels=labels,
        )
        send = CounterMetricFamily(
            "kafka_connect_sink_task_sink_record_send_total",
            "Records output from the transformations and put to the task.",
            labels=labels,
        )
        batch_max = GaugeMetricFamily(
            "kafka_connect_connector_task_batch_size_max",
            "Records in the largest batch the task has processed so far.",
            labels=labels,
        )
        batch_avg = GaugeMetricFamily(
            "kafka_connect_connector_task_batch_size_avg",
            "Average records in the batches the task has processed so far.",
            labels=labels,
        )
        commit_max = GaugeMetricFamily(
            "kafka_connect_connector_task_offset_commit_max_time_ms",
            "Longest offset commit of the task, in milliseconds.",
            labels=labels,
        )
        commit_avg = GaugeMetricFamily(
            "kafka_connect_connector_task_offset_commit_avg_time_ms",
            "Average offset commit time of the task, in milliseconds.",
            labels=labels,
        )
        commit_ok = GaugeMetricFamily(
            "kafka_connect_connector_task_offset_commit_success_percentage",
            "Percentage of the task's offset commit attempts that succeeded.",
            labels=labels,
        )
        commit_failed = GaugeMetricFamily(
            "kafka_connect_connector_task_offset_commit_failure_percentage",
            "Percentage of the task's offset commit attempts that failed.",
            labels=labels,
        )
        errors = [
            (field, GaugeMetricFamily(f"kafka_connect_task_error_{name}", help_text, labels=labels))
            for field, name, help_text in TASK_ERRORS
        ]
        commits = CounterMetricFamily(
            "connect_engine_task_offset_commits_total",
            "Offset commit attempts of the task, by outcome (succeeded, failed).",
            labels=(*labels, "outcome"),
        )
        commit_seconds = SummaryMetricFamily(
            "connect_engine_task_offset_commit_seconds",
            "Offset commit attempts of the task and their total duration.",
            labels=labels,
        )
        throttles = CounterMetricFamily(
            "connect_engine_task_throttles",
            "Waits the task made for its rate limits (record.rate.limit, bytes.per.second.max).",
            labels=labels,
        )
        throttled = CounterMetricFamily(
            "connect_engine_task_throttled_seconds",
            "Time the task waited for its rate limits, in seconds.",
            labels=labels,
        )
        truncations = CounterMetricFamily(
            "connect_engine_sink_task_log_truncations",
            "Times the task found a partition's log truncated below its position "
            "(leader epochs) and read again from the divergence point.",
            labels=labels,
        )
        redelivered = CounterMetricFamily(
            "connect_engine_sink_task_truncation_redelivered_records",
            "Records the task read again because of those truncations.",
            labels=labels,
        )
        for (connector, number), c in sorted(self.tasks.items()):
            key = (connector, str(number))
            throttles.add_metric(key, c.throttles)
            throttled.add_metric(key, c.throttled_s)
            if c.kind == "source":
                poll.add_metric(key, c.source_record_poll)
                write.add_metric(key, c.source_record_write)
            else:
                read.add_metric(key, c.sink_record_read)
                send.add_metric(key, c.sink_record_send)
                truncations.add_metric(key, c.log_truncations)
                redelivered.add_metric(key, c.truncation_redelivered)
            batch_max.add_metric(key, c.batch_max)
            batch_avg.add_metric(key, c.batch_records / c.batches if c.batches else 0.0)
            attempts = c.commits_succeeded + c.commits_failed
            commit_max.add_metric(key, c.commit_ms_max)
            commit_avg.add_metric(key, c.commit_ms / attempts if attempts else 0.0)
            commit_ok.add_metric(key, 100.0 * c.commits_succeeded / attempts if attempts else 0.0)
            commit_failed.add_metric(key, 100.0 * c.commits_failed / attempts if attempts else 0.0)
            commits.add_metric((*key, "succeeded"), c.commits_succeeded)
            commits.add_metric((*key, "failed"), c.commits_failed)
            commit_seconds.add_metric(key, attempts, c.commit_ms / 1000)
            for field, family in errors:
                family.add_metric(key, getattr(c.errors, field))
        yield from (
            poll,
            write,
            read,
            send,
            batch_max,
            batch_avg,
            commit_max,
            commit_avg,
            commit_ok,
            commit_failed,
        )
        yield from (family for _, family in errors)
        yield from (commits, commit_seconds, throttles, throttled, truncations, redelivered)

    def _rebalance(self) -> Iterator[Metric]:
        if self.rebalances is not None:
            completed, generation = self.rebalances()
            yield CounterMetricFamily(
                "kafka_connect_worker_rebalance_completed_rebalances_total",
                "Rebalances completed by this worker.",
                value=completed,
            )
            yield GaugeMetricFamily(
                "kafka_connect_worker_rebalance_epoch",
                "The epoch or generation number of this worker.",
                value=generation,
            )
        if self.coordinator is None:
            return
        view = self.coordinator()
        yield GaugeMetricFamily(
            "kafka_connect_worker_rebalance_rebalancing",
            "Whether this worker is currently rebalancing (1) or not (0).",
            value=1 if view.rebalancing else 0,
        )
        leader = GaugeMetricFamily(
            "kafka_connect_worker_rebalance_leader_name",
            "1, with the group leader's worker id in the leader_name label.",
            labels=("leader_name",),
        )
        leader.add_metric((view.leader,), 1)
        yield leader
        protocol = GaugeMetricFamily(
            "kafka_connect_worker_rebalance_connect_protocol",
            "1, with the group's Connect protocol in the connect_protocol label.",
            labels=("connect_protocol",),
        )
        protocol.add_metric(("connect-engine",), 1)  # our own assignor, not eager/compatible/sessioned
        yield protocol
        for attr, value, what in (
            ("connectors", view.assigned_connectors, "connector instances"),
            ("tasks", view.assigned_tasks, "tasks"),
        ):
            family = GaugeMetricFamily(
                f"kafka_connect_coordinator_assigned_{attr}",
                f"The number of {what} currently assigned to this consumer.",
                labels=("clientid",),
            )
            family.add_metric((view.client_id,), value)
            yield family

    def _plugin_families(self, others: list[tuple[MetricName, StatKind, float]]) -> Iterator[Metric]:
        """KIP-877's group ``plugins`` as ``kafka_connect_plugins_<name>``, the plugin's tags as labels;
        ``others``: those of tasks in task hosts."""
        families: dict[str, Metric] = {}
        for metric_name, kind, value in [*self.plugins.read(), *others]:
            name = "kafka_connect_plugins_" + _SANITIZE.sub("_", metric_name.name)
            family = families.get(name)
            if family is None:
                family = families[name] = Metric(name, metric_name.description or metric_name.name, kind)
            sample = name + "_total" if kind == "counter" else name
            family.add_sample(sample, {_SANITIZE.sub("_", k): v for k, v in metric_name.tags}, value)
        yield from families.values()


_SANITIZE = re.compile(r"[^a-zA-Z0-9_]")


def client_families(others: Iterable[tuple[ClientStats, int]] = ()) -> Iterator[Metric]:
    """The Kafka clients' ``connection-count`` and byte totals, as Strimzi's rules name them: this
    process's and ``others`` (those of the task hosts)."""
    connections = {
        role: GaugeMetricFamily(
            f"kafka_{role}_connection_count",
            "The current number of active connections.",
            labels=("clientid",),
        )
        for role in ("producer", "consumer", "admin_client")
    }
    outgoing = CounterMetricFamily(
        "kafka_producer_outgoing_byte_total",
        "Record bytes handed to the producer (Java: bytes sent to all servers).",
        labels=("clientid",),
    )
    incoming = CounterMetricFamily(
        "kafka_consumer_incoming_byte_total",
        "Record bytes the consumer returned (Java: bytes read off all sockets).",
        labels=("clientid",),
    )
    # clients sharing a client.id (Java's JMX would drop all but one) are summed: sums stay right
    open_by_id: dict[tuple[str, str], int] = {}
    bytes_by_id: dict[tuple[str, str], int] = {}
    for stats, open_connections in itertools.chain(live_clients(), others):
        key = (stats.role, stats.client_id)
        open_by_id[key] = open_by_id.get(key, 0) + open_connections
        bytes_by_id[key] = bytes_by_id.get(key, 0) + stats.outgoing_bytes + stats.incoming_bytes
    for (role, client_id), count in sorted(open_by_id.items()):
        connections[role].add_metric((client_id,), count)
        if role == "producer":
            outgoing.add_metric((client_id,), bytes_by_id[(role, client_id)])
        elif role == "consumer":
            incoming.add_metric((client_id,), bytes_by_id[(role, client_id)])
    yield from connections.values()
    yield outgoing
    yield incoming
