"""Cast: whole values and struct/map fields, Java's narrowing and parsing, and its config errors."""

from __future__ import annotations

import decimal

import pytest

from engine.api.errors import ConfigException, DataException
from engine.api.records import SourceRecord
from engine.data import Decimal, Schema, SchemaBuilder, Struct
from engine.transforms.cast import Cast
from tests.transforms.smt import smt

SCHEMA = (SchemaBuilder.struct().name("row")
          .field("big", Schema.INT64_SCHEMA).field("flag", Schema.BOOLEAN_SCHEMA)
          .field("text", Schema.OPTIONAL_STRING_SCHEMA).field("raw", Schema.BYTES_SCHEMA)
          .field("price", Decimal.schema(2)).build())


def row() -> Struct:
    return (Struct(SCHEMA).put("big", 300).put("flag", True).put("text", "42").put("raw", b"\x00\xff")
            .put("price", decimal.Decimal("12.50")))


def record(value: object, schema: Schema | None = None) -> SourceRecord:
    return SourceRecord(topic="t", key="k", value_schema=schema, value=value)


def test_struct_fields_are_cast_and_their_schemas_follow() -> None:
    out = smt(Cast.Value, spec="big:int8,flag:int32,text:int16,raw:string,price:float64").apply(record(row(), SCHEMA))
    assert out.value_schema is not None
    assert [f.schema.type.value for f in out.value_schema.fields] == ["int8", "int32", "int16", "string", "float64"]
    assert out.value_schema.field("text").schema.optional  # type: ignore[union-attr]
    assert out.value_schema.name == "row"
    assert [out.value.get(f) for f in ("big", "flag", "text", "raw", "price")] == [44, 1, 42, "AP8=", 12.5]


def test_schemaless_map_fields_are_cast() -> None:
    out = smt(Cast.Value, spec="a:string,b:boolean,c:float32").apply(record({"a": 1.5, "b": "TRUE", "c": 3, "d": 7}))
    assert out.value == {"a": "1.5", "b": True, "c": 3.0, "d": 7}


def test_the_whole_key_is_cast() -> None:
    out = smt(Cast.Key, spec="int32").apply(SourceRecord(topic="t", key_schema=Schema.STRING_SCHEMA, key="-7"))
    assert (out.key_schema.type.value, out.key) == ("int32", -7)  # type: ignore[union-attr]
    assert smt(Cast.Key, spec="string").apply(SourceRecord(topic="t", key=False)).key == "false"


def test_integers_narrow_like_java_and_strings_must_fit() -> None:
    cast = smt(Cast.Value, spec="int8")
    assert [cast.apply(record(v)).value for v in (127, 128, -129, 1.9, -1.9)] == [127, -128, 127, 1, -1]
    with pytest.raises(DataException):
        cast.apply(record("128"))


def test_null_values_pass_and_bytes_only_become_strings() -> None:
    assert smt(Cast.Value, spec="int8").apply(record(None)).value is None
    with pytest.raises(DataException, match="BYTES"):
        smt(Cast.Value, spec="int32").apply(record(b"\x01"))


@pytest.mark.parametrize(("spec", "message"), [
    ("", "Must specify at least one field to cast."),
    ("a:int7", "Invalid type found in casting spec: int7"),
    ("a:bytes", "does not support casting to/from BYTES"),
    ("int32,a:int8", "may ony specify a single cast"),
    ("a:b:c", "Invalid cast mapping: a:b:c"),
])
def test_bad_specs_are_config_errors(spec: str, message: str) -> None:
    with pytest.raises(ConfigException, match=message):
        smt(Cast.Value, spec=spec)


def test_a_non_struct_value_with_a_schema_and_field_casts_is_refused() -> None:
    with pytest.raises(DataException):
        smt(Cast.Value, spec="a:int8").apply(record(5, Schema.INT32_SCHEMA))


def test_kafka_names_resolve_to_the_variants() -> None:
    from engine.transforms.resolve import find_class

    assert find_class("org.apache.kafka.connect.transforms.Cast$Value", "transformation") is Cast.Value
    assert find_class("Cast$Key", "transformation") is Cast.Key
