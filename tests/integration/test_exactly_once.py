"""Exactly-once source support (KIP-618) on Apache Kafka 4.1: records and offsets in one transaction,
connector-defined boundaries, a crash mid-transaction, a zombie fenced, all read back with
``read_committed``; the first test again on Kafka 3.9. tansu rejects InitProducerId, which must fail
the task with a clear trace rather than fall back silently.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping
from pathlib import Path

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from engine import Engine
from engine.api import ConnectorTransactionBoundaries, ExactlyOnceSupport, SourceRecord, Task
from engine.errors import ConfigError
from engine.testing.cluster import poll_until
from engine.worker.exactly_once import NO_BOUNDARIES, NO_PREFLIGHT
from tests.integration.brokers import Broker, running_broker
from tests.worker.probes import SOURCE, SOURCES, ProbeSourceConnector, ProbeSourceTask, records

pytestmark = pytest.mark.integration

STRINGS = {"value.converter": "org.apache.kafka.connect.storage.StringConverter",
           "key.converter": "org.apache.kafka.connect.storage.StringConverter"}
BOUNDED = f"{__name__}.BoundedSourceConnector"


class BoundedSourceTask(ProbeSourceTask):
    """Ends transactions itself: a batch holding "COMMIT" or "ABORT" asks for that."""

    async def poll(self) -> list[SourceRecord] | None:
        batch = await super().poll()
        control = self.context.transaction_context()
        assert control is not None
        for record in batch or []:
            if record.value == "COMMIT":
                control.commit_transaction()
            elif record.value == "ABORT":
                control.abort_transaction()
        return batch


class BoundedSourceConnector(ProbeSourceConnector):
    async def task_class(self) -> type[Task]:  # type: ignore[override]  # user code may be async (docs/ARCHITECTURE.md, decision 7)
        return BoundedSourceTask

    def exactly_once_support(self, connector_config: Mapping[str, str]) -> ExactlyOnceSupport | None:
        return ExactlyOnceSupport.SUPPORTED

    def can_define_transaction_boundaries(self, connector_config: Mapping[str, str]) -> ConnectorTransactionBoundaries:
        return ConnectorTransactionBoundaries.SUPPORTED


@pytest.fixture(autouse=True)
def _fresh_probes() -> None:
    SOURCES.clear()


def worker(broker: Broker, tag: str, **extra: str) -> dict[str, str]:
    return {"bootstrap.servers": broker.bootstrap, "config.storage.topic": f"configs-{tag}",
            "offset.storage.topic": f"offsets-{tag}", "exactly.once.source.support": "enabled",
            "task.shutdown.graceful.timeout.ms": "5000", **extra}


async def committed_offset(engine: Engine, name: str, n: int) -> None:
    """Wait until the task's transaction holding offset ``n`` has committed.

    Readers start only then, so what they see is settled.
    """
    async def reached() -> bool:
        offsets = (await engine.connector_offsets(name))["offsets"]
        return bool(offsets) and offsets[0]["offset"]["n"] >= n
    await poll_until(reached, timeout=30, what=f"offset {n} of {name} committed")


async def committed_values(broker: Broker, topic: str, *, expect: int, settle: float = 1.0) -> list[str]:
    """What a read_committed consumer sees on ``topic`` (one partition): reads until it has ``expect``
    values or has read everything decided (its position at the last stable offset, and no transaction
    open: LSO = high watermark), then ``settle`` s more."""
    partition = TopicPartition(topic, 0)
    consumer = AIOKafkaConsumer(bootstrap_servers=broker.bootstrap, isolation_level="read_committed",
                                auto_offset_reset="earliest", enable_auto_commit=False, group_id=None)
    await consumer.start()
    consumer.assign([partition])
    seen: list[str] = []

    async def read() -> None:
        for batch in (await consumer.getmany(timeout_ms=200)).values():
            seen.extend(r.value.decode() for r in batch)

    async def settled() -> bool:
        stable, high = consumer.last_stable_offset(partition), consumer.highwater(partition)
        return stable is not None and stable == high and await consumer.position(partition) >= stable

    try:
        deadline = asyncio.get_running_loop().time() + 30
        while len(seen) < expect and asyncio.get_running_loop().time() < deadline:
            await read()
            if await settled():
                break
        end = asyncio.get_running_loop().time() + settle
        while asyncio.get_running_loop().time() < end:
            await read()
    finally:
        await consumer.stop()
    return seen


@pytest.mark.parametrize("name", ["kafka", "kafka-3.9"])
async def test_each_poll_is_one_transaction_with_its_offsets(name: str, request: pytest.FixtureRequest) -> None:
    kafka: Broker = request.getfixturevalue("kafka" if name == "kafka" else "kafka_3_9")
    tag = uuid.uuid4().hex[:10]
    topic = f"eos-{tag}"
    async with Engine(worker(kafka, tag)) as engine:
        await engine.topics.create_topic(topic, 1)
        await engine.create_connector("src", {"connector.class": SOURCE, **STRINGS})
        await engine.wait_for_state("src", "RUNNING", tasks=1)
        SOURCES["src"].feed.put_nowait(records(topic, ["a", "b", "c"]))
        SOURCES["src"].feed.put_nowait(records(topic, ["d", "e"], start=3))
        assert await committed_values(kafka, topic, expect=5) == ["a", "b", "c", "d", "e"]
        offsets = await engine.connector_offsets("src")
        assert offsets == {"offsets": [{"partition": {"part": "p0"}, "offset": {"n": 5}}]}
    async with Engine(worker(kafka, tag)) as engine:  # the offsets came back from the offsets topic
        await engine.wait_for_state("src", "RUNNING", tasks=1)
        assert SOURCES["src"].starts[-1] == {"n": 5}


async def test_connector_defined_boundaries_commit_and_abort(kafka: Broker) -> None:
    tag = uuid.uuid4().hex[:10]
    topic = f"eos-{tag}"
    async with Engine(worker(kafka, tag)) as engine:
        await engine.topics.create_topic(topic, 1)
        await engine.create_connector("tx", {"connector.class": BOUNDED, "transaction.boundary": "connector",
                                             "exactly.once.support": "required", **STRINGS})
        await engine.wait_for_state("tx", "RUNNING", tasks=1)
        feed = SOURCES["tx"].feed
        feed.put_nowait(records(topic, ["a", "b"]))  # stays open...
        feed.put_nowait(records(topic, ["c", "ABORT"], start=2))  # ...and is thrown away with these
        feed.put_nowait(records(topic, ["d", "COMMIT"], start=4))
        await committed_offset(engine, "tx", 6)
        assert await committed_values(kafka, topic, expect=2) == ["d", "COMMIT"]
        offsets = await engine.connector_offsets("tx")
        assert offsets["offsets"] == [{"partition": {"part": "p0"}, "offset": {"n": 6}}]


async def test_an_interval_boundary_commits_on_time(kafka: Broker) -> None:
    tag = uuid.uuid4().hex[:10]
    topic = f"eos-{tag}"
    async with Engine(worker(kafka, tag)) as engine:
        await engine.topics.create_topic(topic, 1)
        await engine.create_connector("iv", {"connector.class": SOURCE, "transaction.boundary": "interval",
                                             "transaction.boundary.interval.ms": "300", **STRINGS})
        await engine.wait_for_state("iv", "RUNNING", tasks=1)
        SOURCES["iv"].feed.put_nowait(records(topic, ["x", "y"]))
        assert await committed_values(kafka, topic, expect=2) == ["x", "y"]


async def test_a_crash_mid_transaction_leaves_neither_records_nor_offsets(kafka: Broker) -> None:
    tag = uuid.uuid4().hex[:10]
    topic = f"eos-{tag}"
    config = {"connector.class": BOUNDED, "transaction.boundary": "connector", **STRINGS}
    async with Engine(worker(kafka, tag)) as engine:
        await engine.topics.create_topic(topic, 1)
        await engine.create_connector("crash", config)
        await engine.wait_for_state("crash", "RUNNING", tasks=1)
        SOURCES["crash"].feed.put_nowait(records(topic, ["kept", "COMMIT"]))
        await committed_offset(engine, "crash", 2)
        SOURCES["crash"].feed.put_nowait(records(topic, ["lost"], start=2))  # sent, never committed
        await asyncio.sleep(0.5)
        await engine.abort()
    async with Engine(worker(kafka, tag)) as engine:  # its producer's start fences and aborts the old one
        await engine.wait_for_state("crash", "RUNNING", tasks=1)
        assert SOURCES["crash"].starts[-1] == {"n": 2}
        assert await committed_values(kafka, topic, expect=3) == ["kept", "COMMIT"]


async def test_a_fenced_task_fails_instead_of_writing_twice(kafka: Broker) -> None:
    tag = uuid.uuid4().hex[:10]
    topic = f"eos-{tag}"
    async with Engine(worker(kafka, tag)) as engine:
        await engine.topics.create_topic(topic, 1)
        await engine.create_connector("z", {"connector.class": BOUNDED, "transaction.boundary": "connector",
                                            **STRINGS})
        await engine.wait_for_state("z", "RUNNING", tasks=1)
        SOURCES["z"].feed.put_nowait(records(topic, ["open"]))
        await asyncio.sleep(0.5)
        zombie_killer = AIOKafkaProducer(bootstrap_servers=kafka.bootstrap, transactional_id="connect-engine-z-0")
        await zombie_killer.start()  # a newer generation of task z-0: the running one is fenced
        await zombie_killer.stop()
        SOURCES["z"].feed.put_nowait(records(topic, ["COMMIT"], start=1))
        status = await engine.wait_for_state("z", "RUNNING", tasks=["FAILED"])
        assert status is not None
        assert "ProducerFenced" in status["tasks"][0]["trace"]
    assert await committed_values(kafka, topic, expect=1, settle=0.5) == []


async def test_validation_refuses_what_the_connector_cannot_promise(kafka: Broker) -> None:
    tag = uuid.uuid4().hex[:10]
    async with Engine(worker(kafka, tag)) as engine:
        with pytest.raises(ConfigError) as required:
            await engine.create_connector("r", {"connector.class": SOURCE, "exactly.once.support": "required"})
        assert required.value.errors == {"exactly.once.support": [NO_PREFLIGHT]}
        with pytest.raises(ConfigError) as boundary:
            await engine.create_connector("b", {"connector.class": SOURCE, "transaction.boundary": "connector"})
        assert boundary.value.errors == {"transaction.boundary": [NO_BOUNDARIES]}
        with pytest.raises(ConfigError, match=r"may only be set when transaction\.boundary is interval"):
            await engine.create_connector("i", {"connector.class": SOURCE, "transaction.boundary.interval.ms": "5"})


def test_the_worker_switch_needs_offsets_on_kafka() -> None:
    with pytest.raises(ConfigError, match="needs records and source offsets on Kafka"):
        Engine({"exactly.once.source.support": "enabled"})
    with pytest.raises(ConfigError, match="String must be one of: disabled, preparing, enabled"):
        Engine({"exactly.once.source.support": "sometimes"})


async def test_a_broker_without_transactions_fails_the_task_and_says_so(tmp_path: Path) -> None:
    tag = uuid.uuid4().hex[:10]
    with running_broker("tansu") as tansu:
        async with Engine(worker(tansu, tag)) as engine:
            await engine.create_connector("t", {"connector.class": SOURCE, **STRINGS})
            status = await engine.wait_for_state("t", "RUNNING", tasks=["FAILED"])
            assert status is not None
            trace = status["tasks"][0]["trace"]
            assert "does not support transactions" in trace
            assert "exactly.once.source.support" in trace
