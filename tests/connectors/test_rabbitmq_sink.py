"""The RabbitMQ sink on the session's broker: start declares the exchange and a queue per topic; they
outlive pause, stop, restart and a worker restart; deletion removes what the connector created and
nothing else, also after a kill -9 inside ``deleted()``; a re-created connector starts clean;
``pre_commit`` returns only confirmed offsets."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import aio_pika
import pytest

from engine import Engine
from engine.api import ConnectException, SinkRecord, TopicPartition
from engine.api.context import SinkTaskContext
from engine.connectors.rabbitmq import RabbitMQSinkTask
from engine.connectors.rabbitmq.config import ledger_name
from engine.testing import eventually
from tests.connectors.rabbitmq_support import (
    FAST,
    KILLED_IN_DELETED,
    delete_all,
    exists,
    messages,
    produce,
    resources,
    sink_config,
    unique,
)
from tests.integration.brokers import Broker
from tests.session_services import rabbitmq_url

pytestmark = pytest.mark.integration  # the session's RabbitMQ node

ROOT = Path(__file__).resolve().parents[2]


# the worker's stores: files, or Apache Kafka 4.1 (config and offset topics, the data topics, the sink's group)
STORES = pytest.mark.parametrize("stores", ["files", pytest.param("kafka", marks=pytest.mark.integration)])


def worker_stores(stores: str, tmp_path: Path, request: pytest.FixtureRequest) -> dict[str, str]:
    if stores == "kafka":
        kafka: Broker = request.getfixturevalue("kafka")
        tag = uuid.uuid4().hex[:8]
        return {**FAST, "bootstrap.servers": kafka.bootstrap, "config.storage.topic": f"configs-{tag}",
                "offset.storage.topic": f"offsets-{tag}"}
    return {**FAST, "config.storage.file.filename": str(tmp_path / "configs.log"),
            "status.storage.file.filename": str(tmp_path / "status.log"),
            "offset.storage.file.filename": str(tmp_path / "offsets.log"),
            "topics.storage.file.filename": str(tmp_path / "topics.log")}


async def _arrived(queue: str, count: int, seen: list[bytes]) -> list[bytes]:
    async def enough() -> bool:
        seen.extend(await messages(queue))
        return len(seen) >= count
    await eventually(enough, timeout=20, message=f"{count} messages in {queue}")
    assert len(seen) == count, seen
    return seen


async def test_declares_on_start_keeps_through_lifecycle_and_delete_removes_what_it_created() -> None:
    name = unique()
    topics = ["orders", "refunds"]
    everything = {"exchange": True, "ledger": True, "orders": True, "refunds": True}
    try:
        async with Engine(FAST) as engine:
            for topic in topics:
                await engine.topics.create_topic(topic, 1)
            await engine.create_connector(name, sink_config(topics=",".join(topics)))
            await engine.wait_for_state(name, "RUNNING", tasks=1)
            assert await resources(name, topics) == everything
            await produce(engine, "orders", ["o1", "o2"])
            await produce(engine, "refunds", ["r1"])
            assert await _arrived(f"{name}.orders", 2, []) == [b"o1", b"o2"]
            assert await _arrived(f"{name}.refunds", 1, []) == [b"r1"]

            for operation, state in (("pause_connector", "PAUSED"), ("resume_connector", "RUNNING"),
                                     ("stop_connector", "STOPPED"), ("resume_connector", "RUNNING")):
                await getattr(engine, operation)(name)
                await engine.wait_for_state(name, state)
                assert await resources(name, topics) == everything, operation
                if state != "RUNNING":
                    await produce(engine, "orders", [f"while {state}"])
            await engine.restart_connector(name, include_tasks=True)
            await engine.wait_for_state(name, "RUNNING", tasks=1)
            assert await resources(name, topics) == everything
            assert await _arrived(f"{name}.orders", 2, []) == [b"while PAUSED", b"while STOPPED"]

            assert (await engine.delete_connector(name)).succeeded
            assert await resources(name, topics) == dict.fromkeys(everything, False)

            await engine.create_connector(name, sink_config(topics="orders"))  # re-created: declared anew, empty
            await engine.wait_for_state(name, "RUNNING", tasks=1)
            incarnation = engine.herder.snapshot.incarnations[name]
            assert await resources(name, ["orders"], incarnation=incarnation) == {
                "exchange": True, "ledger": True, "orders": True}
            await produce(engine, "orders", ["new"])
            # a new, empty queue; the sink's group offsets stay, as in Connect: only new records arrive
            assert await _arrived(f"{name}.orders", 1, []) == [b"new"]
            assert (await engine.delete_connector(name)).succeeded
            assert await resources(name, ["orders"], incarnation=incarnation) == {
                "exchange": False, "ledger": False, "orders": False}
    finally:
        await delete_all(("queue", f"{name}.orders"), ("queue", f"{name}.refunds"), ("exchange", f"connect.{name}"),
                         ("queue", ledger_name(name, "0")))


async def test_a_pre_existing_exchange_and_queue_are_used_and_left_alone() -> None:
    name, exchange = unique(), unique("theirs")
    connection = await aio_pika.connect(rabbitmq_url())
    channel = await connection.channel()
    await channel.declare_exchange(exchange, aio_pika.ExchangeType.DIRECT, durable=True)
    await channel.declare_queue(f"{name}.refunds", durable=True)
    try:
        async with Engine(FAST) as engine:
            await engine.create_connector(name, sink_config(topics="orders,refunds", **{"rabbitmq.exchange": exchange}))
            await engine.wait_for_state(name, "RUNNING", tasks=1)
            await produce(engine, "refunds", ["r1"])
            assert await _arrived(f"{name}.refunds", 1, []) == [b"r1"]
            assert (await engine.delete_connector(name)).succeeded
        assert await exists("exchange", exchange)  # theirs
        assert await exists("queue", f"{name}.refunds")  # theirs
        assert not await exists("queue", f"{name}.orders")  # ours
        assert not await exists("queue", ledger_name(name, "0"))
    finally:
        await channel.queue_delete(f"{name}.refunds")
        await channel.exchange_delete(exchange)
        await delete_all(("queue", f"{name}.orders"), ("queue", ledger_name(name, "0")))
        await connection.close()


async def test_topics_regex_queues_are_declared_as_topics_are_assigned_and_deleted_with_the_connector() -> None:
    name = unique()
    try:
        async with Engine(FAST) as engine:
            await engine.topics.create_topic(f"{name}-a", 1)
            await engine.create_connector(name, sink_config(**{"topics.regex": f"{name}-.*"}))
            await engine.wait_for_state(name, "RUNNING", tasks=1)
            await produce(engine, f"{name}-a", ["x"])
            assert await _arrived(f"{name}.{name}-a", 1, []) == [b"x"]
            assert (await engine.delete_connector(name)).succeeded
        assert await resources(name, [f"{name}-a"]) == {"exchange": False, "ledger": False, f"{name}-a": False}
    finally:
        await delete_all(("queue", f"{name}.{name}-a"), ("exchange", f"connect.{name}"),
                         ("queue", ledger_name(name, "0")))


@STORES
async def test_a_worker_restart_keeps_the_queues_and_loses_nothing(tmp_path: Path, stores: str,
        request: pytest.FixtureRequest) -> None:
    name, topic = unique(), unique("orders")  # a topic of its own: on Kafka the broker is the session's
    worker = worker_stores(stores, tmp_path, request)
    seen: list[bytes] = []
    try:
        async with Engine(worker) as engine:
            await engine.create_connector(name, sink_config(topics=topic))
            await engine.wait_for_state(name, "RUNNING", tasks=1)
            await produce(engine, topic, ["1", "2"])
            await _arrived(f"{name}.{topic}", 2, seen)
        assert await resources(name, [topic]) == {"exchange": True, "ledger": True, topic: True}
        async with Engine(worker) as engine:
            await engine.wait_for_state(name, "RUNNING", tasks=1)
            await produce(engine, topic, ["3"])
            assert await _arrived(f"{name}.{topic}", 3, seen) == [b"1", b"2", b"3"]  # committed: not sent twice
            assert (await engine.delete_connector(name)).succeeded
        assert await resources(name, [topic]) == {"exchange": False, "ledger": False, topic: False}
    finally:
        await delete_all(("queue", f"{name}.{topic}"), ("exchange", f"connect.{name}"), ("queue", ledger_name(name, "0")))


KILLED = textwrap.dedent("""
    import asyncio, json, sys
    from engine import Engine

    async def main(worker, config):
        async with Engine(worker) as engine:
            await engine.create_connector("doomed", config)
            await engine.wait_for_state("doomed", "RUNNING", tasks=1)
            await engine.delete_connector("doomed")  # deleted() exits the process half-way

    asyncio.run(main(json.loads(sys.argv[1]), json.loads(sys.argv[2])))
    sys.exit("deletion returned: the process should have been killed in deleted()")
