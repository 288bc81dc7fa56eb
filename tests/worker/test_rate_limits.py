"""``record.rate.limit`` and ``bytes.per.second.max`` (our addition): sources paced between
polls, sinks between puts, on the engine's timers. With ``VirtualTimers`` nothing waits in real
time: the tests read how many records went through per virtual second and the throttle metrics."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from engine import Engine
from engine.errors import ConfigError
from engine.testing import VirtualTimers, eventually
from engine.topics.base import TopicPartition
from engine.topics.memory import MemoryTopics
from tests.worker.probes import SINK, SINKS, SOURCE, SOURCES, records

FAST = {"task.shutdown.graceful.timeout.ms": "1000", "offset.flush.interval.ms": "60000"}
STRINGS = {
    "value.converter": "org.apache.kafka.connect.storage.StringConverter",
    "key.converter": "org.apache.kafka.connect.storage.StringConverter",
}


@pytest.fixture(autouse=True)
def _fresh_probes() -> None:
    SOURCES.clear()
    SINKS.clear()


@pytest.fixture
def timers() -> VirtualTimers:
    return VirtualTimers()


@pytest.fixture
async def topics() -> MemoryTopics:
    made = MemoryTopics()
    await made.open()
    await made.create_topic("in", 1)
    return made


@pytest.fixture
async def engine(topics: MemoryTopics, timers: VirtualTimers) -> AsyncIterator[Engine]:
    async with Engine(FAST, topics=topics, timers=timers) as running:
        yield running


def written(topics: MemoryTopics, topic: str = "out") -> int:
    try:
        return len(topics.records(TopicPartition(topic, 0)))
    except KeyError:
        return 0


def metric(engine: Engine, name: str, connector: str) -> float:
    prefix = f'{name}{{connector="{connector}",task="0"}} '
    for line in engine.metrics.render().splitlines():
        if line.startswith(prefix):
            return float(line[len(prefix) :])
    raise AssertionError(f"no {prefix!r} in /metrics")


def source(**extra: str) -> dict[str, str]:
    return {"connector.class": SOURCE, **STRINGS, **extra}


async def test_a_source_is_paced_between_polls_by_records_per_second(
    engine: Engine, topics: MemoryTopics, timers: VirtualTimers
) -> None:
    await engine.create_connector("src", source(**{"record.rate.limit": "10"}))
    await engine.wait_for_state("src", "RUNNING", tasks=1)
    for n in range(4):
        SOURCES["src"].feed.put_nowait(records("out", [f"v{n}-{i}" for i in range(5)], start=5 * n))
    # the first batch goes at once; 5 records at 10/s: the next poll waits 0.5 virtual seconds
    await eventually(lambda: timers.pending == [0.5])
    await engine.settled()
    assert written(topics) == 5
    assert SOURCES["src"].polls == 1
    timers.advance(0.5)
    await eventually(lambda: written(topics) == 10)
    await eventually(lambda: timers.pending == [1.0])
    timers.advance(0.5)
    await eventually(lambda: written(topics) == 15)
    await eventually(lambda: metric(engine, "connect_engine_task_throttles_total", "src") == 2)
    assert metric(engine, "connect_engine_task_throttled_seconds_total", "src") == pytest.approx(1.0)


async def test_a_source_is_paced_by_bytes_per_second(
    engine: Engine, topics: MemoryTopics, timers: VirtualTimers
) -> None:
    await engine.create_connector("src", source(**{"bytes.per.second.max": "100"}))
    await engine.wait_for_state("src", "RUNNING", tasks=1)
    SOURCES["src"].feed.put_nowait(records("out", ["x" * 50, "y" * 50, "z" * 50]))  # 150 bytes: 1.5 s
    SOURCES["src"].feed.put_nowait(records("out", ["w" * 10], start=3))
    await eventually(lambda: timers.pending == [1.5])
    await engine.settled()
    assert written(topics) == 3
    timers.advance(1.5)
    await eventually(lambda: written(topics) == 4)


async def test_a_sink_is_paced_between_puts(
    engine: Engine, topics: MemoryTopics, timers: VirtualTimers
) -> None:
    producer = topics.producer()
    for i in range(5):
        await producer.send("in", None, f"r{i}".encode(), partition=0)
    config = {"connector.class": SINK, "topics": "in", **STRINGS, "record.rate.limit": "2"}
    await engine.create_connector("snk", config)
    # at most one second's records per read: puts of 2, 2, 1, one virtual second apart
    await eventually(lambda: len(SINKS["snk"].received) == 2)
    await eventually(lambda: timers.pending == [1.0])
    await engine.settled()
    assert len(SINKS["snk"].received) == 2
    timers.advance(1.0)
    await eventually(lambda: len(SINKS["snk"].received) == 4)
    await eventually(lambda: timers.pending == [2.0])
    timers.advance(1.0)
    await eventually(lambda: [r.value for r in SINKS["snk"].received] == [f"r{i}" for i in range(5)])
    assert metric(engine, "connect_engine_task_throttled_seconds_total", "snk") == pytest.approx(2.0)


async def test_a_config_update_changes_the_limit(
    engine: Engine, topics: MemoryTopics, timers: VirtualTimers
) -> None:
    await engine.create_connector("src", source(**{"record.rate.limit": "1"}))
    await engine.wait_for_state("src", "RUNNING", tasks=1)
    SOURCES["src"].feed.put_nowait(records("out", [f"a{i}" for i in range(5)]))
    await eventually(lambda: timers.pending == [5.0])  # 5 records at 1/s
    await engine.put_connector_config("src", source(**{"record.rate.limit": "1000"}))
    await engine.wait_for_state("src", "RUNNING", tasks=1)
    SOURCES["src"].feed.put_nowait(records("out", [f"b{i}" for i in range(5)], start=5))
    SOURCES["src"].feed.put_nowait(records("out", [f"c{i}" for i in range(5)], start=10))
    # the restarted task paces at 1000/s: the second batch goes without the clock moving
    await eventually(lambda: written(topics) == 10)
    await eventually(lambda: timers.pending == [pytest.approx(0.005)])
    timers.advance(0.005)
    await eventually(lambda: written(topics) == 15)


async def test_bad_limits_are_refused_with_the_key_named(engine: Engine) -> None:
    with pytest.raises(ConfigError) as refused:
        await engine.create_connector("src", source(**{"record.rate.limit": "0"}))
    assert "record.rate.limit" in str(refused.value)
    with pytest.raises(ConfigError) as refused:
        await engine.create_connector("src", source(**{"bytes.per.second.max": "lots"}))
    assert "bytes.per.second.max" in str(refused.value)
