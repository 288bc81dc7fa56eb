"""KafkaConfigLog against real Kafka-protocol brokers: topic checks, round trips, end offsets, close."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType

from engine.configlog.base import LogEntry
from engine.configlog.kafka import KafkaConfigLog
from engine.errors import ConfigError, ConfigLogError, EngineNotRunning
from tests.integration.brokers import Broker, free_port

pytestmark = pytest.mark.integration


async def take(entries: AsyncIterator[LogEntry], n: int) -> list[LogEntry]:
    return [await anext(entries) for _ in range(n)]


async def create_topic(broker: Broker, topic: str, partitions: int, **configs: str) -> str | None:
    """Create a topic by hand; returns the broker's error, if any."""
    admin = AIOKafkaAdminClient(bootstrap_servers=broker.bootstrap)
    await admin.start()
    try:
        response = await admin.create_topics([NewTopic(topic, partitions, 1, topic_configs=configs)])
    finally:
        await admin.close()
    _, code, message = response.topic_errors[0]
    return None if code == 0 else f"error {code}: {message}"


async def describe(broker: Broker, topic: str) -> tuple[int, str | None]:
    """The topic's partition count and reported cleanup.policy."""
    admin = AIOKafkaAdminClient(bootstrap_servers=broker.bootstrap)
    await admin.start()
    try:
        (described,) = await admin.describe_topics([topic])
        (configs,) = await admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])
    finally:
        await admin.close()
    entries = configs.resources[0][4]
    policy = next((value for name, value, *_ in entries if name == "cleanup.policy"), None)
    return len(described["partitions"]), policy


@pytest.fixture
async def config_log(broker: Broker, topic: str) -> AsyncIterator[KafkaConfigLog]:
    log = KafkaConfigLog(broker.bootstrap, topic)
    await log.open()
    try:
        yield log
    finally:
        await log.close()


async def test_open_creates_a_single_partition_compacted_topic(
    broker: Broker, config_log: KafkaConfigLog
) -> None:
    partitions, policy = await describe(broker, config_log.topic)
    assert partitions == 1
    assert policy == "compact"


async def test_append_and_entries_round_trip_in_order(config_log: KafkaConfigLog) -> None:
    records: list[tuple[str, bytes | None]] = [
        ("connector-a", b'{"properties": {"x": "1"}}'),
        ("target-state-a", b'{"state": "PAUSED"}'),
        ("connector-a", None),
        ("binary", b"\xff\xfe\x00\x80 not utf-8"),
        ("connector-ü", b""),
    ]
    assert await config_log.append(records[:2]) == 1
    assert await config_log.append(records[2:]) == 4
    entries = config_log.entries()
    read = await take(entries, 5)
    assert read == [LogEntry(i, key, value) for i, (key, value) in enumerate(records)]
    # live tail: a record appended after the reader caught up arrives too
    assert await config_log.append([("connector-b", b"{}")]) == 5
    assert await take(entries, 1) == [LogEntry(5, "connector-b", b"{}")]
    await config_log.close()
    assert [e async for e in entries] == []


async def test_concurrent_appends_each_land_whole_and_in_the_order_sent(config_log: KafkaConfigLog) -> None:
    """A leader's creates and its followers' task configs append at once: each append's records stay
    together (a task config and its commit), and the offset each returns is its own last record's,
    though the acks are awaited side by side and share produce requests."""
    appends = [
        [(f"task-c{n}-{i}", b"%d" % n) for i in range(3)] + [(f"commit-c{n}", b"%d" % n)] for n in range(60)
    ]
    lasts = await asyncio.gather(*(config_log.append(records) for records in appends))
    read = await take(config_log.entries(), 4 * len(appends))
    for records, last in zip(appends, lasts, strict=True):
        assert [(e.key, e.value) for e in read[last - 3 : last + 1]] == records
    assert sorted(lasts) == list(range(3, 4 * len(appends), 4))


