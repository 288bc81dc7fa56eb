"""``engine.testing.kafka`` starts a real Apache Kafka the engine works on: a worker with its config
log on the broker runs a connector over every listener and SASL mechanism, a wrong password is the
broker's refusal, and a node killed with -9 comes back on its data."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from engine import Engine
from engine.errors import EngineError
from engine.testing.kafka import ApacheKafka, apache_kafka
from engine.testing.kafka.node import answers_kafka

pytestmark = pytest.mark.integration

SOURCE = {"connector.class": "engine.testing.RecordingSourceConnector", "tasks.max": "1"}
LOGINS = [
    ("PLAINTEXT", None, "PLAIN"),
    ("SSL", None, "PLAIN"),
    ("SASL_PLAINTEXT", "alice", "PLAIN"),
    ("SASL_PLAINTEXT", "bob", "SCRAM-SHA-256"),
    ("SASL_SSL", "alice", "SCRAM-SHA-512"),
    ("SASL_SSL", "admin", "PLAIN"),
]


@pytest.mark.parametrize(("listener", "user", "mechanism"), LOGINS)
async def test_a_worker_keeps_its_config_log_on_apache_kafka_over_each_listener(
    kafka41: ApacheKafka, tmp_path: Path, listener: str, user: str | None, mechanism: str
) -> None:
    configs = f"configs-{uuid.uuid4().hex[:8]}"
    settings = kafka41.worker_settings(listener, user=user, mechanism=mechanism)
    props = {
        **settings,
        "config.storage.topic": configs,
        "offset.storage.file.filename": str(tmp_path / "offsets"),
    }
    async with Engine(props) as engine:
        await engine.create_connector("orders", SOURCE)
        await engine.wait_for_state("orders", "RUNNING", tasks=1)
        assert configs in await engine.topics.list_topics()
    async with Engine(props) as engine:  # a second worker reads the connector back from the broker
        await engine.wait_for_state("orders", "RUNNING", tasks=1)
        assert (await engine.connector_info("orders"))["config"]["connector.class"] == SOURCE[
            "connector.class"
        ]


async def test_a_wrong_password_is_the_brokers_refusal_naming_the_setting(kafka41: ApacheKafka) -> None:
    props = {
        **kafka41.worker_settings("SASL_SSL", user="alice", mechanism="SCRAM-SHA-256", password="guess"),
        "config.storage.topic": f"c-{uuid.uuid4().hex[:8]}",
    }
    with pytest.raises(EngineError) as caught:
        async with Engine(props):
            pass
    message = str(caught.value)
    assert "SCRAM-SHA-256" in message
    assert "alice" in message
    assert "sasl.jaas.config" in message
    assert "guess" not in message


async def test_a_node_killed_with_minus_9_restarts_on_its_data(tmp_path: Path) -> None:
    with apache_kafka("4.1", directory=tmp_path / "kafka") as kafka:
        bootstrap = kafka.bootstrap_servers()
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
        await producer.start()
        try:
            await producer.send_and_wait("kept", b"before the kill")
        finally:
            await producer.stop()
        node = kafka.nodes[0]
        node.kill()
        assert not node.running
        assert not answers_kafka(node.ports["PLAINTEXT"])
        kafka.start_node(node.node_id)
        kafka.wait_ready()
        consumer = AIOKafkaConsumer("kept", bootstrap_servers=bootstrap, auto_offset_reset="earliest")
        await consumer.start()
        try:
            batch = await consumer.getmany(timeout_ms=20_000)
            assert [r.value for records in batch.values() for r in records] == [b"before the kill"]
        finally:
            await consumer.stop()
