"""What the RabbitMQ sink's tests share: the session's broker (``rabbitmq_url()``, guest/guest), existence
checks by passive declare (no management plugin here), messages read back with basic.get, and a
connector whose ``deleted()`` kills its worker half-way (queues deleted, exchange and ledger not)."""

from __future__ import annotations

import os
import uuid
from typing import Any

import aio_pika
import aio_pika.abc
import aio_pika.exceptions

from engine import Engine
from engine.connectors.rabbitmq import RabbitMQSinkConnector, provisioning
from engine.connectors.rabbitmq.config import ledger_name
from tests.session_services import rabbitmq_url

CONNECTOR = "engine.connectors.rabbitmq.RabbitMQSinkConnector"
KILLED_IN_DELETED = "tests.connectors.rabbitmq_support.KilledAfterDeletingTheQueues"
BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"
FAST = {
    "task.shutdown.graceful.timeout.ms": "3000",
    "connector.shutdown.graceful.timeout.ms": "3000",
    "offset.flush.interval.ms": "200",
}


def unique(prefix: str = "rmq") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def sink_config(**extra: str) -> dict[str, str]:
    return {
        "connector.class": CONNECTOR,
        "rabbitmq.url": rabbitmq_url(),
        "key.converter": BYTES,
        "value.converter": BYTES,
        **extra,
    }


async def exists(kind: str, name: str) -> bool:
    connection = await aio_pika.connect(rabbitmq_url())
    try:
        return await provisioning.Provisioner(connection, "unused").exists(kind, name)
    finally:
        await connection.close()


async def resources(
    name: str, topics: list[str], exchange: str | None = None, incarnation: str = "0"
) -> dict[str, bool]:
    """Which of the connector's objects exist: exchange, one queue per topic, the ledger."""
    found = {
        "exchange": await exists("exchange", exchange or f"connect.{name}"),
        "ledger": await exists("queue", ledger_name(name, incarnation)),
    }
    for topic in topics:
        found[topic] = await exists("queue", f"{name}.{topic}")
    return found


async def messages(queue: str) -> list[bytes]:
    """Every message in ``queue``, taken (acknowledged); none while the queue does not exist yet."""
    connection = await aio_pika.connect(rabbitmq_url())
    try:
        channel = await connection.channel()
        try:
            declared = await channel.declare_queue(queue, passive=True)
        except aio_pika.exceptions.ChannelNotFoundEntity:
            return []
        bodies = []
        while (message := await declared.get(no_ack=True, fail=False)) is not None:
            bodies.append(message.body)
        return bodies
    finally:
        await connection.close()


async def produce(engine: Engine, topic: str, values: list[str]) -> None:
    if topic not in await engine.topics.list_topics():
        await engine.topics.create_topic(topic, 1)
    producer = engine.topics.producer()
    for value in values:
        await producer.send(topic, None, value.encode())
    await producer.flush()


async def delete_all(*names: tuple[str, str]) -> None:
    """Test cleanup: delete the given (kind, name) objects if a failed test left them."""
    connection = await aio_pika.connect(rabbitmq_url())
    try:
        channel = await connection.channel()
        for kind, name in names:
            if kind == "queue":
                await channel.queue_delete(name)
            else:
                await channel.exchange_delete(name)
    finally:
        await connection.close()


class KilledAfterDeletingTheQueues(RabbitMQSinkConnector):
    """A real RabbitMQ sink whose worker dies inside ``deleted()`` after deleting its queues, before its
    exchange and ledger (once: ``test.exit.once.file`` disarms it)."""

    async def _cleanup(self, connection: aio_pika.abc.AbstractConnection, ledger: str) -> None:
        once = self.context.configs()["test.exit.once.file"]
        try:
            with open(once, "x", encoding="utf-8"):
                pass
        except FileExistsError:
            await super()._cleanup(connection, ledger)
            return
        entries: list[dict[str, Any]] = await provisioning.recorded(connection, ledger) or []
        channel = await connection.channel()
        for entry in entries:
            if entry["kind"] == "queue":
                await channel.queue_delete(entry["name"])
        os._exit(9)
