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

Strimzi types every one of them GAUGE; here a name ending in ``_total`` is a counter (the same
sample name in the text format) and the rest are gauges. Status gauges are read from the status
store at scrape time; the per-task numbers are plain attributes the task loops increment once per
batch or commit (``TaskCounters``), created when a task instance starts and dropped when it stops,
so they count "since the task was last restarted", as Connect's do. Averages, maxima and
percentages are over the task instance's life (Connect's are over its sample windows).
In distributed mode a worker reports only the connectors and tasks it runs, as a Connect worker does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Literal

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric, SummaryMetricFamily

from engine.storage.base import StatusStore
from engine.storage.status import Status
from engine.tolerance.metrics import ErrorMetrics
from states import TaskState

Kind = Literal["source", "sink"]

CONNECTOR_STATUS = "kafka_connect_connector_status"
TASK_STATUS = "kafka_connect_connector_task_status"

# Connect's ``task-error-metrics`` attributes, from ``ErrorMetrics``' fields
TASK_ERRORS: tuple[tuple[str, str, str], ...] = (
    ("total_failures", "total_record_failures", "Record processing failures in this task, retries included."),
    ("total_errors", "total_record_errors", "Records whose processing finally failed in this task."),
    ("total_records_skipped", "total_records_skipped", "Records skipped due to errors (errors.tolerance=all)."),
    ("total_retries", "total_retries", "Operations retried."),
    ("total_errors_logged", "total_errors_logged", "Errors that were logged (errors.log.enable)."),
    ("total_dlq_produced", "deadletterqueue_produce_requests", "Attempted writes to the dead letter queue."),
    ("total_dlq_failures", "deadletterqueue_produce_failures", "Failed writes to the dead letter queue."),
    ("last_error_timestamp", "last_error_timestamp", "Epoch ms when this task last met an error (0: never)."),
)


class TaskCounters:
    """One task instance's numbers; the loops add to the attributes directly (once per batch)."""

    __slots__ = ("batch_max", "batch_records", "batches", "commit_ms", "commit_ms_max", "commits_failed",
                 "commits_succeeded", "errors", "kind", "sink_record_read", "sink_record_send",
                 "source_record_poll", "source_record_write", "throttled_s", "throttles")

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


class ConnectMetrics:
    """One engine's Connect-named families; ``EngineMetrics.connect``."""

    def __init__(self, status: StatusStore, worker_id: str | None = None) -> None:
        self._status = status
        self._worker_id = worker_id  # distributed: only statuses this worker wrote count here
        self.tasks: dict[tuple[str, int], TaskCounters] = {}
        # distributed mode: () -> (completed rebalances, generation); None in standalone
        self.rebalances: Callable[[], tuple[int, int]] | None = None

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
        yield from self._statuses()
        yield from self._tasks()
        yield from self._rebalance()

    def _statuses(self) -> Iterator[Metric]:
        connector_status = GaugeMetricFamily(
            CONNECTOR_STATUS, "The status of the connector (1 for the current one): unassigned, running, paused, "
            "stopped, failed or restarting.", labels=("connector", "status"))
        task_status = GaugeMetricFamily(
            TASK_STATUS, "The status of the connector task (1 for the current one): unassigned, running, paused, "
            "failed or restarting.", labels=("connector", "task", "status"))
        per_connector = {state: GaugeMetricFamily(
            f"kafka_connect_worker_connector_{state}_task_count",
            f"The number of {state} tasks of the connector on this worker.", labels=("connector",))
            for state in ("total", *(s.value.lower() for s in TaskState))}
        connectors = tasks = 0
        for name in self._status.connector_names():
            status = self._status.connector(name)
            if self._mine(status):
                assert status is not None
                connectors += 1
                connector_status.add_metric((name, status.state.lower()), 1)
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
        yield task_status
        yield GaugeMetricFamily("kafka_connect_worker_connector_count", "The number of connectors run in this worker.",
                                value=connectors)
        yield GaugeMetricFamily("kafka_connect_worker_task_count", "The number of tasks run in this worker.",
                                value=tasks)
        yield from per_connector.values()

    def _tasks(self) -> Iterator[Metric]:
        labels = ("connector", "task")
        poll = CounterMetricFamily("kafka_connect_source_task_source_record_poll_total",
                                   "Records produced or polled by the task, before transformations.", labels=labels)
        write = CounterMetricFamily("kafka_connect_source_task_source_record_write_total",
                                    "Records written to the topics by the task, after transformations (filtered "
                                    "records excluded).", labels=labels)
        read = CounterMetricFamily("kafka_connect_sink_task_sink_record_read_total",
                                   "Records read from the topics by the task, before transformations.", labels=labels)
        send = CounterMetricFamily("kafka_connect_sink_task_sink_record_send_total",
                                   "Records output from the transformations and put to the task.", labels=labels)
        batch_max = GaugeMetricFamily("kafka_connect_connector_task_batch_size_max",
                                      "Records in the largest batch the task has processed so far.", labels=labels)
        batch_avg = GaugeMetricFamily("kafka_connect_connector_task_batch_size_avg",
                                      "Average records in the batches the task has processed so far.", labels=labels)
        commit_max = GaugeMetricFamily("kafka_connect_connector_task_offset_commit_max_time_ms",
                                       "Longest offset commit of the task, in milliseconds.", labels=labels)
        commit_avg = GaugeMetricFamily("kafka_connect_connector_task_offset_commit_avg_time_ms",
                                       "Average offset commit time of the task, in milliseconds.", labels=labels)
        commit_ok = GaugeMetricFamily("kafka_connect_connector_task_offset_commit_success_percentage",
                                      "Percentage of the task's offset commit attempts that succeeded.", labels=labels)
        commit_failed = GaugeMetricFamily("kafka_connect_connector_task_offset_commit_failure_percentage",
                                          "Percentage of the task's offset commit attempts that failed.", labels=labels)
        errors = [(field, GaugeMetricFamily(f"kafka_connect_task_error_{name}", help_text, labels=labels))
                  for field, name, help_text in TASK_ERRORS]
        commits = CounterMetricFamily("connect_engine_task_offset_commits_total",
                                      "Offset commit attempts of the task, by outcome (succeeded, failed).",
                                      labels=(*labels, "outcome"))
        commit_seconds = SummaryMetricFamily("connect_engine_task_offset_commit_seconds",
                                             "Offset commit attempts of the task and their total duration.",
                                             labels=labels)
        throttles = CounterMetricFamily("connect_engine_task_throttles",
                                        "Waits the task made for its rate limits (record.rate.limit, "
                                        "bytes.per.second.max).", labels=labels)
        throttled = CounterMetricFamily("connect_engine_task_throttled_seconds",
                                        "Time the task waited for its rate limits, in seconds.", labels=labels)
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
        yield from (poll, write, read, send, batch_max, batch_avg, commit_max, commit_avg, commit_ok, commit_failed)
        yield from (family for _, family in errors)
        yield from (commits, commit_seconds, throttles, throttled)

    def _rebalance(self) -> Iterator[Metric]:
        if self.rebalances is None:
            return
        completed, generation = self.rebalances()
        yield CounterMetricFamily("kafka_connect_worker_rebalance_completed_rebalances_total",
                                  "Rebalances completed by this worker.", value=completed)
        yield GaugeMetricFamily("kafka_connect_worker_rebalance_epoch",
                                "The epoch or generation number of this worker.", value=generation)