""")


async def test_a_worker_killed_inside_deleted_leaves_a_cleanup_the_restarted_worker_finishes(tmp_path: Path) -> None:
    exchange = unique("doomed-exchange")  # "doomed" is the connector's name: its queue prefix is fixed
    prefix = unique("doomed") + "."
    worker = {**FAST, "config.storage.file.filename": str(tmp_path / "configs.log"),
              "status.storage.file.filename": str(tmp_path / "status.log"),
              "offset.storage.file.filename": str(tmp_path / "offsets.log"),
              "connector.deleted.retry.backoff.ms": "200"}
    config = sink_config(topics="orders", **{"connector.class": KILLED_IN_DELETED, "rabbitmq.exchange": exchange,
                                             "rabbitmq.queue.prefix": prefix,
                                             "test.exit.once.file": str(tmp_path / "exited")})
    ledger = ledger_name("doomed", "0")
    try:
        child = await asyncio.to_thread(subprocess.run, [sys.executable, "-c", KILLED, json.dumps(worker),
                                                         json.dumps(config)],
                                        capture_output=True, text=True, timeout=90, check=False, cwd=ROOT)
        assert child.returncode == 9, child.stderr
        assert not await exists("queue", prefix + "orders")  # deleted before the kill
        assert await exists("exchange", exchange)  # not reached
        assert await exists("queue", ledger)
        async with Engine(worker) as engine:  # the pending cleanup runs again, for real this time
            await eventually(lambda: not engine.connector_cleanups(), timeout=30, message="cleanup finished")
            assert not await exists("exchange", exchange)
            assert not await exists("queue", ledger)
    finally:
        await delete_all(("queue", prefix + "orders"), ("exchange", exchange), ("queue", ledger))


async def test_pre_commit_returns_only_confirmed_offsets() -> None:
    """Task level: confirmed messages are committable; a message the broker returns (its queue is gone)
    holds its partition's offset back, and the next put fails the task."""
    name = unique()
    props = {**sink_config(topics="orders"), "name": name}
    task = RabbitMQSinkTask()
    task.initialize(SinkTaskContext(props))
    connection = await aio_pika.connect(rabbitmq_url())
    channel = await connection.channel()
    await channel.declare_exchange(f"connect.{name}", aio_pika.ExchangeType.DIRECT, durable=True)
    try:
        await task.start(props)
        tp = TopicPartition("orders", 0)
        await task.open([tp])

        def record(offset: int) -> SinkRecord:
            return SinkRecord(topic="orders", kafka_partition=0, kafka_offset=offset, value=f"m{offset}".encode())

        await task.put([record(0), record(1)])
        assert await task.pre_commit({tp: 2}) == {tp: 2}
        await channel.queue_delete(f"{name}.orders")  # now unroutable: the broker returns what is published
        await task.put([record(2)])
        assert await task.pre_commit({tp: 3}) == {tp: 2}  # not confirmed as delivered: not committed
        with pytest.raises(ConnectException, match="not accepted by RabbitMQ"):
            await task.put([record(3)])
        await task.stop()
    finally:
        await channel.exchange_delete(f"connect.{name}")
        await delete_all(("queue", f"{name}.orders"), ("queue", ledger_name(name, None)))
        await connection.close()
