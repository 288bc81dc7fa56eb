"""Publishes each record to the exchange (routing key: its topic) with publisher confirms.

``put`` hands messages to the broker without waiting; ``pre_commit`` waits (bounded by
``rabbitmq.confirm.timeout.ms``) for the confirms of what was put and returns, per partition,
only the offset up to which every message was confirmed. A kill -9 loses nothing: what was not
confirmed was not committed, and is consumed again. A message the broker returns (no queue bound,
mandatory) or refuses fails the task at the next ``put``, with its offset never committed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import deque
from collections.abc import Collection, Mapping
from typing import Any

import aio_pika
import aio_pika.abc
import structlog

from engine.api import ConnectException, SinkRecord, SinkTask, TopicPartition
from engine.connectors.rabbitmq import provisioning
from engine.connectors.rabbitmq.config import CONNECT_TIMEOUT_S, RabbitConfig, ledger_name

log = structlog.get_logger(component="rabbitmq")

_Sent = deque[tuple[int, "asyncio.Future[Any]"]]


def body_of(value: Any) -> bytes:
    """bytes as they are, text as UTF-8, anything else (what a converter made of JSON) as JSON."""
    if value is None:
        return b""
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode()
    return json.dumps(value, default=str).encode()


class RabbitMQSinkTask(SinkTask):
    async def start(self, props: dict[str, str]) -> None:
        self._config = config = RabbitConfig.parse(props)
        self._connection: aio_pika.abc.AbstractConnection | None = await aio_pika.connect(
            config.url, timeout=CONNECT_TIMEOUT_S
        )
        # on_return_raises: a message no queue took (mandatory) fails its publish instead of counting as confirmed
        self._channel = await self._connection.channel(publisher_confirms=True, on_return_raises=True)
        self._exchange = await self._channel.get_exchange(config.exchange, ensure=False)
        ledger = props.get("rabbitmq.ledger") or ledger_name(config.name, None)
        self._provisioner = provisioning.Provisioner(self._connection, ledger)
        self._ensured: set[str] = set()
        self._sent: dict[TopicPartition, _Sent] = {}
        self._confirmed: dict[TopicPartition, int] = {}
        self._in_flight = 0
        self._failure: BaseException | None = None

    async def open(self, partitions: Collection[TopicPartition]) -> None:
        for topic in sorted({tp.topic for tp in partitions}):
            await self._ensure(topic)

    async def _ensure(self, topic: str) -> None:
        if topic not in self._ensured:
            await self._provisioner.ensure_queue(self._config.queue(topic), self._config.exchange, topic)
            self._ensured.add(topic)

    async def put(self, records: Collection[SinkRecord]) -> None:
        if self._failure is not None:
            raise ConnectException("A message was not accepted by RabbitMQ") from self._failure
        for record in records:
            await self._ensure(record.topic)
            headers: dict[str, Any] = {
                "connect.topic": record.topic,
                "connect.partition": record.kafka_partition,
                "connect.offset": record.kafka_offset,
            }
            if isinstance(record.key, str | bytes | int):
                headers["connect.key"] = record.key
            message = aio_pika.Message(
                body_of(record.value),
                headers=headers,
                timestamp=None,
                delivery_mode=aio_pika.DeliveryMode.PERSISTENT,
            )
            sent = asyncio.ensure_future(
                self._exchange.publish(message, routing_key=record.topic, mandatory=True)
            )
            tp = TopicPartition(record.topic, record.kafka_partition or 0)
            self._sent.setdefault(tp, deque()).append((record.kafka_offset + 1, sent))
            self._in_flight += 1
            if self._in_flight >= self._config.max_in_flight:
                await self._settle(wait_s=None, oldest=self._config.max_in_flight // 2)  # keep the pipe full

    async def _settle(self, wait_s: float | None, oldest: int | None = None) -> None:
        """Wait for the confirms outstanding (all, the ``oldest`` n of each partition, or until ``wait_s``), then
        move each partition's confirmed offset past the unbroken run of confirmed messages at its head."""
        pending = [sent for queue in self._sent.values() for _, sent in list(queue)[:oldest]]
        if pending:
            await asyncio.wait(pending, timeout=wait_s)
        for tp, queue in self._sent.items():
            while queue and queue[0][1].done():
                offset, sent = queue.popleft()
                self._in_flight -= 1
                error = sent.exception() if not sent.cancelled() else asyncio.CancelledError()
                if error is not None:
                    if self._failure is None:
                        log.error(
                            "rabbitmq.publish_failed",
                            connector=self._config.name,
                            partition=str(tp),
                            offset=offset - 1,
                            error=repr(error),
                        )
                        self._failure = error
                    queue.appendleft((offset, sent))
                    self._in_flight += 1
                    break
                self._confirmed[tp] = offset

    async def pre_commit(self, current_offsets: Mapping[TopicPartition, int]) -> Mapping[TopicPartition, int]:
        """Only confirmed offsets: what RabbitMQ has not confirmed is consumed again after a crash."""
        await self._settle(wait_s=self._config.confirm_timeout_s)
        return {tp: offset for tp, offset in self._confirmed.items() if tp in current_offsets}

    async def close(self, partitions: Collection[TopicPartition]) -> None:
        for tp in partitions:
            queue = self._sent.pop(tp, deque())
            self._in_flight -= len(queue)
            self._confirmed.pop(tp, None)

    async def stop(self, connector_deleted: bool = False) -> None:
        """Close the channel. Deleting: at once, with no confirm awaited (the queues go next)."""
        if connector_deleted:
            for queue in self._sent.values():
                for _, sent in queue:
                    sent.cancel()
        self._sent.clear()
        connection, self._connection = self._connection, None
        if connection is not None:
            with contextlib.suppress(Exception):
                await self._provisioner.close()
            with contextlib.suppress(Exception):
                await connection.close()

    def version(self) -> str:
        return "1.0.0"
