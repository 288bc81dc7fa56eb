"""Declaring the exchange and queues, and recording which ones this connector created.

Where the record lives. AMQP cannot list exchanges or queues, nor read their arguments (RabbitMQ
compares only a few arguments on redeclare, and none we could use as an "I created it" mark
without changing routing), and a sink connector has no offsets or state of its own in the
engine. So the record is kept in RabbitMQ itself, beside what it describes: a durable *ledger*
queue per connector incarnation (``connect-engine.provisioned.<connector>.<incarnation>``),
holding one persistent message per object this incarnation declared. An entry is published,
and confirmed, *before* the object is declared, so a kill -9 at any point leaves no unrecorded
object (at worst an entry for an object that never came to be: deleting it is a no-op). The
ledger survives the worker, any worker of a cluster can read it, and it needs nothing but the
broker the connector already talks to.

What counts as ours: an object that did not exist when we looked (passive declare) right before
declaring it. A pre-existing exchange or queue is used as it is and never recorded, so
``deleted()`` leaves it alone (a binding we added between two pre-existing objects stays too:
AMQP cannot tell it apart from one that was already there).
"""

from __future__ import annotations

import json
from typing import Any

import aio_pika
import aio_pika.abc
import aio_pika.exceptions
import structlog

log = structlog.get_logger(component="rabbitmq")

EXCHANGE, QUEUE = "exchange", "queue"


class Provisioner:
    """Declares what is missing, recording it in the incarnation's ledger first."""

    def __init__(self, connection: aio_pika.abc.AbstractConnection, ledger: str) -> None:
        self._connection = connection
        self._ledger = ledger
        self._channel: aio_pika.abc.AbstractChannel | None = None

    async def _ch(self) -> aio_pika.abc.AbstractChannel:
        if self._channel is None or self._channel.is_closed:
            self._channel = await self._connection.channel(publisher_confirms=True)
            await self._channel.declare_queue(self._ledger, durable=True)
        return self._channel

    async def exists(self, kind: str, name: str) -> bool:
        """A passive declare, on a channel of its own (a 404 closes the channel it happens on)."""
        channel = await self._connection.channel()
        try:
            if kind == EXCHANGE:
                await channel.declare_exchange(name, passive=True)
            else:
                await channel.declare_queue(name, passive=True)
        except aio_pika.exceptions.ChannelNotFoundEntity:
            return False
        finally:
            if not channel.is_closed:
                await channel.close()
        return True

    async def _record(self, kind: str, name: str) -> None:
        channel = await self._ch()
        body = json.dumps({"kind": kind, "name": name}).encode()
        await channel.default_exchange.publish(
            aio_pika.Message(
                body, delivery_mode=aio_pika.DeliveryMode.PERSISTENT, content_type="application/json"
            ),
            routing_key=self._ledger,
            mandatory=True,
        )

    async def ensure_exchange(self, name: str) -> bool:
        """Declare the direct exchange unless it exists; True when this call created it."""
        if await self.exists(EXCHANGE, name):
            return False
        await self._record(EXCHANGE, name)
        channel = await self._ch()
        await channel.declare_exchange(name, aio_pika.ExchangeType.DIRECT, durable=True)
        return True

    async def ensure_queue(self, queue: str, exchange: str, routing_key: str) -> bool:
        """Declare the durable queue unless it exists, and bind it; True when this call created it."""
        created = False
        if not await self.exists(QUEUE, queue):
            await self._record(QUEUE, queue)
            created = True
        channel = await self._ch()
        declared = await channel.declare_queue(queue, durable=True, passive=not created)
        await declared.bind(exchange, routing_key)
        return created

    async def close(self) -> None:
        if self._channel is not None and not self._channel.is_closed:
            await self._channel.close()


async def recorded(connection: aio_pika.abc.AbstractConnection, ledger: str) -> list[dict[str, Any]] | None:
    """The ledger's entries (None: there is no ledger), read without taking them: they go back to the
    queue if this process dies before the cleanup ends."""
    if not await Provisioner(connection, ledger).exists(QUEUE, ledger):
        return None
    channel = await connection.channel()
    queue = await channel.declare_queue(ledger, passive=True)
    entries = []
    while (message := await queue.get(no_ack=False, fail=False)) is not None:
        try:
            entry = json.loads(message.body)
        except ValueError:
            log.warning("rabbitmq.ledger_entry_unreadable", ledger=ledger, body=message.body[:200])
            continue
        if (
            isinstance(entry, dict)
            and entry.get("kind") in (EXCHANGE, QUEUE)
            and isinstance(entry.get("name"), str)
        ):
            entries.append(entry)
    await channel.close()  # unacknowledged: the entries stay until the ledger itself is deleted
    return entries


async def delete_recorded(
    connection: aio_pika.abc.AbstractConnection, ledger: str, *, connector: str | None = None
) -> list[dict[str, Any]]:
    """Delete what the ledger lists (queues, then exchanges), then the ledger; idempotent. Returns the entries."""
    entries = await recorded(connection, ledger)
    if entries is None:
        return []
    channel = await connection.channel()
    try:
        for kind in (QUEUE, EXCHANGE):
            for name in dict.fromkeys(e["name"] for e in entries if e["kind"] == kind):
                if kind == QUEUE:
                    await channel.queue_delete(name)  # deleting a missing queue succeeds in RabbitMQ
                else:
                    await channel.exchange_delete(name)
                log.info("rabbitmq.deleted", connector=connector, kind=kind, name=name)
        await channel.queue_delete(ledger)
    finally:
        if not channel.is_closed:
            await channel.close()
    return entries
