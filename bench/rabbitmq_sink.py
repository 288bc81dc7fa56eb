"""RabbitMQ sink benchmark: publish rate with publisher confirms, the sink task against a bare aio-pika
publisher, same broker (a private RabbitMQ node started for the run on a free port), same run.

* sink: `RabbitMQSinkTask.put` of N records in batches of 500 (as the sink loop hands them over), then
  `pre_commit` (which waits for every confirm); clock from the first put to pre_commit returning all N.
* bare: one aio-pika channel with publisher confirms, the same N 100-byte bodies published to the same
  kind of exchange and queue with `mandatory=True`, at most the same number unconfirmed at once
  (`rabbitmq.max.in.flight`, 5000), until every confirm arrived.

    python bench/rabbitmq_sink.py [--messages N] [--append BENCHMARKS.md]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import aio_pika
import structlog

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.report import append_to
from engine.api import SinkRecord, TopicPartition
from engine.api.context import SinkTaskContext
from engine.connectors.rabbitmq import RabbitMQSinkTask
from engine.connectors.rabbitmq.config import ledger_name
from tests.session_services import rabbitmq_url

BATCH = 500
IN_FLIGHT = 5000
REPEATS = 3
BODY = b"x" * 100


async def _sink_seconds(n: int) -> float:
    name = f"bench-{uuid.uuid4().hex[:8]}"
    props = {
        "name": name,
        "topics": "orders",
        "rabbitmq.url": rabbitmq_url(),
        "rabbitmq.max.in.flight": str(IN_FLIGHT),
    }
    connection = await aio_pika.connect(rabbitmq_url())
    channel = await connection.channel()
    await channel.declare_exchange(f"connect.{name}", aio_pika.ExchangeType.DIRECT, durable=True)
    task = RabbitMQSinkTask()
    task.initialize(SinkTaskContext(props))
    await task.start(props)
    tp = TopicPartition("orders", 0)
    await task.open([tp])
    records = [SinkRecord(topic="orders", kafka_partition=0, kafka_offset=i, value=BODY) for i in range(n)]
    started = time.perf_counter()
    for at in range(0, n, BATCH):
        await task.put(records[at : at + BATCH])
    committed = await task.pre_commit({tp: n})
    seconds = time.perf_counter() - started
    assert committed == {tp: n}, committed
    await task.stop()
    for queue in (f"{name}.orders", ledger_name(name, None)):
        await channel.queue_delete(queue)
    await channel.exchange_delete(f"connect.{name}")
    await connection.close()
    return seconds


async def _bare_seconds(n: int) -> float:
    name = f"bare-{uuid.uuid4().hex[:8]}"
    connection = await aio_pika.connect(rabbitmq_url())
    channel = await connection.channel(publisher_confirms=True, on_return_raises=True)
    exchange = await channel.declare_exchange(name, aio_pika.ExchangeType.DIRECT, durable=True)
    queue = await channel.declare_queue(name, durable=True)
    await queue.bind(exchange, "orders")
    room = asyncio.Semaphore(IN_FLIGHT)

    async def publish() -> Any:
        try:
            return await exchange.publish(
                aio_pika.Message(BODY, delivery_mode=aio_pika.DeliveryMode.PERSISTENT),
                routing_key="orders",
                mandatory=True,
            )
        finally:
            room.release()

    started = time.perf_counter()
    sent = []
    for _ in range(n):
        await room.acquire()
        sent.append(asyncio.ensure_future(publish()))
    await asyncio.gather(*sent)
    seconds = time.perf_counter() - started
    await channel.queue_delete(name)
    await channel.exchange_delete(name)
    await connection.close()
    return seconds


async def run(n: int) -> dict[str, Any]:
    await _bare_seconds(1000)  # warm up
    sink, bare = [], []
    for _ in range(REPEATS):
        sink.append(await _sink_seconds(n))
        bare.append(await _bare_seconds(n))
    return {"n": n, "sink": n / statistics.median(sink), "bare": n / statistics.median(bare)}


def _markdown(r: dict[str, Any]) -> str:
    return "\n".join(
        [
            "## RabbitMQ sink (`python bench/rabbitmq_sink.py`, run by `make bench`)",
            "",
            f"A private RabbitMQ 3.10 node on 127.0.0.1 (Debian's package); {r['n']:,} persistent 100-byte messages, publisher confirms, "
            f"at most {IN_FLIGHT:,} unconfirmed; median of {REPEATS}. Baseline in the same run: a bare aio-pika "
            "publisher (one confirming channel, same exchange type, queue, `mandatory`).",
            "",
            "| measure | messages/s |",
            "|---|---|",
            f"| sink task: put (batches of {BATCH}) + pre_commit until every confirm | {r['sink']:,.0f} |",
            f"| bare aio-pika publisher with confirms | {r['bare']:,.0f} |",
            f"| sink / bare | {r['sink'] / r['bare']:.2f}x |",
            "",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--append", help="append a markdown section to this file")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    report = _markdown(asyncio.run(run(args.messages)))
    print(report)
    append_to(args.append, "\n" + report)


if __name__ == "__main__":
    main()
