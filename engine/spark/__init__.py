"""Spark session and job supervisor: Spark work as supervised jobs owned by tasks.

Importing this package does not import pyspark; the session is built on first use.
"""

from engine.spark.metrics import Durations, SparkMetrics, prometheus_families
from engine.spark.probe import SparkUnreachable
from engine.spark.settings import SparkSettings
from engine.spark.supervisor import JobOwner, SparkJobCancelled, SparkJobFailed, SparkSupervisor
from engine.spark.task_spark import TaskSpark

__all__ = [
    "Durations",
    "JobOwner",
    "SparkJobCancelled",
    "SparkJobFailed",
    "SparkMetrics",
    "SparkSettings",
    "SparkSupervisor",
    "SparkUnreachable",
    "TaskSpark",
    "prometheus_families",
]
