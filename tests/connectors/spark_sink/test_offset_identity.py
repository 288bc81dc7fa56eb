"""The sink's manifests name the log their offsets count in (cluster id, topic id): output written
from another cluster's topic of the same name (the demo moved from its in-process topics to a broker,
or a data directory started afresh) is never taken as the position of the topic read now."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from structlog.testing import capture_logs

from engine import Engine
from engine.topics.memory import MemoryTopics

from .support import committed_ids

WORKER = {"offset.flush.interval.ms": "200", "task.shutdown.graceful.timeout.ms": "5000"}


def _config(root: Path, **extra: str) -> dict[str, str]:
    return {
        "connector.class": "engine.connectors.spark_sink.SparkParquetSinkConnector",
        "topics": "orders",
        "path": str(root),
        "tasks.max": "1",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "false",
        **extra,
    }


async def _fill(engine: Engine, prefix: str, count: int) -> None:
    await engine.topics.create_topic("orders")
    producer = engine.topics.producer()
    for n in range(count):
        await producer.send("orders", None, json.dumps({"id": f"{prefix}{n}"}).encode())
    await producer.flush()


async def _wait_for_ids(root: Path, spark: Any, expected: list[str], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while (ids := await asyncio.to_thread(committed_ids, root, spark)) != expected:
        assert time.monotonic() < deadline, f"committed {ids}, expected {expected}"
        await asyncio.sleep(0.2)


async def _first_cluster(root: Path, spark: Any) -> str:
    """Five records of one in-process cluster's ``orders`` committed to Parquet; that cluster's id."""
    topics = MemoryTopics()
    async with Engine(WORKER, topics=topics) as engine:
        await _fill(engine, "a", 5)
        await engine.create_connector("pq", _config(root))
        await _wait_for_ids(root, spark, [f"a{n}" for n in range(5)])
    return topics.cluster_id


async def test_output_from_another_clusters_topic_is_no_position(tmp_path: Path, spark: Any) -> None:
    """Before, the second cluster's first five records were skipped (the manifests said 5)."""
    root = tmp_path / "out"
    first = await _first_cluster(root, spark)
    topics = MemoryTopics()
    with capture_logs() as logged:
        async with Engine(WORKER, topics=topics) as engine:
            await _fill(engine, "b", 8)
            await engine.create_connector("pq", _config(root))
            await _wait_for_ids(
                root, spark, sorted([f"a{n}" for n in range(5)] + [f"b{n}" for n in range(8)])
            )
    warnings = [e for e in logged if e["event"] == "task.offsets_identity_mismatch"]
    assert len(warnings) == 1
    warning = warnings[0]
    assert warning["log_level"] == "warning"
    assert (warning["connector"], warning["partition"], warning["offset"]) == ("pq", "orders-0", 5)
    assert (warning["stored_cluster_id"], warning["cluster_id"]) == (first, topics.cluster_id)
    assert warning["stored_topic_id"] != warning["topic_id"]
    assert warning["action"] == "reset to earliest"


async def test_fail_leaves_the_output_alone_and_says_why(tmp_path: Path, spark: Any) -> None:
    """``offsets.identity.mismatch=fail``: the task fails naming both clusters; nothing is written."""
    root = tmp_path / "out"
    first = await _first_cluster(root, spark)
    topics = MemoryTopics()
    async with Engine(WORKER, topics=topics) as engine:
        await _fill(engine, "b", 8)
        await engine.create_connector("pq", _config(root, **{"offsets.identity.mismatch": "fail"}))
        await engine.wait_for_state("pq", "RUNNING", tasks=["FAILED"], timeout=60)
        trace = (await engine.connector_status("pq"))["tasks"][0]["trace"]
        assert f"cluster {first}" in trace and f"cluster {topics.cluster_id}" in trace
        assert "offsets.identity.mismatch=fail" in trace
    assert await asyncio.to_thread(committed_ids, root, spark) == [f"a{n}" for n in range(5)]
