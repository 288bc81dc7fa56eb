"""A source connector's dead letter queue (our addition: Connect's ``errors.deadletterqueue.*`` is
sink-only): what the DLQ topic holds, its headers, the committed offsets and the metrics."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest

from engine import Engine
from engine.api import SourceRecord
from engine.data.schema import Schema
from engine.storage.offsets import MemoryOffsetStore
from engine.testing import eventually
from engine.topics.base import TopicPartition
from engine.topics.memory import MemoryTopics
from tests.worker.probes import SOURCE, SOURCES, records

FAST = {"task.shutdown.graceful.timeout.ms": "1000", "offset.flush.interval.ms": "60000"}
SCHEMALESS = {
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter.schemas.enable": "false",
    "key.converter": "org.apache.kafka.connect.storage.StringConverter",
}
EXTRACT_ID = {
    "transforms": "id",
    "transforms.id.type": "org.apache.kafka.connect.transforms.ExtractField$Value",
    "transforms.id.field": "id",
}
DLQ = {
    "errors.tolerance": "all",
    "errors.deadletterqueue.topic.name": "src-dlq",
    "errors.deadletterqueue.context.headers.enable": "true",
}


@pytest.fixture(autouse=True)
def _fresh_probes() -> None:
    SOURCES.clear()


@pytest.fixture
def topics() -> MemoryTopics:
    return MemoryTopics()


@pytest.fixture
def offsets() -> MemoryOffsetStore:
    return MemoryOffsetStore()


@pytest.fixture
async def engine(topics: MemoryTopics, offsets: MemoryOffsetStore) -> AsyncIterator[Engine]:
    async with Engine(FAST, topics=topics, offset_store=offsets) as running:
        yield running


def held(
    topics: MemoryTopics, topic: str
) -> list[tuple[bytes | None, bytes | None, dict[str, bytes | None]]]:
    try:
        return [(r.key, r.value, dict(r.headers)) for r in topics.records(TopicPartition(topic, 0))]
    except KeyError:
        return []


def metric(engine: Engine, name: str, connector: str) -> float:
    prefix = f'kafka_connect_task_error_{name}{{connector="{connector}",task="0"}} '
    for line in engine.metrics.render().splitlines():
        if line.startswith(prefix):
            return float(line[len(prefix) :])
    raise AssertionError(f"no {prefix!r} in /metrics")


async def test_a_record_a_transformation_fails_on_goes_to_the_dlq_and_its_offset_is_committed(
    engine: Engine, topics: MemoryTopics, offsets: MemoryOffsetStore
) -> None:
    await engine.create_connector("src", {"connector.class": SOURCE, **SCHEMALESS, **EXTRACT_ID, **DLQ})
    await engine.wait_for_state("src", "RUNNING", tasks=1)
    assert "src-dlq" in await topics.list_topics()  # made when the task started
    SOURCES["src"].feed.put_nowait(records("orders", [{"id": 1}, "not a map", {"id": 3}]))
    await eventually(lambda: len(SOURCES["src"].committed_records) == 3)
    assert [json.loads(v or b"") for _, v, _ in held(topics, "orders")] == [1, 3]
    [(_, value, headers)] = held(topics, "src-dlq")
    assert json.loads(value or b"") == "not a map"  # as the task's converter writes it, before any SMT
    assert headers["__connect.errors.topic"] == b"orders"
    assert headers["__connect.errors.connector.name"] == b"src"
    assert headers["__connect.errors.task.id"] == b"0"
    assert headers["__connect.errors.stage"] == b"TRANSFORMATION"
    assert headers["__connect.errors.exception.class.name"] == b"engine.api.errors.DataException"
    assert json.loads(headers["__connect.errors.source.partition"] or b"") == {"part": "p0"}
    assert json.loads(headers["__connect.errors.source.offset"] or b"") == {"n": 2}
    assert metric(engine, "deadletterqueue_produce_requests", "src") == 1
    assert metric(engine, "deadletterqueue_produce_failures", "src") == 0
    assert metric(engine, "total_records_skipped", "src") == 1


async def test_the_offset_of_a_dead_lettered_last_record_is_committed(
    engine: Engine, offsets: MemoryOffsetStore, topics: MemoryTopics
) -> None:
    """The failed record is the last of its partition: no later record carries the offset past it."""
    await engine.create_connector("src", {"connector.class": SOURCE, **SCHEMALESS, **EXTRACT_ID, **DLQ})
    await engine.wait_for_state("src", "RUNNING", tasks=1)
    SOURCES["src"].feed.put_nowait(records("orders", [{"id": 1}, "not a map"]))
    await eventually(lambda: len(held(topics, "src-dlq")) == 1)
    await engine.stop_connector("src")
    await engine.wait_for_state("src", "STOPPED")
    assert offsets.get("src", {"part": "p0"}) == {"n": 2}


async def test_a_record_the_converter_fails_on_goes_to_the_dlq_with_its_stage(
    engine: Engine, topics: MemoryTopics
) -> None:
    """A value the JSON converter refuses (it does not match its schema): the record still reaches the
    DLQ (value null, nothing could write it), with the stage and the exception in its headers."""
    await engine.create_connector("src", {"connector.class": SOURCE, **SCHEMALESS, **DLQ})
    await engine.wait_for_state("src", "RUNNING", tasks=1)
    bad = SourceRecord(
        topic="orders",
        key="k",
        value_schema=Schema.INT32_SCHEMA,
        value="not an int",
        source_partition={"part": "p0"},
        source_offset={"n": 1},
    )
    SOURCES["src"].feed.put_nowait([bad, *records("orders", [{"id": 2}], start=1)])
    await eventually(lambda: len(SOURCES["src"].committed_records) == 2)
    [(key, value, headers)] = held(topics, "src-dlq")
    assert (key, value) == (b"k", None)
    assert headers["__connect.errors.stage"] == b"VALUE_CONVERTER"
    assert headers["__connect.errors.class.name"] == b"engine.converters.json_converter.JsonConverter"
    assert [json.loads(v or b"") for _, v, _ in held(topics, "orders")] == [{"id": 2}]


async def test_without_context_headers_the_dlq_record_has_only_its_own_headers(
    engine: Engine, topics: MemoryTopics
) -> None:
    config = {
        "connector.class": SOURCE,
        **SCHEMALESS,
        **EXTRACT_ID,
        **DLQ,
        "errors.deadletterqueue.context.headers.enable": "false",
    }
    await engine.create_connector("src", config)
    await engine.wait_for_state("src", "RUNNING", tasks=1)
    SOURCES["src"].feed.put_nowait(records("orders", ["not a map"]))
    await eventually(lambda: len(held(topics, "src-dlq")) == 1)
    assert held(topics, "src-dlq")[0][2] == {}


async def test_a_dlq_that_refuses_the_record_fails_the_task_before_its_offset_is_committed(
    offsets: MemoryOffsetStore,
) -> None:
    topics = MemoryTopics(auto_create=False)
    await topics.open()
    await topics.create_topic("orders", 1)
    async with Engine(FAST, topics=topics, offset_store=offsets) as engine:
        await engine.create_connector("src", {"connector.class": SOURCE, **SCHEMALESS, **EXTRACT_ID, **DLQ})
        await engine.wait_for_state("src", "RUNNING", tasks=1)
        del topics._topics["src-dlq"]  # the DLQ vanished after the task made it: sends to it fail
        SOURCES["src"].feed.put_nowait(records("orders", [{"id": 1}, "not a map"]))
        await engine.wait_for_state("src", "RUNNING", tasks=["FAILED"])
        trace = (await engine.connector_status("src"))["tasks"][0]["trace"]
        assert "could not be written to the dead letter queue" in trace
        assert offsets.get("src", {"part": "p0"}) != {"n": 2}
        assert metric(engine, "deadletterqueue_produce_failures", "src") == 1


async def test_source_connectors_list_the_dlq_keys(engine: Engine) -> None:
    from engine.validation.framework_keys import SOURCE_CONFIG_DEF

    assert {
        "errors.deadletterqueue.topic.name",
        "errors.deadletterqueue.topic.replication.factor",
        "errors.deadletterqueue.context.headers.enable",
    } <= set(SOURCE_CONFIG_DEF.config_keys)


async def test_a_skipped_last_record_without_a_dlq_has_its_offset_committed_too(
    engine: Engine, offsets: MemoryOffsetStore, topics: MemoryTopics
) -> None:
    """Connect's recordDropped (KAFKA-14079): tolerated and filtered records are not polled again."""
    await engine.create_connector(
        "src", {"connector.class": SOURCE, **SCHEMALESS, **EXTRACT_ID, "errors.tolerance": "all"}
    )
    await engine.wait_for_state("src", "RUNNING", tasks=1)
    SOURCES["src"].feed.put_nowait(records("orders", [{"id": 1}, "not a map"]))
    await eventually(lambda: len(SOURCES["src"].committed_records) == 2)
    await engine.stop_connector("src")
    await engine.wait_for_state("src", "STOPPED")
    assert offsets.get("src", {"part": "p0"}) == {"n": 2}
    assert [json.loads(v or b"") for _, v, _ in held(topics, "orders")] == [1]
