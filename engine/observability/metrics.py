"""Per-engine metrics, exposed at ``GET /metrics`` through ``prometheus_client``.

One ``EngineMetrics`` per ``Engine`` (``Engine.metrics``) with its own ``CollectorRegistry``, never
process-global, so several engines in one process (tests, embedders) count independently. The
engine's own families (``connect_engine_*``) are here; Kafka Connect's (``kafka_connect_*``, as
Strimzi's JMX-exporter rules name them) are in ``connect_metrics``. The library writes the text
format or OpenMetrics, as the scraper's ``Accept`` asks (``exposition``), and does the escaping. The hot paths only increment
plain dicts: the herder counts transitions, ``invoke`` times callbacks through ``CALLBACK_TIMER``
(a context variable the engine sets for its own tasks), the REST middleware times requests.
Gauges of states are computed from the status store at scrape time, so they cannot drift.
"""

from __future__ import annotations

import math
import threading
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.exposition import choose_encoder, generate_latest
from prometheus_client.gc_collector import GCCollector
from prometheus_client.platform_collector import PlatformCollector
from prometheus_client.process_collector import ProcessCollector
from prometheus_client.registry import CollectorRegistry

from engine.observability.connect_metrics import ConnectMetrics
from engine.storage.base import StatusStore
from states import ConnectorState, TaskState

PREFIX = "connect_engine_"
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
OPENMETRICS = "application/openmetrics-text"

# Callbacks run from microseconds (no-op async) to the callback timeout (30 s by default).
CALLBACK_BUCKETS = (0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0, 30.0)
REST_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 90.0)

Labels = tuple[str, ...]


class Counter:
    """A monotonically increasing value per label tuple; ``values`` is the hot path's dict."""

    def __init__(self, name: str, help_text: str, labels: Labels) -> None:
        self.name, self.help, self.labels = PREFIX + name, help_text, labels
        self.values: dict[Labels, float] = {} if labels else {(): 0.0}  # unlabelled: 0 until counted

    def inc(self, key: Labels, amount: float = 1.0) -> None:
        self.values[key] = self.values.get(key, 0.0) + amount

    def collect(self) -> Metric:
        family = CounterMetricFamily(self.name, self.help, labels=self.labels)
        for key, value in sorted(self.values.items()):
            family.add_metric(key, value)
        return family


class Histogram:
    """Bucketed observations per label tuple; buckets are stored per bucket and summed when rendered."""

    def __init__(self, name: str, help_text: str, labels: Labels, buckets: tuple[float, ...]) -> None:
        self.name, self.help, self.labels, self.buckets = PREFIX + name, help_text, labels, buckets
        # per series: one count per bucket, then +Inf, then the sum
        self.series: dict[Labels, list[float]] = {}

    def observe(self, key: Labels, value: float) -> None:
        series = self.series.get(key)
        if series is None:
            series = self.new_series(key)
        series[bisect_left(self.buckets, value)] += 1
        series[-1] += value

    def new_series(self, key: Labels) -> list[float]:
        series = self.series[key] = [0.0] * (len(self.buckets) + 2)
        return series

    def count(self, key: Labels) -> int:
        series = self.series.get(key)
        return 0 if series is None else int(sum(series[:-1]))

    def collect(self) -> Metric:
        family = HistogramMetricFamily(self.name, self.help, labels=self.labels)
        for key, series in sorted(self.series.items()):
            total, buckets = 0.0, []
            for bound, hits in zip((*self.buckets, math.inf), series[:-1], strict=True):
                total += hits
                buckets.append(("+Inf" if bound == math.inf else repr(bound), total))
            family.add_metric(key, buckets, series[-1])
        return family


