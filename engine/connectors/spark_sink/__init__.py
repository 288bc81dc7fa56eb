"""A sink writing records as Parquet with Spark, exactly once: manifests, not the consumer group,
say which offsets are in the output (see ``commit_log``)."""

from __future__ import annotations

from engine.connectors.spark_sink.commit_log import read_committed
from engine.connectors.spark_sink.connector import SparkParquetSinkConnector
from engine.connectors.spark_sink.task import SparkParquetSinkTask

__all__ = ["SparkParquetSinkConnector", "SparkParquetSinkTask", "read_committed"]
