"""MaskField: listed fields become their type's empty value or a converted replacement."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest

from engine.api.errors import ConfigException, DataException
from engine.api.records import SourceRecord
from engine.data import Date, Schema, SchemaBuilder, Struct, Time, Timestamp
from engine.transforms.mask_field import MaskField, MaskFieldKey, MaskFieldValue
from tests.transforms.smt import smt

SCHEMA = (
    SchemaBuilder.struct()
    .field("i8", Schema.INT8_SCHEMA)
    .field("i64", Schema.INT64_SCHEMA)
    .field("f32", Schema.FLOAT32_SCHEMA)
    .field("b", Schema.BOOLEAN_SCHEMA)
    .field("s", Schema.STRING_SCHEMA)
    .field("ts", Timestamp.schema())
    .field("d", Date.schema())
    .field("t", Time.schema())
    .field("arr", SchemaBuilder.array(Schema.INT32_SCHEMA).build())
    .field("map", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build())
    .field("opt", Schema.OPTIONAL_STRING_SCHEMA)
    .field("kept", Schema.STRING_SCHEMA)
    .build()
)
ALL = "i8,i64,f32,b,s,ts,d,t,arr,map,opt"


def row() -> Struct:
    return (
        Struct(SCHEMA)
        .put("i8", 5)
        .put("i64", 6)
        .put("f32", 1.5)
        .put("b", True)
        .put("s", "secret")
        .put("ts", dt.datetime(2024, 1, 1, tzinfo=dt.UTC))
        .put("d", dt.date(2024, 1, 1))
        .put("t", dt.time(12, 0))
        .put("arr", [1])
        .put("map", {"a": 1})
        .put("kept", "k")
    )


def with_value(value: object, schema: Schema | None = None) -> SourceRecord:
    return SourceRecord(topic="t", key="k", value_schema=schema, value=value)


def test_variants_are_published_on_the_base_class() -> None:
    assert MaskField.Key is MaskFieldKey
    assert MaskField.Value is MaskFieldValue


def test_struct_fields_become_their_types_empty_values() -> None:
    out = smt(MaskField.Value, fields=ALL).apply(with_value(row(), SCHEMA))
    assert out.value_schema is SCHEMA
    assert [out.value.get(f.name) for f in SCHEMA.fields] == [
        0,
        0,
        0.0,
        False,
        "",
        dt.datetime(1970, 1, 1, tzinfo=dt.UTC),
        dt.date(1970, 1, 1),
        dt.time(0),
        [],
        {},
        None,
        "k",
    ]


def test_schemaless_fields_are_masked_and_absent_ones_become_null() -> None:
    value = {
        "n": 5,
        "f": 1.5,
        "d": decimal.Decimal("2.5"),
        "b": True,
        "l": [1],
        "s": "x",
        "none": None,
        "o": 1,
    }
    out = smt(MaskField.Value, fields="n,f,d,b,l,s,none,absent").apply(with_value(value)).value
    assert out == {
        "n": 0,
        "f": 0.0,
        "d": decimal.Decimal(0),
        "b": False,
        "l": [],
        "s": "",
        "none": None,
        "absent": None,
        "o": 1,
    }
    assert value["n"] == 5


def test_a_replacement_is_converted_to_each_fields_type() -> None:
    out = (
        smt(MaskField.Key, fields="n,s,d,f", replacement="9.75")
        .apply(SourceRecord(topic="t", key={"n": 5, "s": "x", "d": decimal.Decimal(1), "f": 2.0}))
        .key
    )
    assert out == {"n": 9, "s": "9.75", "d": decimal.Decimal("9.75"), "f": 9.75}


def test_a_replacement_wraps_to_the_schema_width() -> None:
    out = smt(MaskField.Value, fields="i8,i64,f32", replacement="300").apply(with_value(row(), SCHEMA))
    assert (out.value.get("i8"), out.value.get("i64"), out.value.get("f32")) == (44, 300, 300.0)


def test_a_replacement_that_is_not_a_number_is_refused_for_numbers() -> None:
    with pytest.raises(DataException, match=r"Unable to convert nine \(class str\) to a number"):
        smt(MaskField.Value, fields="n", replacement="nine").apply(with_value({"n": 5}))
    with pytest.raises(DataException, match=r"Unable to convert nine \(class str\) to number"):
        smt(MaskField.Value, fields="d", replacement="nine").apply(with_value({"d": decimal.Decimal(1)}))


def test_types_without_a_replacement_form_are_refused() -> None:
    with pytest.raises(
        DataException, match=r"Cannot mask value of type class bool with custom replacement\."
    ):
        smt(MaskField.Value, fields="b", replacement="1").apply(with_value({"b": True}))
    with pytest.raises(DataException, match="Cannot mask value of type: class bytes"):
        smt(MaskField.Value, fields="raw").apply(with_value({"raw": b"x"}))


def test_null_and_wrong_shaped_values_are_refused() -> None:
    with pytest.raises(
        DataException,
        match=r"Only Map objects supported in absence of schema for \[mask fields\], "
        r"found: null",
    ):
        smt(MaskField.Value, fields="a").apply(with_value(None))
    with pytest.raises(
        DataException, match=r"Only Struct objects supported for \[mask fields\], found: null"
    ):
        smt(MaskField.Value, fields="a").apply(with_value(None, SCHEMA))


def test_config_needs_fields_and_a_non_empty_replacement() -> None:
    with pytest.raises(ConfigException, match="Configuration 'fields' must not be empty"):
        smt(MaskField.Value, fields="")
    with pytest.raises(ConfigException, match="replacement"):
        smt(MaskField.Value, fields="n", replacement="")
