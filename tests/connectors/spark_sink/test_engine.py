"""The sink in a real engine with in-memory topics: JSON records produced to a topic land in Parquet
once the loop commits, and the consumer's offsets follow the manifests."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from engine import Engine
from engine.connectors.spark_sink import commit_log
from engine.topics.base import TopicPartition
from engine.topics.memory import MemoryTopics

from .support import committed_ids

WORKER = {"offset.flush.interval.ms": "200", "task.shutdown.graceful.timeout.ms": "5000",
          "connector.shutdown.graceful.timeout.ms": "5000"}


async def test_records_produced_to_a_topic_land_in_parquet_after_a_commit(tmp_path: Path, spark: Any) -> None:
    root = tmp_path / "out"
    async with Engine(WORKER) as engine:
        await engine.topics.create_topic("orders", 2)
        await engine.create_connector("pq", {
            "connector.class": "engine.connectors.spark_sink.SparkParquetSinkConnector", "topics": "orders",
            "path": str(root), "partition.by": "region", "tasks.max": "1",
            "key.converter": "org.apache.kafka.connect.storage.StringConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter.schemas.enable": "false"})
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
        manifested = {p: commit_log.next_offset(root, "orders", p) for p in (0, 1)}
        assert sum(o or 0 for o in manifested.values()) == 30
        topics = engine.topics
        assert isinstance(topics, MemoryTopics)
        while (group := {p: topics.committed("connect-pq", TopicPartition("orders", p)) for p in (0, 1)}) != manifested:
            assert all((g or 0) <= (manifested[p] or 0) for p, g in group.items()), "commits follow manifests"
            assert time.monotonic() < deadline, f"group offsets {group}, manifests {manifested}"
            await asyncio.sleep(0.1)

        await engine.delete_connector("pq")
    assert not (root / "_staging").exists()
    assert await asyncio.to_thread(committed_ids, root, spark) == expected  # the data outlives the connector
