"""The contract on the in-process topics, with and without a file; plus what only a file gives."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from engine.topics import MemoryTopics, TopicPartition, UnknownTopic, murmur2
from engine.topics.partitioner import Partitioner, partition_for_key
from tests.topics.contract import TopicsContract, read, unique


@pytest.fixture(params=["memory", "file"])
async def topics(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[MemoryTopics]:
    store = MemoryTopics(tmp_path / "topics.jsonl" if request.param == "file" else None)
    await store.open()
    try:
        yield store
    finally:
        await store.close()


class TestMemoryTopics(TopicsContract):
    pass


# Kafka's own vectors (UtilsTest.testMurmur2)
KAFKA_MURMUR2 = {
    b"21": -973932308,
    b"foobar": -790332482,
    b"a-little-bit-long-string": -985981536,
    b"a-little-bit-longer-string": -1486304829,
    b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
    b"abc": 479470107,
}


@pytest.mark.parametrize(("data", "expected"), KAFKA_MURMUR2.items())
def test_murmur2_matches_kafkas_vectors(data: bytes, expected: int) -> None:
    assert murmur2(data) == expected


def test_murmur2_matches_aiokafkas_default_partitioner() -> None:
    from aiokafka.partitioner import DefaultPartitioner

    for i in range(300):
        key = f"key-{i}".encode() * (i % 7)
        if key:
            assert partition_for_key(key, 7) == DefaultPartitioner()(key, list(range(7)), [])


def test_null_keys_round_robin_per_producer() -> None:
    partitioner = Partitioner()
    assert [partitioner.partition(None, 3) for _ in range(6)] == [0, 1, 2, 0, 1, 2]


async def test_records_commits_and_topics_survive_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "topics.jsonl"
    name, group, tp = unique("durable"), unique("g"), None
    first = MemoryTopics(path)
    await first.open()
    await first.create_topic(name, partitions=2, configs={"cleanup.policy": "compact"})
    producer = first.producer()
    for i in range(6):
        await producer.send(
            name, f"k{i}".encode(), None if i == 5 else str(i).encode(), headers=[("h", b"\x00")]
        )
    consumer = await first.consumer(group, [name])
    await read(consumer, 6)
    tp = TopicPartition(name, partition_for_key(b"k0", 2))
    await consumer.commit({tp: 1})
    await first.close()

    second = MemoryTopics(path)
    await second.open()
    try:
        assert await second.partitions(name) == 2
        assert await second.create_topic(name, partitions=2) is False
        again = await second.consumer(group, [name])
        records = await read(again, 5)
        assert all(r.headers == (("h", b"\x00"),) for r in records)
        assert not any(r.partition == tp.partition and r.offset == 0 for r in records)
        assert await again.committed(tp) == 1
        meta = await second.producer().send(name, b"k0", b"new")
        assert meta.offset == len([r for r in records if r.partition == tp.partition]) + 1
    finally:
        await second.close()


async def test_a_torn_last_line_loses_only_that_record(tmp_path: Path) -> None:
    path = tmp_path / "topics.jsonl"
    store = MemoryTopics(path)
    await store.open()
    await store.create_topic("t")
    for i in range(3):
        await store.producer().send("t", None, str(i).encode())
    await store.close()
    path.write_bytes(path.read_bytes()[:-5])
    reopened = MemoryTopics(path)
    await reopened.open()
    try:
        consumer = await reopened.consumer("g", ["t"])
        assert [r.value for r in await read(consumer, 2)] == [b"0", b"1"]
        assert (await reopened.producer().send("t", None, b"again")).offset == 2
    finally:
        await reopened.close()


async def test_without_auto_create_a_send_to_a_missing_topic_fails() -> None:
    store = MemoryTopics(auto_create=False)
    await store.open()
    with pytest.raises(UnknownTopic):
        await store.producer().send("missing", None, b"v")
    with pytest.raises(UnknownTopic):
        await store.partitions("missing")
    await store.close()


async def test_a_member_that_stops_polling_is_evicted_after_the_rebalance_timeout() -> None:
    store = MemoryTopics(rebalance_timeout_ms=200)
    await store.open()
    await store.create_topic("t", partitions=2)
    stuck = await store.consumer("g", ["t"])
    await stuck.getmany()
    assert len(stuck.assignment()) == 2
    fresh = await store.consumer("g", ["t"])
    await fresh.getmany(timeout_ms=1000)
    assert len(fresh.assignment()) == 2  # stuck never polled again, so it was evicted
    await store.close()
