"""Helpers shared by the Spark sink tests: a task driven directly, records, committed rows, what is on disk."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.api.context import SinkTaskContext
from engine.api.records import SinkRecord, TopicPartition
from engine.connectors.spark_sink import SparkParquetSinkTask, commit_log, read_committed
from engine.connectors.spark_sink.store import store_for


def props(root: Path, **extra: str) -> dict[str, str]:
    return {"name": "pq", "path": str(root), "topics": "orders", **extra}


async def started_task(
    root: Path, spark_runner: Any = None, **extra: str
) -> tuple[SparkParquetSinkTask, SinkTaskContext]:
    """A started task; ``spark_runner`` is its ``context.spark`` (None: the sink's fallback local session)."""
    config = props(root, **extra)
    context = SinkTaskContext(config)
    context.spark = spark_runner
    task = SparkParquetSinkTask()
    task.initialize(context)
    await task.start(config)
    return task, context


async def assign(
    task: SparkParquetSinkTask, context: SinkTaskContext, *tps: TopicPartition
) -> dict[TopicPartition, int]:
    """As the sink loop does: set the assignment, ``open``, then take the rewinds the task asked for."""
    context.assigned = set(tps)
    await task.open(sorted(tps))
    rewinds, context.rewinds = context.rewinds, {}
    return rewinds


def record(topic: str, partition: int, offset: int, value: Any) -> SinkRecord:
    return SinkRecord(topic=topic, kafka_partition=partition, kafka_offset=offset, value=value)


def orders(tp: TopicPartition, start: int, stop: int) -> list[SinkRecord]:
    """Records whose ``id`` says where they came from, so duplicates and gaps are visible."""
    return [
        record(tp.topic, tp.partition, o, {"id": f"{tp.partition}-{o}", "n": o, "region": f"r{o % 3}"})
        for o in range(start, stop)
    ]


def committed_rows(root: Path, spark: Any) -> list[dict[str, Any]]:
    return [row.asDict() for row in read_committed(str(root), spark).collect()]


def committed_ids(root: Path, spark: Any) -> list[str]:
    return sorted(row["id"] for row in committed_rows(root, spark))


def manifests(root: Path, spark: Any, partition: int, topic: str = "orders") -> list[commit_log.Manifest]:
    return commit_log.read_manifests(store_for(spark, str(root)), topic, partition)


def listed_dirs(root: Path, spark: Any) -> set[Path]:
    """The batch directories the manifests name, as local paths."""
    return {root / path for m in commit_log.all_manifests(store_for(spark, str(root))) for path in m.paths}


def data_dirs(root: Path) -> set[Path]:
    """Batch directories on the local disk holding Parquet data (an orphan removed over Connect holds none)."""
    return {
        folder
        for folder in (root / commit_log.BATCHES).glob(f"*/{commit_log.TP_COLUMN}=*")
        if any(folder.rglob("*.parquet"))
    }
