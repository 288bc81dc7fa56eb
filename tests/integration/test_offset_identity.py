"""On Apache Kafka: a sink's committed offsets carry the cluster id and the topic id (KIP-516) in their
commit metadata, and a position stored for another log is never applied silently."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
import structlog
from aiokafka import AIOKafkaConsumer
from aiokafka import TopicPartition as KafkaTopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.structs import OffsetAndMetadata

from engine import Engine
from engine.api import TopicIdentity
from engine.testing import eventually
from engine.topics.commit_metadata import decode
from tests.integration.brokers import Broker

pytestmark = pytest.mark.integration


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def _engine(broker: Broker) -> Engine:
    return Engine(
        {
            "bootstrap.servers": broker.bootstrap,
            "offset.flush.interval.ms": "100",
            "config.storage.topic": f"configs-{uuid.uuid4().hex[:8]}",
        }
    )


def _file_sink(out: Path, topic: str, **extra: str) -> dict[str, str]:
    return {
        "connector.class": "FileStreamSink",
        "file": str(out),
        "topics": topic,
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        **extra,
    }


async def _produce(engine: Engine, topic: str, values: list[str]) -> None:
    producer = engine.topics.producer()
    for value in values:
        await producer.send(topic, None, value.encode())
    await producer.flush()


async def _committed(bootstrap: str, group: str) -> dict[Any, OffsetAndMetadata]:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        return dict(await admin.list_consumer_group_offsets(group))
    finally:
        await admin.close()


@pytest.mark.parametrize("policy", ["reset", "fail"])
async def test_offsets_moved_to_another_cluster_are_not_applied(
    tmp_path: Path, kafka: Broker, kafka_3_9: Broker, policy: str
) -> None:
    """A group's offsets copied, metadata and all, from one cluster to another (as a migration tool
    would): before, the sink on the second cluster skipped the first five records of its topic."""
    topic, name = f"lines-{uuid.uuid4().hex[:8]}", f"sink-{uuid.uuid4().hex[:6]}"
    group = f"connect-{name}"
    first_out, second_out = tmp_path / "first.txt", tmp_path / "second.txt"
    async with _engine(kafka) as engine:
        await engine.topics.create_topic(topic)
        await _produce(engine, topic, [f"a{n}" for n in range(5)])
        await engine.create_connector(name, _file_sink(first_out, topic))
        await eventually(lambda: len(lines(first_out)) == 5, timeout=30, message="five delivered")
        await engine.stop_connector(name)
        await engine.wait_for_state(name, "STOPPED")
    stored = await _committed(kafka.bootstrap, group)
    meta = stored[KafkaTopicPartition(topic, 0)]
    first_identity = decode(meta.metadata).identity
    assert meta.offset == 5
    assert first_identity is not None  # the commit names its log

    async with _engine(kafka_3_9) as engine:
        await engine.topics.create_topic(topic)
        await _produce(engine, topic, [f"b{n}" for n in range(8)])
        mover = AIOKafkaConsumer(
            bootstrap_servers=kafka_3_9.bootstrap, group_id=group, enable_auto_commit=False
        )
        await mover.start()
        try:  # what a tool that copies offsets between clusters does, metadata included
            mover.assign([KafkaTopicPartition(topic, 0)])
            await mover.commit({KafkaTopicPartition(topic, 0): (meta.offset, meta.metadata)})
        finally:
            await mover.stop()
        with structlog.testing.capture_logs() as logged:
            await engine.create_connector(
                name, _file_sink(second_out, topic, **{"offsets.identity.mismatch": policy})
            )
            if policy == "reset":
                await eventually(
                    lambda: len(lines(second_out)) == 8, timeout=30, message="all eight of the new cluster"
                )
            else:
                await engine.wait_for_state(name, "RUNNING", tasks=["FAILED"], timeout=30)
        warnings = [e for e in logged if e["event"] == "task.offsets_identity_mismatch"]
        assert len(warnings) == 1, logged
        warning = warnings[0]
        assert warning["log_level"] == "warning"
        assert (warning["connector"], warning["partition"], warning["offset"]) == (name, f"{topic}-0", 5)
        assert TopicIdentity(warning["stored_cluster_id"], warning["stored_topic_id"]) == first_identity
        assert warning["cluster_id"] != first_identity.cluster_id
        if policy == "reset":
            assert lines(second_out) == [f"b{n}" for n in range(8)]
            await engine.stop_connector(name)
            await engine.wait_for_state(name, "STOPPED")
            now = (await _committed(kafka_3_9.bootstrap, group))[KafkaTopicPartition(topic, 0)]
            assert now.offset == 8
            assert decode(now.metadata).identity == (warning["cluster_id"], warning["topic_id"])
        else:
            trace = (await engine.connector_status(name))["tasks"][0]["trace"]
            assert f"cluster {first_identity.cluster_id}" in trace
            assert "offsets.identity.mismatch=fail" in trace
            assert not lines(second_out)
            await engine.delete_connector(name)
            left = (await _committed(kafka_3_9.bootstrap, group))[KafkaTopicPartition(topic, 0)]
            assert (left.offset, left.metadata) == (5, meta.metadata)  # the stored position untouched
