"""ExtractField: a field (and its schema) replaces the key or value; nulls pass; unknown fields fail."""

from __future__ import annotations

import pytest

from engine.api.errors import ConfigException, DataException
from engine.api.records import SourceRecord
from engine.data import Schema, SchemaBuilder, Struct
from engine.transforms.extract_field import ExtractField, ExtractFieldKey, ExtractFieldValue
from tests.transforms.smt import smt

SCHEMA = (
    SchemaBuilder.struct()
    .field("id", Schema.INT32_SCHEMA)
    .field("name", SchemaBuilder.string().optional().default_value("anon").build())
    .build()
)


def row() -> Struct:
    return Struct(SCHEMA).put("id", 7)


def test_variants_are_published_on_the_base_class() -> None:
    assert ExtractField.Key is ExtractFieldKey
    assert ExtractField.Value is ExtractFieldValue


def test_a_struct_field_and_its_schema_replace_the_value() -> None:
    out = smt(ExtractField.Value, field="id").apply(
        SourceRecord(topic="t", key="k", value_schema=SCHEMA, value=row())
    )
    assert (out.value_schema, out.value, out.key) == (Schema.INT32_SCHEMA, 7, "k")


def test_a_field_default_stands_in_for_null() -> None:
    out = smt(ExtractField.Value, field="name").apply(
        SourceRecord(topic="t", value_schema=SCHEMA, value=row())
    )
    assert out.value == "anon"


def test_a_map_entry_replaces_the_key_and_a_missing_entry_gives_null() -> None:
    record = SourceRecord(topic="t", key={"id": 3}, value="v")
    assert smt(ExtractField.Key, field="id").apply(record).key == 3
    out = smt(ExtractField.Key, field="nope").apply(record)
    assert (out.key_schema, out.key, out.value) == (None, None, "v")


def test_null_values_pass_through_with_the_field_schema() -> None:
    assert smt(ExtractField.Value, field="id").apply(SourceRecord(topic="t", value=None)).value is None
    out = smt(ExtractField.Value, field="id").apply(SourceRecord(topic="t", value_schema=SCHEMA, value=None))
    assert (out.value_schema, out.value) == (Schema.INT32_SCHEMA, None)


def test_an_unknown_field_with_a_schema_is_an_error() -> None:
    with pytest.raises(DataException, match="Unknown field: missing"):
        smt(ExtractField.Value, field="missing").apply(
            SourceRecord(topic="t", value_schema=SCHEMA, value=row())
        )


def test_wrong_shapes_are_data_errors_with_kafkas_messages() -> None:
    with pytest.raises(
        DataException, match=r"Only Struct objects supported for \[field extraction\], found: str"
    ):
        smt(ExtractField.Value, field="id").apply(SourceRecord(topic="t", value_schema=SCHEMA, value="x"))
    with pytest.raises(
        DataException,
        match=r"Only Map objects supported in absence of schema for \[field extraction\], found: int",
    ):
        smt(ExtractField.Key, field="id").apply(SourceRecord(topic="t", key=5))


def test_the_field_setting_is_required() -> None:
    with pytest.raises(ConfigException, match="field"):
        smt(ExtractField.Value)
