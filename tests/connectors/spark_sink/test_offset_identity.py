"""The sink's manifests name the log their offsets count in (cluster id, topic id): output written
from another cluster's topic of the same name (the demo moved from its in-process topics to a broker,
or a data directory started afresh) is never taken as the position of the topic read now."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from structlog.testing import capture_logs

from engine import Engine
from engine.topics.memory import MemoryTopics
from tests.integration.brokers import Broker

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


async def _fill(
    engine: Engine, prefix: str, count: int, topic: str = "orders", *, create: bool = True
) -> None:
    if create:
        await engine.topics.create_topic(topic)
    producer = engine.topics.producer()
    for n in range(count):
        await producer.send(topic, None, json.dumps({"id": f"{prefix}{n}"}).encode())
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
        assert f"cluster {first}" in trace
        assert f"cluster {topics.cluster_id}" in trace
        assert "offsets.identity.mismatch=fail" in trace
    assert await asyncio.to_thread(committed_ids, root, spark) == [f"a{n}" for n in range(5)]


@pytest.mark.integration
@pytest.mark.timeout(300)
async def test_a_spark_sink_reads_a_re_created_topic_from_its_start(
    tmp_path: Path, request: pytest.FixtureRequest, spark: Any
) -> None:
    """The topic under a running Spark sink deleted and created again with more records than the sink
    had committed: before, its manifests' offset (5) was applied to the new topic and its first five
    records never reached Parquet."""
    kafka: Broker = request.getfixturevalue("kafka")
    topic, name = f"orders-{uuid.uuid4().hex[:8]}", f"pq-{uuid.uuid4().hex[:6]}"
    root = tmp_path / "out"

    async def ids_are(expected: list[str]) -> None:
        deadline = time.monotonic() + 90
        while (ids := await asyncio.to_thread(committed_ids, root, spark)) != expected:
            assert time.monotonic() < deadline, f"committed {ids}"
            await asyncio.sleep(0.3)

    admin = AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap)
    await admin.start()
    try:
        async with Engine(
            {**WORKER, "bootstrap.servers": kafka.bootstrap, "config.storage.topic": f"configs-{name}"}
        ) as engine:
            await _fill(engine, "a", 5, topic)
            await engine.create_connector(
                name,
                {
                    "connector.class": "engine.connectors.spark_sink.SparkParquetSinkConnector",
                    "topics": topic,
                    "path": str(root),
                    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
                    "value.converter.schemas.enable": "false",
                },
            )
            await ids_are([f"a{n}" for n in range(5)])
            with capture_logs() as logged:
                await admin.delete_topics([topic])
                for _ in range(100):
                    if topic not in await admin.list_topics():
                        break
                    await asyncio.sleep(0.1)
                await admin.create_topics([NewTopic(topic, 1, 1)])
                await _fill(engine, "b", 8, topic, create=False)
                await ids_are(sorted([f"a{n}" for n in range(5)] + [f"b{n}" for n in range(8)]))
            warnings = [e for e in logged if e["event"] == "task.offsets_identity_mismatch"]
            assert warnings, "the old topic's manifests reported"
            assert warnings[0]["stored_topic_id"] != warnings[0]["topic_id"]
            assert warnings[0]["stored_cluster_id"] == warnings[0]["cluster_id"]
    finally:
        await admin.close()
