"""Kafka-backed status and offset stores against both brokers: shared between instances (workers),
tombstones, putSafe, reopen, a refused non-compacted topic, malformed records skipped."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
from aiokafka import AIOKafkaProducer

from engine.errors import ConfigError
from engine.storage.factory import open_offset_store, open_status_store
from engine.storage.kafka_offsets import KafkaOffsetStore
from engine.storage.kafka_status import KafkaStatusStore
from engine.storage.status import MemoryStatusStore, Status, TopicStatus
from tests.integration.brokers import Broker
from tests.integration.test_kafka_config_log import create_topic, describe

pytestmark = pytest.mark.integration


@pytest.fixture
async def two_status_stores(
    broker: Broker, topic: str
) -> AsyncIterator[tuple[KafkaStatusStore, KafkaStatusStore]]:
    first, second = KafkaStatusStore(broker.bootstrap, topic), KafkaStatusStore(broker.bootstrap, topic)
    await first.open()
    await second.open()
    try:
        yield first, second
    finally:
        await first.close()
        await second.close()


async def test_statuses_written_by_one_worker_are_read_by_another(
    broker: Broker, topic: str, two_status_stores: tuple[KafkaStatusStore, KafkaStatusStore]
) -> None:
    first, second = two_status_stores
    first.put_connector("c", Status("RUNNING", "w1:8083", 3))
    first.put_task("c", 0, Status("FAILED", "w1:8083", 3, "trace"))
    first.put_topic(TopicStatus("orders", "c", 0, 1234))
    await first.flush()
    await second.log.read_to_end()
    assert second.connector("c") == Status("RUNNING", "w1:8083", 3)
    assert second.tasks("c") == {0: Status("FAILED", "w1:8083", 3, "trace")}
    assert second.topics("c") == ["orders"]
    partitions, policy = await describe(broker, topic)
    assert (partitions, policy) == (5, "compact")


async def test_a_connector_tombstone_removes_its_tasks_everywhere(
    two_status_stores: tuple[KafkaStatusStore, KafkaStatusStore],
) -> None:
    first, second = two_status_stores
    first.put_connector("gone", Status("RUNNING", "w1", 1))
    second.put_task("gone", 1, Status("RUNNING", "w2", 1))  # a task on another worker
    await first.flush()
    await second.flush()
    await first.log.read_to_end()
    first.remove_connector("gone")
    await first.flush()
    await second.log.read_to_end()
    assert second.connector("gone") is None
    assert second.tasks("gone") == {}


async def test_a_late_write_of_ones_own_never_overwrites_a_newer_value(
    two_status_stores: tuple[KafkaStatusStore, KafkaStatusStore],
) -> None:
    first, second = two_status_stores
    for state in ("RUNNING", "PAUSED", "RUNNING", "UNASSIGNED"):
        first.put_connector("flappy", Status(state, "w1", 1))
        assert first.connector("flappy") == Status(state, "w1", 1)  # at once, before any read-back
    await first.flush()
    await first.log.read_to_end()
    await second.log.read_to_end()
    assert first.connector("flappy") == second.connector("flappy") == Status("UNASSIGNED", "w1", 1)


def test_put_safe_leaves_a_newer_owners_status_alone() -> None:
    store = MemoryStatusStore()
    store.put_task("c", 0, Status("RUNNING", "new-owner", 5))
    assert not store.put_task_safe("c", 0, Status("UNASSIGNED", "old-owner", 4))
    assert store.tasks("c")[0].worker_id == "new-owner"
    assert store.put_task_safe("c", 0, Status("UNASSIGNED", "old-owner", 5))  # same generation: written
    assert store.put_connector_safe("c", Status("RUNNING", "w", 0))  # nothing there yet
    assert store.put_connector_safe("c", Status("UNASSIGNED", "w", 0))  # same worker


async def test_offsets_are_shared_and_survive_a_reopen(broker: Broker, topic: str) -> None:
    first = KafkaOffsetStore(broker.bootstrap, topic, partitions=3)
    await first.open()
    first.write("src", [({"file": "a"}, {"position": 7}), ({"file": "b"}, {"position": 1})])
    first.write("src", [({"file": "b"}, None)])  # reset one partition
    await first.close()
    again = KafkaOffsetStore(broker.bootstrap, topic, partitions=3)
    await again.open()
    try:
        assert again.get("src", {"file": "a"}) == {"position": 7}
        assert again.partitions("src") == [{"file": "a"}]
    finally:
        await again.close()


async def test_a_non_compacted_status_topic_is_refused(broker: Broker, topic: str) -> None:
    assert await create_topic(broker, topic, 5, **{"cleanup.policy": "delete"}) is None
    store = KafkaStatusStore(broker.bootstrap, topic)
    with pytest.raises(
        ConfigError,
        match=r"'status.storage.topic' property is required to have "
        r"'cleanup.policy=compact'.*'cleanup.policy=delete'",
    ):
        await store.open()
    await store.close()


async def test_malformed_records_are_skipped_not_raised(broker: Broker, topic: str) -> None:
    store = KafkaStatusStore(broker.bootstrap, topic)
    await store.open()
    try:
        producer = AIOKafkaProducer(bootstrap_servers=broker.bootstrap, enable_idempotence=False)
        await producer.start()
        await producer.send_and_wait(topic, b"not json", key=b"status-connector-bad")
        await producer.send_and_wait(
            topic, json.dumps({"state": "RUNNING", "worker_id": "w"}).encode(), key=b"status-connector-good"
        )
        await producer.stop()
        await store.log.read_to_end()
        assert store.log.skipped == 1
        assert store.connector("bad") is None
        assert store.connector("good") == Status("RUNNING", "w", 0)
    finally:
        await store.close()


def test_stores_follow_the_worker_properties() -> None:
    kafka = {"bootstrap.servers": "127.0.0.1:1", "group.id": "g"}
    assert type(open_status_store(kafka, client_id="t")).__name__ == "KafkaStatusStore"
    assert type(open_offset_store(kafka, client_id="t")).__name__ == "KafkaOffsetStore"
    standalone = {"bootstrap.servers": "127.0.0.1:1"}
    assert type(open_status_store(standalone, client_id="t")) is MemoryStatusStore
    with pytest.raises(ConfigError, match=r"status\.storage\.partitions"):
        open_status_store({**kafka, "status.storage.partitions": "zero"}, client_id="t")