async def test_end_offset_is_last_appended_offset_plus_one(
    broker: Broker, config_log: KafkaConfigLog
) -> None:
    assert await config_log.end_offset() == 0
    for size in (5, 1, 7, 3):
        last = await config_log.append([(f"k{i}", b"v%d" % i) for i in range(size)])
        assert await config_log.end_offset() == last + 1
    assert last == 15
    fresh = KafkaConfigLog(broker.bootstrap, config_log.topic)  # no known end: probes from offset 0
    await fresh.open()
    try:
        assert await fresh.end_offset() == 16
    finally:
        await fresh.close()


async def test_a_second_log_on_the_same_topic_reads_every_earlier_record(broker: Broker, topic: str) -> None:
    first = KafkaConfigLog(broker.bootstrap, topic)
    second = KafkaConfigLog(broker.bootstrap, topic)
    await first.open()
    try:
        await first.append([("connector-a", b"1"), ("connector-b", b"2")])
        await first.append([("connector-a", None)])
        tail = first.entries()
        assert len(await take(tail, 3)) == 3
        await second.open()
        assert await second.end_offset() == 3
        assert await take(second.entries(), 3) == [
            LogEntry(0, "connector-a", b"1"),
            LogEntry(1, "connector-b", b"2"),
            LogEntry(2, "connector-a", None),
        ]
        # a caught-up reader also sees what another writer appends
        assert await second.append([("connector-c", b"3")]) == 3
        assert await take(tail, 1) == [LogEntry(3, "connector-c", b"3")]
    finally:
        await second.close()
        await first.close()


async def test_a_topic_with_several_partitions_is_refused(broker: Broker, topic: str) -> None:
    assert await create_topic(broker, topic, 3, **{"cleanup.policy": "compact"}) is None
    log = KafkaConfigLog(broker.bootstrap, topic)
    with pytest.raises(ConfigError) as refused:
        await log.open()
    assert str(refused.value) == (
        f"Topic '{topic}' supplied via the 'config.storage.topic' property is required to have a single "
        "partition in order to guarantee consistency of connector configurations, but found 3 partitions."
    )
    await log.close()


async def test_a_topic_that_is_not_compacted_is_refused(broker: Broker, topic: str) -> None:
    assert await create_topic(broker, topic, 1, **{"cleanup.policy": "delete"}) is None
    assert (await describe(broker, topic))[1] == "delete"
    log = KafkaConfigLog(broker.bootstrap, topic)
    with pytest.raises(
        ConfigError, match=r"required to have 'cleanup.policy=compact'.*'cleanup.policy=delete'"
    ):
        await log.open()
    await log.close()


async def test_an_existing_compacted_topic_is_used_as_is(broker: Broker, topic: str) -> None:
    assert await create_topic(broker, topic, 1, **{"cleanup.policy": "compact"}) is None
    log = KafkaConfigLog(broker.bootstrap, topic)
    await log.open()
    try:
        assert await log.append([("k", b"v")]) == 0
    finally:
        await log.close()


async def test_close_is_idempotent_safe_before_open_and_ends_the_reader(broker: Broker, topic: str) -> None:
    log = KafkaConfigLog(broker.bootstrap, topic)
    await log.close()
    await log.open()
    entries = log.entries()
    reader = asyncio.create_task(take(entries, 1))
    await log.append([("k", b"v")])
    assert await reader == [LogEntry(0, "k", b"v")]

    async def next_entry() -> LogEntry | None:
        return await anext(entries, None)

    waiting = asyncio.create_task(next_entry())
    await asyncio.sleep(0)
    await log.close()
    await log.close()
    assert await waiting is None  # the pending read ended instead of hanging
    with pytest.raises(EngineNotRunning):
        await log.append([("k", b"v")])
    with pytest.raises(EngineNotRunning):
        await log.end_offset()


async def test_one_reader_per_open(config_log: KafkaConfigLog) -> None:
    config_log.entries()
    with pytest.raises(RuntimeError, match="one reader per open"):
        config_log.entries()


async def test_an_unreachable_broker_is_a_config_log_error(topic: str) -> None:
    log = KafkaConfigLog(f"127.0.0.1:{free_port()}", topic)
    with pytest.raises(ConfigLogError, match="Could not open config topic"):
        await log.open()
    await log.close()
