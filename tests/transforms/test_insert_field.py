"""InsertField: topic, partition, offset, timestamp and a static value as fields, ``!``/``?`` suffixes."""

from __future__ import annotations

import datetime as dt

import pytest

from engine.api.errors import DataException
from engine.api.records import SinkRecord, SourceRecord
from engine.data import Schema, SchemaBuilder, Struct
from engine.transforms.insert_field import InsertField
from tests.transforms.smt import smt

SCHEMA = SchemaBuilder.struct().name("row").field("id", Schema.INT32_SCHEMA).build()
CONFIG = {"topic.field": "topic!", "partition.field": "part", "offset.field": "off?",
          "timestamp.field": "ts", "static.field": "origin", "static.value": "db"}


def sink_record(value: object, schema: Schema | None = None) -> SinkRecord:
    return SinkRecord(topic="orders", kafka_partition=3, kafka_offset=42, timestamp=1_000, value_schema=schema,
                      value=value)


def test_struct_values_get_the_fields_with_their_schemas() -> None:
    out = smt(InsertField.Value, **CONFIG).apply(sink_record(Struct(SCHEMA).put("id", 1), SCHEMA))
    schema = out.value_schema
    assert schema is not None
    assert [f.name for f in schema.fields] == ["id", "topic", "part", "off", "ts", "origin"]
    assert not schema.field("topic").schema.optional  # type: ignore[union-attr]
    assert schema.field("part").schema.optional  # type: ignore[union-attr]
    assert schema.field("ts").schema.name == "org.apache.kafka.connect.data.Timestamp"  # type: ignore[union-attr]
    assert [out.value.get(n) for n in ("id", "topic", "part", "off", "origin")] == [1, "orders", 3, 42, "db"]
    assert out.value.get("ts") == dt.datetime(1970, 1, 1, 0, 0, 1, tzinfo=dt.UTC)


def test_schemaless_values_get_plain_values() -> None:
    out = smt(InsertField.Value, **CONFIG).apply(sink_record({"id": 1}))
    assert out.value == {"id": 1, "topic": "orders", "part": 3, "off": 42, "ts": 1_000, "origin": "db"}


def test_the_key_variant_and_tombstones() -> None:
    out = smt(InsertField.Key, **{"topic.field": "t"}).apply(SourceRecord(topic="x", key={"k": 1}, value=None))
    assert out.key == {"k": 1, "t": "x"}
    assert smt(InsertField.Value, **{"topic.field": "t"}).apply(sink_record(None)).value is None


def test_the_offset_needs_a_sink_record() -> None:
    with pytest.raises(DataException, match="Only SinkRecord supported for \\[field insertion\\]"):
        smt(InsertField.Value, **{"offset.field": "o"}).apply(SourceRecord(topic="t", value={"a": 1}))