class EngineMetrics:
    """Everything one engine exposes at ``GET /metrics``."""

    def __init__(self, status: StatusStore, *, worker_id: str | None = None) -> None:
        """``worker_id``: a cluster member's, so the Connect families report only the work it runs."""
        self._status = status
        self.transitions = Counter(
            "transitions_total",
            "Lifecycle transitions the herder published.",
            ("kind", "trigger", "from_state", "to_state"),
        )
        self.deletions_run = Counter(
            "deletion_callbacks_run_total", "Connector.deleted() runs, fresh instances included.", ()
        )
        self.deletions_failed = Counter(
            "deletion_callbacks_failed_total",
            "Connector.deleted() runs that raised, timed out or could not load.",
            (),
        )
        self.cleanup_attempts = Counter(
            "connector_cleanup_attempts_total",
            "Attempts at a deleted connector's cleanup, by outcome "
            "(succeeded, failed, timed_out, succeeded_late).",
            ("outcome",),
        )
        self.cleanups_given_up = Counter(
            "connector_cleanups_given_up_total", "Cleanups abandoned after connector.deleted.max.retries.", ()
        )
        self.pending_cleanups: Callable[[], int] = lambda: 0  # set by the herder: read at scrape time
        self.auto_restarts = Counter(
            "auto_restarts_total",
            "Automatic restarts of FAILED work (restart.policy=on-failure), by kind (connector, task).",
            ("kind",),
        )
        self.scheduled_restarts: Callable[[], int] = lambda: 0  # set by the herder: read at scrape time
        self.callbacks = Histogram(
            "callback_duration_seconds",
            "Duration of user callbacks, by method name.",
            ("callback",),
            CALLBACK_BUCKETS,
        )
        self._callback_series: dict[str, list[float]] = {}
        self.extra: list[Callable[[], Iterable[Metric]]] = []  # more families, e.g. Spark's
        self.requests = Counter(
            "rest_requests_total", "REST requests answered.", ("method", "route", "status")
        )
        self.request_seconds = Histogram(
            "rest_request_duration_seconds", "REST request latency.", ("method", "route"), REST_BUCKETS
        )
        self.connect = ConnectMetrics(
            status, worker_id
        )  # Kafka Connect's families: counters the task loops update
        self.registry = CollectorRegistry(auto_describe=False)  # this engine's alone
        self.registry.register(self)
        # the process's own (the stand-ins for the JVM row of Connect dashboards): process_* (CPU
        # seconds, resident memory, open fds, start time), python_gc_*, python_info
        for collector in (ProcessCollector, PlatformCollector, GCCollector):
            collector(registry=self.registry)

    # ---- hooks (hot paths: a dict update each; the herder updates ``transitions.values`` itself) --

    def deletion(self, succeeded: bool) -> None:
        self.deletions_run.inc(())
        if not succeeded:
            self.deletions_failed.inc(())

    def cleanup_attempt(self, outcome: str) -> None:
        self.cleanup_attempts.inc((outcome,))

    def callback(self, name: str, seconds: float) -> None:
        """``Histogram.observe`` inlined, by name: ``invoke`` calls this for every user callback."""
        series = self._callback_series.get(name)
        if series is None:
            series = self._callback_series[name] = self.callbacks.new_series((name,))
        series[bisect_left(CALLBACK_BUCKETS, seconds)] += 1
        series[-1] += seconds

    def request(self, method: str, route: str, status: int, seconds: float) -> None:
        self.requests.inc((method, route, str(status)))
        self.request_seconds.observe((method, route), seconds)

    # ---- scraping --------------------------------------------------------------------------

    def state_counts(self) -> tuple[dict[str, int], dict[str, int]]:
        """Connectors and tasks per state right now, every live state present (zeros included)."""
        connectors = {s.value: 0 for s in ConnectorState if s is not ConnectorState.DESTROYED}
        tasks = {s.value: 0 for s in TaskState if s is not TaskState.DESTROYED}
        for status in self._status.connector_statuses():
            connectors[status.state] = connectors.get(status.state, 0) + 1
        for status in self._status.task_statuses():
            tasks[status.state] = tasks.get(status.state, 0) + 1
        return connectors, tasks

    def collect(self) -> Iterator[Metric]:
        """Every family, read now (the registry's ``Collector``)."""
        connectors, tasks = self.state_counts()
        yield _gauge("connectors", "Connectors by observed state.", connectors)
        yield _gauge("tasks", "Tasks by observed state.", tasks)
        yield GaugeMetricFamily(
            PREFIX + "connector_cleanups_pending",
            "Deleted connectors whose cleanup has not succeeded yet (GET /connector-cleanups).",
            value=self.pending_cleanups(),
        )
        yield GaugeMetricFamily(
            PREFIX + "auto_restarts_scheduled",
            "FAILED connectors and tasks waiting for their restart backoff.",
            value=self.scheduled_restarts(),
        )
        for metric in (
            self.transitions,
            self.deletions_run,
            self.deletions_failed,
            self.cleanup_attempts,
            self.cleanups_given_up,
            self.auto_restarts,
            self.callbacks,
            self.requests,
            self.request_seconds,
        ):
            yield metric.collect()
        yield GaugeMetricFamily(
            PREFIX + "threads",
            "Threads alive in this process (the JVM's jvm_threads_current "
            "stand-in): the event loop's, callbacks' executors, Spark's.",
            value=threading.active_count(),
        )
        for extra in self.extra:
            yield from extra()
        yield from self.connect.collect()

    def exposition(self, accept: str | None = None) -> tuple[bytes, str]:
        """The body and its content type: OpenMetrics when ``accept`` asks for it, else the text format 0.0.4."""
        encode, content_type = choose_encoder(accept or "")
        return encode(self.registry), content_type

    def render(self) -> str:
        """The text format (0.0.4)."""
        return generate_latest(self.registry).decode()


def _gauge(name: str, help_text: str, by_state: dict[str, int]) -> Metric:
    family = GaugeMetricFamily(PREFIX + name, help_text, labels=("state",))
    for state, count in sorted(by_state.items()):
        family.add_metric((state,), count)
    return family
