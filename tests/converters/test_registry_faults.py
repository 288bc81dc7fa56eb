"""A slow, failing or absent schema registry, between a real registry (Apicurio) and the engine:
the registry client retries and fails over without ever blocking the event loop, so other tasks'
data keeps flowing, and a registry down for good fails the task with the subject or the schema id
and the registry's own answer."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from engine import Engine
from engine.api.records import SourceRecord
from engine.converters.registry.avro import AvroConverter
from engine.converters.registry.client import RetryPolicy, SchemaRegistryClient
from engine.data.builder import SchemaBuilder
from engine.data.schema import Schema
from engine.data.values import Struct
from engine.testing import eventually
from engine.topics.base import TopicPartition
from engine.topics.memory import MemoryTopics
from tests.converters.faulty_registry import DOWN_MESSAGE, FaultyRegistry
from tests.schema_registry import free_port
from tests.worker.probes import SINK, SINKS, SOURCE, SOURCES, records

pytestmark = pytest.mark.timeout(240)  # the first test to ask for the registry may fetch and start it

AVRO = "io.confluent.connect.avro.AvroConverter"
STRING = "org.apache.kafka.connect.storage.StringConverter"
ORDER = SchemaBuilder.struct().name("shop.Order").field("id", Schema.INT64_SCHEMA).build()
WORKER = {"task.shutdown.graceful.timeout.ms": "2000"}


@pytest.fixture(autouse=True)
def _fresh_probes() -> Iterator[None]:
    SOURCES.clear()
    SINKS.clear()
    yield
    SOURCES.clear()
    SINKS.clear()


def _converters(value: str, url: str | None = None, **extra: str) -> dict[str, str]:
    props = {"key.converter": STRING, "value.converter": value}
    if url is not None:
        props["value.converter.schema.registry.url"] = url
    props.update({f"value.converter.{k.replace('_', '.')}": v for k, v in extra.items()})
    return props


def _order(topic: str, n: int) -> SourceRecord:
    return SourceRecord(
        topic=topic,
        value_schema=ORDER,
        value=Struct(ORDER).put("id", n),
        source_partition={"part": "p0"},
        source_offset={"n": n},
    )


@pytest.mark.parametrize("fail_first", [0, 2], ids=["slow", "slow_and_503_twice"])
async def test_a_slow_or_failing_registry_does_not_stall_another_tasks_data(
    schema_registry_url: str, fail_first: int
) -> None:
    faulty = FaultyRegistry(schema_registry_url, fail_first=fail_first, hold=True)
    with faulty.running():
        async with Engine(WORKER) as engine:
            await engine.create_connector(
                "orders", {"connector.class": SOURCE, **_converters(AVRO, faulty.url, retries_wait_ms="10")}
            )
            await engine.create_connector("events", {"connector.class": SOURCE, **_converters(STRING)})
            await engine.create_connector(
                "events-out", {"connector.class": SINK, "topics": "events", **_converters(STRING)}
            )
            await engine.create_connector(
                "orders-out",
                {"connector.class": SINK, "topics": "orders", **_converters(AVRO, schema_registry_url)},
            )
            await engine.wait_for_state("orders", "RUNNING", tasks=1)
            await engine.wait_for_state("events", "RUNNING", tasks=1)
            SOURCES["orders"].feed.put_nowait([_order("orders", 1)])
            await eventually(faulty.held.is_set, timeout=30)  # the registration waits in the registry
            SOURCES["events"].feed.put_nowait(records("events", ["a", "b"]))
            await eventually(
                lambda: [r.value for r in SINKS["events-out"].received] == ["a", "b"], timeout=30
            )
            assert not SINKS["orders-out"].received  # still waiting for its schema
            faulty.release.set()
            await eventually(lambda: len(SINKS["orders-out"].received) == 1, timeout=30)
            assert SINKS["orders-out"].received[0].value == Struct(ORDER).put("id", 1)
            status = await engine.connector_status("orders")
            assert status["tasks"][0]["state"] == "RUNNING"
    assert faulty.failed == fail_first


async def _failed_trace(engine: Engine, name: str) -> str:
    async def failed() -> bool:
        return bool((await engine.connector_status(name))["tasks"][0]["state"] == "FAILED")

    await eventually(failed, timeout=30)
    return str((await engine.connector_status(name))["tasks"][0]["trace"])


async def test_a_registry_down_for_good_fails_the_source_task_naming_the_subject_and_its_answer(
    schema_registry_url: str,
) -> None:
    faulty = FaultyRegistry(schema_registry_url, fail_first=10**6)
    with faulty.running():
        async with Engine(WORKER) as engine:
            props = _converters(AVRO, faulty.url, max_retries="2", retries_wait_ms="10")
            await engine.create_connector("orders", {"connector.class": SOURCE, **props})
            await engine.wait_for_state("orders", "RUNNING", tasks=1)
            SOURCES["orders"].feed.put_nowait([_order("orders", 1)])
            trace = await _failed_trace(engine, "orders")
    assert "subject orders-value" in trace
    assert DOWN_MESSAGE in trace
    assert "error code: 50301" in trace
    assert "gave up after 3 attempts" in trace
    assert faulty.requests == 3


async def test_a_registry_down_for_good_fails_the_sink_task_naming_the_schema_id_and_its_answer(
    schema_registry_url: str,
) -> None:
    writer = AvroConverter()
    writer.configure({"schema.registry.url": schema_registry_url}, False)
    framed = writer.from_connect_data("orders", ORDER, Struct(ORDER).put("id", 1))
    assert framed is not None
    schema_id = int.from_bytes(framed[1:5], "big")
    faulty = FaultyRegistry(schema_registry_url, fail_first=10**6)
    with faulty.running():
        async with Engine(WORKER) as engine:
            raw = "org.apache.kafka.connect.converters.ByteArrayConverter"
            await engine.create_connector("feed", {"connector.class": SOURCE, **_converters(raw)})
            props = _converters(AVRO, faulty.url, max_retries="1", retries_wait_ms="10")
            await engine.create_connector(
                "orders-out", {"connector.class": SINK, "topics": "orders", **props}
            )
            await engine.wait_for_state("feed", "RUNNING", tasks=1)
            SOURCES["feed"].feed.put_nowait(
                [
                    SourceRecord(
                        topic="orders",
                        value_schema=Schema.BYTES_SCHEMA,
                        value=framed,
                        source_partition={"part": "p0"},
                        source_offset={"n": 1},
                    )
                ]
            )
            trace = await _failed_trace(engine, "orders-out")
    assert f"schema for id {schema_id}" in trace
    assert DOWN_MESSAGE in trace
    assert "gave up after 2 attempts" in trace


async def test_the_client_fails_over_to_the_next_url_and_retries_a_503(schema_registry_url: str) -> None:
    faulty = FaultyRegistry(schema_registry_url, fail_first=1)
    dead = f"http://127.0.0.1:{free_port()}"
    with faulty.running():
        client = SchemaRegistryClient([dead, faulty.url], retry=RetryPolicy(3, 10, 100))
        schema_id = await client.aregister("faults-failover-value", '"string"', "AVRO")
        # round 1: dead (refused), faulty (503); round 2: dead, faulty (the answer)
        assert client.requests == 4
        again: Any = await client.aby_id(schema_id)
        assert again.schema == '"string"'
        assert client.requests == 4  # cached: the registration knows the schema


async def test_a_source_record_an_smt_fails_on_reaches_the_dlq_in_avro_once_its_schema_is_registered(
    schema_registry_url: str,
) -> None:
    """The record fails before its schema was ever registered (in an SMT), so rendering it for the dead
    letter queue is the converter's first call, and the registry answers only once released: the DLQ
    waits for it as a passing record does, and holds Avro (magic byte, schema id), not JSON."""
    faulty = FaultyRegistry(schema_registry_url, hold=True)
    topics = MemoryTopics()
    with faulty.running():
        async with Engine(WORKER, topics=topics) as engine:
            props = {
                "connector.class": SOURCE,
                **_converters(AVRO, faulty.url),
                "transforms": "id",
                "transforms.id.type": "org.apache.kafka.connect.transforms.ExtractField$Value",
                "transforms.id.field": "missing",  # fails on every record: "Unknown field"
                "errors.tolerance": "all",
                "errors.deadletterqueue.topic.name": "orders-dlq",
                "errors.deadletterqueue.context.headers.enable": "true",
            }
            await engine.create_connector("orders", props)
            await engine.wait_for_state("orders", "RUNNING", tasks=1)
            SOURCES["orders"].feed.put_nowait([_order("orders", 7)])
            await eventually(faulty.held.is_set, timeout=30)  # the registration waits in the registry
            assert not _held(topics, "orders-dlq")
            faulty.release.set()
            await eventually(lambda: len(_held(topics, "orders-dlq")) == 1, timeout=30)
            [(value, headers)] = _held(topics, "orders-dlq")
            status = await engine.connector_status("orders")
    assert headers["__connect.errors.stage"] == b"TRANSFORMATION"
    assert value is not None
    assert value[:1] == b"\x00"  # Confluent's framing, not JsonConverter's envelope
    reader = AvroConverter()
    reader.configure({"schema.registry.url": schema_registry_url}, False)
    assert reader.to_connect_data("orders", value).value == _order("orders", 7).value
    assert status["tasks"][0]["state"] == "RUNNING"


def _held(topics: MemoryTopics, topic: str) -> list[tuple[bytes | None, dict[str, bytes | None]]]:
    try:
        return [(r.value, dict(r.headers)) for r in topics.records(TopicPartition(topic, 0))]
    except KeyError:
        return []
