"""InsertField: topic, partition, offset, timestamp and a static value as fields, ``!``/``?`` suffixes."""

from __future__ import annotations

import datetime as dt

import pytest

from engine.api.errors import ConfigException, DataException
from engine.api.records import SinkRecord, SourceRecord
from engine.data import Schema, SchemaBuilder, Struct
from engine.transforms.insert_field import InsertField, InsertFieldKey, InsertFieldValue
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
    assert not schema.field("topic").schema.optional
    assert schema.field("part").schema.optional
    assert schema.field("ts").schema.name == "org.apache.kafka.connect.data.Timestamp"
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


def test_variants_are_published_on_the_base_class() -> None:
    assert InsertField.Key is InsertFieldKey
    assert InsertField.Value is InsertFieldValue


def test_a_key_struct_gets_the_fields_and_the_value_is_untouched() -> None:
    key = Struct(SCHEMA).put("id", 5)
    out = smt(InsertField.Key, **{"partition.field": "p!"}).apply(
        SinkRecord(topic="t", kafka_partition=2, key_schema=SCHEMA, key=key, value="v"))
    assert out.key_schema is not None
    assert not out.key_schema.field("p").schema.optional
    assert (out.key.get("id"), out.key.get("p"), out.value) == (5, 2, "v")
    assert out.key_schema.name == "row"


def test_a_null_partition_or_timestamp_is_not_inserted() -> None:
    config = {"partition.field": "p", "timestamp.field": "ts"}
    out = smt(InsertField.Value, **config).apply(SourceRecord(topic="t", value={"a": 1}))
    assert out.value == {"a": 1}
    out = smt(InsertField.Value, **config).apply(SourceRecord(topic="t", value_schema=SCHEMA,
                                                              value=Struct(SCHEMA).put("id", 1)))
    assert (out.value.get("p"), out.value.get("ts")) == (None, None)


def test_a_tombstone_with_a_schema_passes_unchanged() -> None:
    record = sink_record(None, SCHEMA)
    assert smt(InsertField.Value, **{"topic.field": "t"}).apply(record) is record


def test_inserting_nothing_or_a_static_field_without_a_value_is_a_config_error() -> None:
    with pytest.raises(ConfigException, match="No field insertion configured"):
        smt(InsertField.Value)
    with pytest.raises(ConfigException, match=r"Invalid value null for configuration static\.value: "
                                              r"No value specified for static field: origin"):
        smt(InsertField.Value, **{"static.field": "origin"})


def test_wrong_shapes_are_data_errors_with_kafkas_messages() -> None:
    with pytest.raises(DataException, match=r"Only Struct objects supported for \[field insertion\], found: dict"):
        smt(InsertField.Value, **{"topic.field": "t"}).apply(sink_record({"a": 1}, SCHEMA))
    with pytest.raises(DataException,
                       match=r"Only Map objects supported in absence of schema for \[field insertion\], found: str"):
        smt(InsertField.Value, **{"topic.field": "t"}).apply(sink_record("x"))
