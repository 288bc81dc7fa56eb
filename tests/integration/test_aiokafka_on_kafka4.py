"""What docs/operating/apache-kafka.md says aiokafka does against Kafka 4.x (KIP-896 removed old protocol
versions), checked on the session's Kafka 4.1 and 3.9 with the calls the engine makes: admin (topics,
configs, groups, their offsets, DeleteGroups, delete_records), groups, transactions with offsets and a
read_committed reader (a zombie fenced through the engine: test_exactly_once.py)."""

from __future__ import annotations

import uuid

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic, RecordsToDelete
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType
from aiokafka.protocol.admin import DeleteGroupsRequest

from tests.integration.brokers import Broker

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("name", ["kafka", "kafka-3.9"])
async def test_every_call_the_engine_makes_works(name: str, request: pytest.FixtureRequest) -> None:
    broker: Broker = request.getfixturevalue("kafka" if name == "kafka" else "kafka_3_9")
    tag = uuid.uuid4().hex[:8]
    topic, group, tp = f"probe-{tag}", f"probe-group-{tag}", TopicPartition(f"probe-{tag}", 0)
    admin = AIOKafkaAdminClient(bootstrap_servers=broker.bootstrap)
    await admin.start()
    try:
        created = await admin.create_topics([NewTopic(topic, 1, 1, topic_configs={"retention.ms": "600000"})])
        assert created.topic_errors[0][1] == 0
        (configs,) = await admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])
        assert ("retention.ms", "600000") in [(n, v) for n, v, *_ in configs.resources[0][4]]

        producer = AIOKafkaProducer(bootstrap_servers=broker.bootstrap, acks="all", enable_idempotence=True)
        await producer.start()
        for n in range(3):
            await producer.send_and_wait(topic, f"v{n}".encode(), partition=0, headers=[("h", b"x")])
        await producer.stop()

        consumer = AIOKafkaConsumer(topic, bootstrap_servers=broker.bootstrap, group_id=group,
                                    enable_auto_commit=False, auto_offset_reset="earliest")
        await consumer.start()
        try:
            read = await consumer.getmany(timeout_ms=10_000)
            assert [r.value for r in read[tp]] == [b"v0", b"v1", b"v2"]
            await consumer.commit({tp: 2})
            assert await consumer.committed(tp) == 2
            (described,) = await admin.describe_consumer_groups([group])
            assert described.groups[0][2] == "Stable"
        finally:
            await consumer.stop()
        listed = await admin.list_consumer_group_offsets(group)
        assert {t: m.offset for t, m in listed.items()} == {tp: 2}
        response = await admin._send_request(DeleteGroupsRequest([group]), await admin.find_coordinator(group))
        assert [code for _, code in response.results] == [0]
        assert await admin.delete_records({tp: RecordsToDelete(1)}) == {tp: 1}

        transactional = AIOKafkaProducer(bootstrap_servers=broker.bootstrap, transactional_id=f"probe-{tag}")
        await transactional.start()
        async with transactional.transaction():
            await transactional.send(topic, b"committed", partition=0)
            await transactional.send_offsets_to_transaction({tp: 3}, f"probe-tx-{tag}")
        await transactional.begin_transaction()
        await transactional.send(topic, b"aborted", partition=0)
        await transactional.abort_transaction()
        await transactional.stop()  # a fenced zombie: test_exactly_once.py, through the engine

        reader = AIOKafkaConsumer(bootstrap_servers=broker.bootstrap, isolation_level="read_committed",
                                  group_id=None, auto_offset_reset="earliest")
        await reader.start()
        try:
            reader.assign([tp])
            end = (await reader.end_offsets([tp]))[tp]
            values: list[bytes] = []
            while await reader.position(tp) < end:
                values += [r.value for batch in (await reader.getmany(timeout_ms=500)).values() for r in batch]
        finally:
            await reader.stop()
        assert values == [b"v1", b"v2", b"committed"]
    finally:
        await admin.close()
