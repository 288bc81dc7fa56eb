"""Source -> Kafka -> sink with the schema-registry converters and a real registry (Apicurio), on noida and
Apache Kafka 4.1; the topic's bytes are read back with Confluent's own deserializer; bad records go to the DLQ
with their coordinates and schema id, and the registry's credentials never reach a log line.
"""

from __future__ import annotations

import datetime as dt
import decimal
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext
from structlog.testing import capture_logs

from engine import Engine
from engine.api.records import SourceRecord
from engine.data.builder import SchemaBuilder
from engine.data.logical import Decimal, Timestamp
from engine.data.schema import Schema
from engine.data.values import Struct
from engine.testing import eventually
from tests.integration.brokers import running_broker
from tests.worker.probes import SINK, SINKS, SOURCE, SOURCES

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]  # first use may fetch the registry

SECRET = "registry-pw-4b1d"
VALUE = (
    SchemaBuilder.struct()
    .name("shop.Order")
    .field("id", Schema.INT64_SCHEMA)
    .field("note", Schema.OPTIONAL_STRING_SCHEMA)
    .field("amount", Decimal.schema(2))
    .field("at", Timestamp.schema())
    .field("lines", SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.STRING_SCHEMA).build())
    .build()
)
KEY = SchemaBuilder.struct().name("shop.OrderKey").field("id", Schema.INT64_SCHEMA).build()


@pytest.fixture(autouse=True)
def _fresh_probes() -> None:
    SOURCES.clear()
    SINKS.clear()


@pytest.fixture(scope="module", params=["noida", "apache-kafka-4.1"])
def bootstrap(request: pytest.FixtureRequest) -> Iterator[str]:
    """noida (started here) and the session's Apache Kafka 4.1 (``tests/kafka_servers.py``)."""
    if request.param == "noida":
        with running_broker("noida") as started:
            yield started.bootstrap
    else:
        yield request.getfixturevalue("kafka41").bootstrap_servers()


def _converters(url: str, name: str) -> dict[str, str]:
    props = {}
    for side in ("key", "value"):
        props[f"{side}.converter"] = name
        props[f"{side}.converter.schema.registry.url"] = url
        props[f"{side}.converter.basic.auth.credentials.source"] = "USER_INFO"
        props[f"{side}.converter.basic.auth.user.info"] = f"engine:{SECRET}"
    return props


def _order(n: int) -> tuple[Struct, Struct]:
    value = (
        Struct(VALUE)
        .put("id", n)
        .put("note", None if n % 2 else f"n{n}")
        .put("amount", decimal.Decimal(f"{n}.25"))
        .put("at", dt.datetime(2024, 5, n + 1, tzinfo=dt.UTC))
        .put("lines", {n: "x"})
    )
    return Struct(KEY).put("id", n), value


def _plain(value: Any) -> Any:
    if isinstance(value, Struct):
        return {f.name: _plain(value.get(f.name)) for f in value.schema.fields}
    return value


def _worker(bootstrap: str, tmp_path: Path, suffix: str) -> dict[str, str]:
    return {
        "bootstrap.servers": bootstrap,
        "config.storage.topic": f"configs-{suffix}",
        "offset.storage.file.filename": str(tmp_path / "offsets"),
        "consumer.session.timeout.ms": "6000",
        "task.shutdown.graceful.timeout.ms": "5000",
    }


@pytest.mark.parametrize(
    "converter",
    [
        "io.confluent.connect.avro.AvroConverter",
        "io.confluent.connect.json.JsonSchemaConverter",
        "io.confluent.connect.protobuf.ProtobufConverter",
    ],
)
async def test_records_flow_source_kafka_sink_through_the_registry(
    bootstrap: str, tmp_path: Path, schema_registry_url: str, converter: str
) -> None:
    suffix = uuid.uuid4().hex[:10]
    topic = f"orders-{suffix}"
    converters = _converters(schema_registry_url, converter)
    orders = [_order(n) for n in range(5)]
    with capture_logs() as logs:
        async with Engine(_worker(bootstrap, tmp_path, suffix)) as engine:
            await engine.topics.create_topic(topic, 1)
            await engine.create_connector("src", {"connector.class": SOURCE, **converters})
            await engine.create_connector("snk", {"connector.class": SINK, "topics": topic, **converters})
            await engine.wait_for_state("src", "RUNNING", tasks=1)
            SOURCES["src"].feed.put_nowait(
                [
                    SourceRecord(
                        topic=topic,
                        key_schema=KEY,
                        key=k,
                        value_schema=VALUE,
                        value=v,
                        source_partition={"p": 0},
                        source_offset={"n": i},
                    )
                    for i, (k, v) in enumerate(orders)
                ]
            )
            await eventually(lambda: len(SINKS["snk"].received) == len(orders), timeout=30)
            received = SINKS["snk"].received
            assert [_plain(r.value) for r in received] == [_plain(v) for _, v in orders]
            assert [_plain(r.key) for r in received] == [_plain(k) for k, _ in orders]
            if not converter.endswith("ProtobufConverter"):  # Protobuf adds its field tags as parameters
                assert [r.value for r in received] == [v for _, v in orders]
            assert received[0].value_schema.name == "shop.Order"
            assert received[0].value_schema.field("amount").schema.name == Decimal.LOGICAL_NAME
    assert SECRET not in repr(logs)
    if converter.endswith("AvroConverter"):
        await _confluent_reads_the_topic(bootstrap, topic, schema_registry_url, orders)


