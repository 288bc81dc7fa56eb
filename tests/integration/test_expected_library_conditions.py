"""On a real broker, what a first write to an auto-created topic and a new consumer group make aiokafka
log (the topic not in metadata yet, the group's coordinator not available yet) is not an error or a
warning: the worker's output stays clean while the client retries."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from engine.observability.logs import configure_logging
from tests.integration.brokers import Broker

pytestmark = pytest.mark.integration


@pytest.fixture
def configured() -> Iterator[None]:
    configure_logging("INFO", json=True)
    yield
    for handler in list(logging.getLogger().handlers):
        if type(handler).__name__ == "_ToStructlog":
            logging.getLogger().removeHandler(handler)


@pytest.mark.usefixtures("configured")
async def test_auto_creating_a_topic_and_joining_a_new_group_print_no_library_error(
    kafka: Broker, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    tag = uuid.uuid4().hex[:8]
    topic = f"auto-{tag}"
    with caplog.at_level(logging.DEBUG, logger="aiokafka"):
        producer = AIOKafkaProducer(bootstrap_servers=kafka.bootstrap)
        await producer.start()
        try:
            await producer.send_and_wait(topic, b"first")  # the broker creates the topic on this request
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(
            topic, bootstrap_servers=kafka.bootstrap, group_id=f"group-{tag}", auto_offset_reset="earliest"
        )
        await consumer.start()
        try:
            record = await consumer.getone()
        finally:
            await consumer.stop()
    assert record.value == b"first"
    loud = [(r.name, r.levelname, r.getMessage()) for r in caplog.records if r.levelno >= logging.WARNING]
    assert loud == []
    assert '"component": "aiokafka' not in capsys.readouterr().err
