"""What every ``Topics`` implementation must do; subclass ``TopicsContract`` and provide a ``topics`` fixture."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Sequence

import pytest

from engine.topics import (
    ConsumedRecord,
    Consumer,
    NotAssigned,
    OffsetReset,
    OutgoingRecord,
    TopicPartition,
    Topics,
    TopicsError,
)
from engine.topics.partitioner import partition_for_key

WAIT_S = 30.0


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


async def poll_until(
    consumers: Sequence[Consumer], done: Callable[[list[ConsumedRecord]], bool], timeout: float = WAIT_S
) -> list[ConsumedRecord]:
    """Poll every consumer together (a rebalance needs all members polling) until ``done(records)``."""
    records: list[ConsumedRecord] = []
    deadline = time.monotonic() + timeout
    while not done(records):
        assert time.monotonic() < deadline, f"gave up after {timeout} s with {len(records)} records"
        for batch in await asyncio.gather(*(c.getmany(timeout_ms=100) for c in consumers)):
            records.extend(batch)
    return records


async def read(consumer: Consumer, count: int) -> list[ConsumedRecord]:
    return await poll_until([consumer], lambda records: len(records) >= count)


class Rebalances:
    """Records each callback as it arrives."""

    def __init__(self) -> None:
        self.events: list[tuple[str, frozenset[TopicPartition]]] = []

    async def on_assign(self, tps: frozenset[TopicPartition]) -> None:
        self.events.append(("assign", tps))

    async def on_revoke(self, tps: frozenset[TopicPartition]) -> None:
        self.events.append(("revoke", tps))


class TopicsContract:
    async def test_list_topics_names_created_topics(self, topics: Topics) -> None:
        name = unique("listed")
        await topics.create_topic(name, partitions=2)
        listed = await topics.list_topics()
        assert name in listed
        assert listed == sorted(listed)
        assert not any(t.startswith("__consumer_offsets") for t in listed)

    async def test_create_topic_is_idempotent(self, topics: Topics) -> None:
        name = unique("created")
        assert await topics.create_topic(name, partitions=3) is True
        assert await topics.create_topic(name, partitions=3) is False
        assert await topics.partitions(name) == 3

    async def test_records_keep_their_order_and_acks_carry_offsets(self, topics: Topics) -> None:
        name = unique("ordered")
        await topics.create_topic(name, partitions=2)
        producer = topics.producer()
        acks = [producer.send(name, b"k", str(i).encode(), partition=1) for i in range(50)]
        metas = await asyncio.gather(*acks)
        assert [m.offset for m in metas] == list(range(50))
        assert {(m.topic, m.partition) for m in metas} == {(name, 1)}
        consumer = await topics.consumer(unique("g"), [name])
        records = await read(consumer, 50)
        assert [r.value for r in records] == [str(i).encode() for i in range(50)]
        assert [r.offset for r in records] == list(range(50))
        assert records[0].timestamp == metas[0].timestamp

    async def test_keys_are_partitioned_by_kafkas_murmur2(self, topics: Topics) -> None:
        name = unique("keyed")
        await topics.create_topic(name, partitions=5)
        producer = topics.producer()
        keys = [f"key-{i}".encode() for i in range(40)]
        metas = await asyncio.gather(*(producer.send(name, key, b"v") for key in keys))
        assert [m.partition for m in metas] == [partition_for_key(key, 5) for key in keys]
        consumer = await topics.consumer(unique("g"), [name])
        records = await read(consumer, 40)
        assert {r.key: r.partition for r in records} == {key: partition_for_key(key, 5) for key in keys}

    async def test_null_keys_round_robin_and_tombstones_and_headers_survive(self, topics: Topics) -> None:
        name = unique("nulls")
        await topics.create_topic(name, partitions=3)
        producer = topics.producer()
        headers = [("trace", b"abc"), ("empty", b""), ("trace", b"\xff\x00"), ("null", None)]
        metas = [await producer.send(name, None, b"x", headers=headers) for _ in range(6)]
        assert sorted(m.partition for m in metas) == [0, 0, 1, 1, 2, 2]
        tombstone = producer.send(name, b"gone", None, partition=0)
        await producer.flush()
        assert (await tombstone).offset == 2
        consumer = await topics.consumer(unique("g"), [name])
        records = await read(consumer, 7)
        assert [r.headers for r in records if r.key is None] == [tuple(headers)] * 6
        assert [(r.key, r.value) for r in records if r.key is not None] == [(b"gone", None)]

    async def test_a_record_without_key_and_value_is_refused(self, topics: Topics) -> None:
        name = unique("empty")
        await topics.create_topic(name)
        producer = topics.producer()
        with pytest.raises(TopicsError):
            await producer.send(name, None, None)
        assert (await producer.send(name, None, b"after")).offset == 0

    async def test_a_batch_is_written_in_order_and_each_record_acknowledged(self, topics: Topics) -> None:
        """``send_batch``: one result for the batch, every record's place in it; a refused record fails
        alone. 300 records of 100 B per partition span several of aiokafka's 16 KiB batches."""
        name = unique("batch")
        await topics.create_topic(name, partitions=2)
        producer = topics.producer()
        batch = [
            OutgoingRecord(name, None, b"%099d" % i, (("n", str(i).encode()),), i % 2) for i in range(600)
        ]
        batch[301] = OutgoingRecord(name, None, None, (), 1)  # neither key nor value
        ack = await producer.send_batch(batch)
        assert set(ack.errors) == {301}
        assert isinstance(ack.errors[301], TopicsError)
        assert ack.topics == {name}
        metas = {i: ack.metadata(i) for i in range(600) if i != 301}
        for partition in (0, 1):
            offsets = [m.offset for i, m in sorted(metas.items()) if i % 2 == partition]
            assert offsets == list(range(len(offsets)))
            assert {(m.topic, m.partition) for i, m in metas.items() if i % 2 == partition} == {
                (name, partition)
            }
        consumer = await topics.consumer(unique("g"), [name])
        records = await read(consumer, 599)
        by_partition = {p: [r for r in records if r.partition == p] for p in (0, 1)}
        assert [r.value for r in by_partition[0]] == [b"%099d" % i for i in range(0, 600, 2)]
        assert [r.value for r in by_partition[1]] == [b"%099d" % i for i in range(1, 600, 2) if i != 301]
        assert all(r.headers == (("n", str(int(r.value or b"")).encode()),) for r in records)
        read_at = {(r.partition, r.offset): r.timestamp for r in records}
        assert all(read_at[(m.partition, m.offset)] == m.timestamp for m in metas.values())

    async def test_batches_and_single_sends_keep_call_order(self, topics: Topics) -> None:
        name = unique("mixed")
        await topics.create_topic(name)
        producer = topics.producer()
        big = b"x" * 40_000  # too big to share a batch: sent alone, still in its place
        first = producer.send(name, None, b"0", partition=0)
        ack = producer.send_batch(
            [
                OutgoingRecord(name, None, b"1", (), 0),
                OutgoingRecord(name, None, big, (), 0),
                OutgoingRecord(name, b"k", b"3", (), 0),
            ]
        )
        last = producer.send(name, None, b"4", partition=0)
        await producer.flush()
        acked = await ack
        assert [(await first).offset, *(acked.metadata(i).offset for i in range(3)), (await last).offset] == [
            0,
            1,
            2,
            3,
            4,
        ]
        consumer = await topics.consumer(unique("g"), [name])
        assert [r.value for r in await read(consumer, 5)] == [b"0", b"1", big, b"3", b"4"]

    async def test_committed_offsets_are_the_next_offset_to_read(self, topics: Topics) -> None:
        name, group = unique("committed"), unique("g")
        await topics.create_topic(name)
        producer = topics.producer()
        await asyncio.gather(*(producer.send(name, None, str(i).encode()) for i in range(10)))
        tp = TopicPartition(name, 0)
        first = await topics.consumer(group, [name])
        await read(first, 10)
        assert await first.committed(tp) is None
        await first.commit({tp: 6})
        assert await first.committed(tp) == 6
        await first.close()
        second = await topics.consumer(group, [name])
        records = await read(second, 4)
        assert [r.offset for r in records] == [6, 7, 8, 9]
        await second.close()

    async def test_seek_and_position(self, topics: Topics) -> None:
        name = unique("seek")
        await topics.create_topic(name)
        producer = topics.producer()
        await asyncio.gather(*(producer.send(name, None, str(i).encode()) for i in range(5)))
        tp = TopicPartition(name, 0)
        consumer = await topics.consumer(unique("g"), [name])
        await read(consumer, 5)
        assert await consumer.position(tp) == 5
        consumer.seek(tp, 2)
        assert await consumer.position(tp) == 2
        again = await read(consumer, 3)
        assert [r.offset for r in again] == [2, 3, 4]
        with pytest.raises(NotAssigned):
            consumer.seek(TopicPartition(name, 7), 0)
        with pytest.raises(NotAssigned):
            await consumer.commit({TopicPartition(unique("other"), 0): 1})

    def answers_out_of_range(self, request: pytest.FixtureRequest) -> None:
        """A subclass marks here the implementations that do not answer a fetch out of range."""

    async def test_a_position_beyond_the_log_end_is_answered_out_of_range(
        self, topics: Topics, request: pytest.FixtureRequest
    ) -> None:
        """As Kafka's broker answers a fetch past the log end: ``auto.offset.reset`` (earliest here)
        moves the position, the consumer reports it once, and nothing below is skipped."""
        self.answers_out_of_range(request)
        name = unique("beyond")
        await topics.create_topic(name)
        producer = topics.producer()
        await asyncio.gather(*(producer.send(name, None, str(i).encode()) for i in range(5)))
        tp = TopicPartition(name, 0)
        consumer = await topics.consumer(unique("g"), [name])
        await read(consumer, 5)
        assert consumer.offset_resets() == []
        consumer.seek(tp, 9)
        again = await read(consumer, 5)
        assert [r.offset for r in again] == [0, 1, 2, 3, 4]
        assert consumer.offset_resets() == [OffsetReset(tp, 9, "earliest", 0)]
        assert consumer.offset_resets() == []
        consumer.seek(tp, 5)  # the log end itself is in range: nothing moves
        await producer.send(name, None, b"5")
        assert [r.offset for r in await read(consumer, 1)] == [5]
        assert consumer.offset_resets() == []
        await consumer.close()

    async def test_paused_partitions_are_not_read_until_resumed(self, topics: Topics) -> None:
        name = unique("paused")
        await topics.create_topic(name, partitions=2)
        producer = topics.producer()
        consumer = await topics.consumer(unique("g"), [name])
        await poll_until([consumer], lambda _: len(consumer.assignment()) == 2)
        paused = TopicPartition(name, 0)
        consumer.pause([paused])
        await asyncio.gather(*(producer.send(name, None, b"v", partition=p) for p in (0, 1, 0, 1)))
        records = await read(consumer, 2)
        await asyncio.sleep(0.3)
        records += await consumer.getmany(timeout_ms=300)
        assert {r.partition for r in records} == {1}
        consumer.resume([paused])
        resumed = await read(consumer, 2)
        assert [r.partition for r in resumed] == [0, 0]

    async def test_group_members_split_partitions_and_take_over_on_leave(self, topics: Topics) -> None:
        name, group = unique("split"), unique("g")
        await topics.create_topic(name, partitions=4)
        every = frozenset(TopicPartition(name, p) for p in range(4))
        seen_a, seen_b = Rebalances(), Rebalances()
        a = await topics.consumer(group, [name], seen_a.on_assign, seen_a.on_revoke)
        await poll_until([a], lambda _: a.assignment() == every)
        assert seen_a.events == [("assign", every)]

        b = await topics.consumer(group, [name], seen_b.on_assign, seen_b.on_revoke)
        await poll_until([a, b], lambda _: len(a.assignment()) == 2 and len(b.assignment()) == 2)
        assert a.assignment() | b.assignment() == every
        assert ("revoke", every) in seen_a.events
        assert seen_b.events[-1] == ("assign", b.assignment())

        producer = topics.producer()
        await asyncio.gather(*(producer.send(name, None, b"v", partition=p) for p in range(4)))
        records = await poll_until([a, b], lambda records: len(records) >= 4)
        assert sorted(r.partition for r in records) == [0, 1, 2, 3]

        await b.close()
        await poll_until([a], lambda _: a.assignment() == every)
        assert seen_a.events[-1] == ("assign", every)
        await a.close()
