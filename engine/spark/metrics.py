"""Counters for supervised Spark jobs, and their Prometheus families.

Job threads update these under the supervisor's lock; readers take a racy but harmless
snapshot (each field is a single int or float).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric, SummaryMetricFamily

Outcome = Literal["succeeded", "failed", "cancelled"]
OUTCOMES: tuple[Outcome, ...] = ("succeeded", "failed", "cancelled")


@dataclass
class Durations:
    """Count and total seconds of finished jobs with one outcome (a Prometheus summary)."""

    count: int = 0
    sum_seconds: float = 0.0


@dataclass
class SparkMetrics:
    jobs_running: int = 0
    jobs_succeeded: int = 0
    jobs_failed: int = 0
    jobs_cancelled: int = 0
    durations: dict[Outcome, Durations] = field(default_factory=lambda: {o: Durations() for o in OUTCOMES})

    def started(self) -> None:
        self.jobs_running += 1

    def finished(self, outcome: Outcome, seconds: float) -> None:
        self.jobs_running -= 1
        if outcome == "succeeded":
            self.jobs_succeeded += 1
        elif outcome == "failed":
            self.jobs_failed += 1
        else:
            self.jobs_cancelled += 1
        d = self.durations[outcome]
        d.count += 1
        d.sum_seconds += seconds

    def total(self, outcome: Outcome) -> int:
        return {
            "succeeded": self.jobs_succeeded,
            "failed": self.jobs_failed,
            "cancelled": self.jobs_cancelled,
        }[outcome]


def prometheus_families(metrics: SparkMetrics) -> list[Metric]:
    """The ``connect_engine_spark_*`` families for ``/metrics``."""
    running = GaugeMetricFamily(
        "connect_engine_spark_jobs_running",
        "Spark jobs currently running under supervision.",
        value=metrics.jobs_running,
    )
    jobs = CounterMetricFamily(
        "connect_engine_spark_jobs_total", "Supervised Spark jobs finished, by outcome.", labels=("outcome",)
    )
    seconds = SummaryMetricFamily(
        "connect_engine_spark_job_seconds",
        "Wall time of supervised Spark jobs, by outcome.",
        labels=("outcome",),
    )
    for o in OUTCOMES:
        jobs.add_metric((o,), metrics.total(o))
        d = metrics.durations[o]
        seconds.add_metric((o,), d.count, d.sum_seconds)
    return [running, jobs, seconds]
