"""On Apache Kafka: what a sink's consumer fetches for a newly assigned partition while its committed
offset is still being checked (identity, leader epoch) is held back, so the check's verdict (a seek
to a divergence point, a reset) decides where delivery starts.

aiokafka fetches from the committed offset while the rebalance listener that runs the check is still
awaited; CI once saw a restarted sink deliver the five records past its committed offset, then the
whole refill again from the divergence point the check found (``test_log_truncation``).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping

import pytest

from engine.topics.base import TopicPartition
from engine.topics.kafka import KafkaTopics
from tests.integration.brokers import Broker

pytestmark = pytest.mark.integration


async def test_records_fetched_during_the_check_wait_for_its_verdict(kafka: Broker) -> None:
    topic, group = f"held-{uuid.uuid4().hex[:8]}", f"held-{uuid.uuid4().hex[:6]}"
    tp = TopicPartition(topic, 0)
    store = KafkaTopics(kafka.bootstrap, session_timeout_ms=6000)
    await store.open()
    try:
        await store.create_topic(topic)
        producer = store.producer()
        for n in range(10):
            await producer.send(topic, None, f"r{n}".encode())
        await producer.flush()
        first = await store.consumer(group, [topic])
        while not await first.getmany(timeout_ms=500):
            pass
        await first.commit({tp: 5})
        await first.close()

        checking, verdict = asyncio.Event(), asyncio.Event()
        consumer = await store.consumer(group, [topic])

        async def slow_check(committed: Mapping[TopicPartition, tuple[int, int]]) -> None:
            assert committed[tp][0] == 5
            checking.set()
            await verdict.wait()
            consumer.epochs.seek_quietly(tp, 7)  # as a divergence found at offset 7 would

        consumer.epochs.validate_committed = slow_check  # type: ignore[method-assign]
        try:
            delivered: list[int] = []
            while not checking.is_set():
                delivered += [r.offset for r in await consumer.getmany(timeout_ms=200)]
            for _ in range(10):  # two seconds of fetching while the check is out
                delivered += [r.offset for r in await consumer.getmany(timeout_ms=200)]
            assert delivered == []  # before: [5, 6, 7, 8, 9]
            verdict.set()
            while len(delivered) < 3:
                delivered += [r.offset for r in await consumer.getmany(timeout_ms=500)]
            assert delivered == [7, 8, 9]
        finally:
            verdict.set()  # a check still out would hold the consumer's close
            await consumer.close()
    finally:
        await store.close()
