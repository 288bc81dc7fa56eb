"""ValueToKey: the key becomes a Struct or map of some value fields; the value is untouched."""

from __future__ import annotations

import pytest

from engine.api.errors import ConfigException, DataException
from engine.api.records import SinkRecord, SourceRecord
from engine.data import Schema, SchemaBuilder, Struct
from engine.transforms.value_to_key import ValueToKey
from tests.transforms.smt import smt

SCHEMA = (
    SchemaBuilder.struct()
    .field("id", Schema.INT32_SCHEMA)
    .field("name", Schema.STRING_SCHEMA)
    .field("zone", SchemaBuilder.string().optional().default_value("eu").build())
    .build()
)


def row() -> Struct:
    return Struct(SCHEMA).put("id", 7).put("name", "ada")


def test_the_key_is_a_struct_of_the_listed_fields_in_order() -> None:
    value = row()
    out = smt(ValueToKey, fields="name,id").apply(
        SourceRecord(topic="t", key="old", value_schema=SCHEMA, value=value)
    )
    assert out.key_schema is not None
    assert [(f.name, f.schema) for f in out.key_schema.fields] == [
        ("name", Schema.STRING_SCHEMA),
        ("id", Schema.INT32_SCHEMA),
    ]
    assert (out.key.get("name"), out.key.get("id")) == ("ada", 7)
    assert (out.value_schema, out.value) == (SCHEMA, value)


def test_field_defaults_stand_in_for_nulls() -> None:
    out = smt(ValueToKey, fields="zone").apply(SourceRecord(topic="t", value_schema=SCHEMA, value=row()))
    assert out.key.get("zone") == "eu"


def test_a_schemaless_key_is_a_map_and_missing_fields_are_null() -> None:
    out = smt(ValueToKey, fields="id,nope").apply(
        SinkRecord(topic="t", key="old", value={"id": 1, "x": 2}, kafka_offset=3)
    )
    assert (out.key_schema, out.key) == (None, {"id": 1, "nope": None})
    assert isinstance(out, SinkRecord)
    assert out.kafka_offset == 3


def test_a_field_missing_from_the_schema_is_an_error() -> None:
    with pytest.raises(DataException, match="Field does not exist: nope"):
        smt(ValueToKey, fields="nope").apply(SourceRecord(topic="t", value_schema=SCHEMA, value=row()))


def test_null_and_wrong_shaped_values_are_refused() -> None:
    with pytest.raises(
        DataException,
        match=r"Only Map objects supported in absence of schema for "
        r"\[copying fields from value to key\], found: null",
    ):
        smt(ValueToKey, fields="id").apply(SourceRecord(topic="t", value=None))
    with pytest.raises(
        DataException,
        match=r"Only Struct objects supported for \[copying fields from value to key\], found: dict",
    ):
        smt(ValueToKey, fields="id").apply(SourceRecord(topic="t", value_schema=SCHEMA, value={"id": 1}))


def test_fields_must_name_at_least_one_field() -> None:
    with pytest.raises(
        ConfigException,
        match=r"^Configuration 'fields' must not be empty\. Valid values include: any non-empty value$",
    ):
        smt(ValueToKey, fields="")
    with pytest.raises(ConfigException, match="fields"):
        smt(ValueToKey)


ADDRESS = SchemaBuilder.struct().field("city", Schema.STRING_SCHEMA).build()
NESTED = SchemaBuilder.struct().field("id", Schema.INT32_SCHEMA).field("address", ADDRESS).build()


def test_field_syntax_v2_reads_nested_fields_and_names_the_key_field_by_the_path_kafka_4_4() -> None:
    value = Struct(NESTED).put("id", 7).put("address", Struct(ADDRESS).put("city", "Oslo"))
    transform = smt(ValueToKey, fields="address.city,id", **{"field.syntax.version": "V2"})
    out = transform.apply(SourceRecord(topic="t", value_schema=NESTED, value=value))
    assert out.key_schema is not None
    assert [(f.name, f.schema) for f in out.key_schema.fields] == [
        ("address.city", Schema.STRING_SCHEMA),
        ("id", Schema.INT32_SCHEMA),
    ]
    assert (out.key.get("address.city"), out.key.get("id")) == ("Oslo", 7)
    schemaless = transform.apply(SinkRecord(topic="t", value={"address": {"city": "Bergen"}}, kafka_offset=0))
    assert schemaless.key == {"address.city": "Bergen", "id": None}
    with pytest.raises(DataException, match=r"^Field does not exist: address\.zip$"):
        smt(ValueToKey, fields="address.zip", **{"field.syntax.version": "V2"}).apply(
            SourceRecord(topic="t", value_schema=NESTED, value=value)
        )


def test_field_syntax_v1_stays_the_default_a_dotted_name_is_one_field() -> None:
    out = smt(ValueToKey, fields="a.b").apply(
        SinkRecord(topic="t", value={"a.b": 1, "a": {"b": 2}}, kafka_offset=0)
    )
    assert out.key == {"a.b": 1}
    assert "field.syntax.version" in ValueToKey().config().config_keys