async def _confluent_reads_the_topic(
    bootstrap: str, topic: str, url: str, orders: list[tuple[Struct, Struct]]
) -> None:
    consumer = AIOKafkaConsumer(
        topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest", enable_auto_commit=False
    )
    await consumer.start()
    try:
        got: list[Any] = []
        while len(got) < len(orders):
            batch = await consumer.getmany(timeout_ms=2000)
            got.extend(m for messages in batch.values() for m in messages)
    finally:
        await consumer.stop()
    with SchemaRegistryClient({"url": url}) as client:
        deserialize = AvroDeserializer(client)
        ctx = SerializationContext(topic, MessageField.VALUE)
        values = [deserialize(m.value, ctx) for m in got]
    assert [v["id"] for v in values] == [v.get("id") for _, v in orders]
    assert values[1]["amount"] == decimal.Decimal("1.25")
    assert values[2]["lines"] == [{"key": 2, "value": "x"}]


async def test_bad_records_go_to_the_dead_letter_queue_with_topic_partition_offset_and_schema_id(
    bootstrap: str, tmp_path: Path, schema_registry_url: str
) -> None:
    suffix = uuid.uuid4().hex[:10]
    topic, dlq = f"orders-{suffix}", f"dlq-{suffix}"
    converters = _converters(schema_registry_url, "io.confluent.connect.avro.AvroConverter")
    converters["key.converter"] = "org.apache.kafka.connect.storage.StringConverter"
    from engine.converters.registry.avro import AvroConverter

    good_converter = AvroConverter()
    good_converter.configure({"schema.registry.url": schema_registry_url}, False)
    good = good_converter.from_connect_data(topic, VALUE, _order(1)[1])
    unknown_id = b"\x00" + (424242).to_bytes(4, "big") + b"\x02"
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap)
    await producer.start()
    try:
        for value in (b"\x07not-avro", unknown_id, good):
            await producer.send_and_wait(topic, value, key=b"k", partition=0)
    finally:
        await producer.stop()
    with capture_logs() as logs:
        async with Engine(_worker(bootstrap, tmp_path, suffix)) as engine:
            await engine.create_connector(
                "snk",
                {
                    "connector.class": SINK,
                    "topics": topic,
                    **converters,
                    "errors.tolerance": "all",
                    "errors.log.enable": "true",
                    "errors.deadletterqueue.topic.name": dlq,
                    "errors.deadletterqueue.topic.replication.factor": "1",
                    "errors.deadletterqueue.context.headers.enable": "true",
                    "consumer.auto.offset.reset": "earliest",
                },
            )
            await eventually(lambda: len(SINKS["snk"].received) == 1, timeout=30)
            assert SINKS["snk"].received[0].value == _order(1)[1]
            consumer = AIOKafkaConsumer(dlq, bootstrap_servers=bootstrap, auto_offset_reset="earliest")
            await consumer.start()
            try:
                dead: list[Any] = []
                while len(dead) < 2:
                    batch = await consumer.getmany(timeout_ms=2000)
                    dead.extend(m for messages in batch.values() for m in messages)
            finally:
                await consumer.stop()
    headers = [{k: v.decode() for k, v in m.headers} for m in dead]
    assert [m.value for m in dead] == [b"\x07not-avro", unknown_id]
    assert [h["__connect.errors.offset"] for h in headers] == ["0", "1"]
    assert {h["__connect.errors.topic"] for h in headers} == {topic}
    assert {h["__connect.errors.partition"] for h in headers} == {"0"}
    assert "Unknown magic byte" in headers[0]["__connect.errors.exception.message"]
    assert f"topic {topic}" in headers[0]["__connect.errors.exception.message"]
    assert "schema for id 424242 (schema not found)" in headers[1]["__connect.errors.exception.message"]
    errors = [e for e in logs if e.get("event") == "task.error"]
    assert len(errors) == 2
    assert f"topic='{topic}', partition=0, offset=1" in errors[1]["message"]
    assert SECRET not in repr(logs)


async def test_an_unknown_schema_id_fails_the_task_without_tolerance(
    bootstrap: str, tmp_path: Path, schema_registry_url: str
) -> None:
    suffix = uuid.uuid4().hex[:10]
    topic = f"orders-{suffix}"
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap)
    await producer.start()
    try:
        await producer.send_and_wait(topic, b"\x00" + (515151).to_bytes(4, "big") + b"\x02", partition=0)
    finally:
        await producer.stop()
    converters = _converters(schema_registry_url, "io.confluent.connect.avro.AvroConverter")
    with capture_logs() as logs:
        async with Engine(_worker(bootstrap, tmp_path, suffix)) as engine:
            await engine.create_connector(
                "snk",
                {
                    "connector.class": SINK,
                    "topics": topic,
                    **converters,
                    "consumer.auto.offset.reset": "earliest",
                },
            )
            status = await engine.wait_for_state("snk", "RUNNING", tasks=["FAILED"], timeout=30)
    assert status is not None
    trace = status["tasks"][0]["trace"]
    assert "Tolerance exceeded in error handler" in trace
    assert (
        f"topic {topic} to Avro: Error retrieving Avro value schema for id 515151 (schema not found)" in trace
    )
    assert SINKS["snk"].received == []
    assert SECRET not in repr(logs)
