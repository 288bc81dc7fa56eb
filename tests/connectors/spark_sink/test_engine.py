"""The sink in a real engine with in-memory topics: JSON records produced to a topic land in Parquet
once the loop commits, and the consumer's offsets follow the manifests."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from engine import Engine
from engine.connectors.spark_sink import task as task_module
from engine.topics.base import TopicPartition
from engine.topics.memory import MemoryTopics
from tests.spark.jobs import long_job, wait_started

from .support import committed_ids, data_dirs, listed_dirs, manifests

WORKER = {
    "offset.flush.interval.ms": "200",
    "task.shutdown.graceful.timeout.ms": "5000",
    "connector.shutdown.graceful.timeout.ms": "5000",
}


async def test_records_produced_to_a_topic_land_in_parquet_after_a_commit(tmp_path: Path, spark: Any) -> None:
    root = tmp_path / "out"
    async with Engine(WORKER) as engine:
        await engine.topics.create_topic("orders", 2)
        await engine.create_connector(
            "pq",
            {
                "connector.class": "engine.connectors.spark_sink.SparkParquetSinkConnector",
                "topics": "orders",
                "path": str(root),
                "partition.by": "region",
                "tasks.max": "1",
                "key.converter": "org.apache.kafka.connect.storage.StringConverter",
                "value.converter": "org.apache.kafka.connect.json.JsonConverter",
                "value.converter.schemas.enable": "false",
            },
        )
        await engine.wait_for_state("pq", "RUNNING", tasks=1)
        producer = engine.topics.producer()
        for n in range(30):
            value = {"id": f"o{n}", "n": n, "region": ["eu", "us"][n % 2]}
            await producer.send("orders", f"k{n}".encode(), json.dumps(value).encode())

        expected = sorted(f"o{n}" for n in range(30))
        deadline = time.monotonic() + 45
        while (ids := await asyncio.to_thread(committed_ids, root, spark)) != expected:
            assert time.monotonic() < deadline, f"only {len(ids)} rows committed"
            await asyncio.sleep(0.2)
        manifested = {
            p: max((m.next_offset for m in manifests(root, spark, p)), default=None) for p in (0, 1)
        }
        assert sum(o or 0 for o in manifested.values()) == 30
        topics = engine.topics
        assert isinstance(topics, MemoryTopics)
        while (
            group := {p: topics.committed("connect-pq", TopicPartition("orders", p)) for p in (0, 1)}
        ) != manifested:
            assert all((g or 0) <= (manifested[p] or 0) for p, g in group.items()), "commits follow manifests"
            assert time.monotonic() < deadline, f"group offsets {group}, manifests {manifested}"
            await asyncio.sleep(0.1)

        await engine.delete_connector("pq")
    assert data_dirs(root) == listed_dirs(root, spark)  # no batch left unlisted
    assert await asyncio.to_thread(committed_ids, root, spark) == expected  # the data outlives the connector


async def test_a_sink_stopped_mid_write_still_commits_what_it_was_given(
    tmp_path: Path, spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stop cancels the running write (the task's Spark jobs go first), then the stop-time commit writes
    the same records under a job of its own; nothing is logged at error level."""
    started = str(tmp_path / "write-started")
    real_write, writes = task_module._write_batch, []

    def first_write_hangs(
        session: Any, target: str, rows: list[dict[str, Any]], by_partition: bool, partition_by: str | None
    ) -> None:
        writes.append(len(rows))
        if len(writes) == 1:
            long_job(started)(session)  # a Spark action that only cancellation ends
        real_write(session, target, rows, by_partition, partition_by)

    monkeypatch.setattr(task_module, "_write_batch", first_write_hangs)
    root = tmp_path / "out"
    with capture_logs() as logs:
        async with Engine({**WORKER, "offset.flush.interval.ms": "600000"}) as engine:
            await engine.topics.create_topic("orders", 1)
            await engine.create_connector(
                "pq",
                {
                    "connector.class": "engine.connectors.spark_sink.SparkParquetSinkConnector",
                    "topics": "orders",
                    "path": str(root),
                    "flush.records": "5",
                    "tasks.max": "1",
                    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
                    "value.converter.schemas.enable": "false",
                },
            )
            await engine.wait_for_state("pq", "RUNNING", tasks=1)
            producer = engine.topics.producer()
            for n in range(5):
                await producer.send("orders", None, json.dumps({"id": f"o{n}"}).encode())
            await wait_started(started, timeout=60)
            await engine.stop_connector("pq")
            await engine.wait_for_state("pq", "STOPPED", timeout=30)
            topics = engine.topics
            assert isinstance(topics, MemoryTopics)
            assert topics.committed("connect-pq", TopicPartition("orders", 0)) == 5
    assert writes == [5, 5]
    assert [m.next_offset for m in manifests(root, spark, 0)] == [5]
    assert await asyncio.to_thread(committed_ids, root, spark) == [f"o{n}" for n in range(5)]
    assert [e for e in logs if e["log_level"] in ("error", "critical")] == []
    assert any(e["event"] == "task.pre_commit_interrupted" for e in logs)
