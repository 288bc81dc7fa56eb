"""Cast: whole values and struct/map fields, Java's narrowing and parsing, logical types, config errors."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest

from engine.api.errors import ConfigException, DataException
from engine.api.records import SourceRecord
from engine.data import Date, Decimal, Schema, SchemaBuilder, Struct, Time, Timestamp
from engine.transforms.cast import Cast, CastKey, CastValue
from tests.transforms.smt import smt

SCHEMA = (SchemaBuilder.struct().name("row")
          .field("big", Schema.INT64_SCHEMA).field("flag", Schema.BOOLEAN_SCHEMA)
          .field("text", Schema.OPTIONAL_STRING_SCHEMA).field("raw", Schema.BYTES_SCHEMA)
          .field("price", Decimal.schema(2)).field("kept", Schema.STRING_SCHEMA).build())


def row() -> Struct:
    return (Struct(SCHEMA).put("big", 300).put("flag", True).put("text", "42").put("raw", b"\x00\xff")
            .put("price", decimal.Decimal("12.50")).put("kept", "k"))


def record(value: object, schema: Schema | None = None) -> SourceRecord:
    return SourceRecord(topic="t", key="k", value_schema=schema, value=value)


def test_variants_are_published_on_the_base_class() -> None:
    assert Cast.Key is CastKey
    assert Cast.Value is CastValue
    assert issubclass(CastKey, Cast)
    assert issubclass(CastValue, Cast)


def test_struct_fields_are_cast_and_their_schemas_follow() -> None:
    out = smt(Cast.Value, spec="big:int8,flag:int32,text:int16,raw:string,price:float64").apply(record(row(), SCHEMA))
    assert out.value_schema is not None
    assert [f.schema.type for f in out.value_schema.fields] == [
        Schema.INT8_SCHEMA.type, Schema.INT32_SCHEMA.type, Schema.INT16_SCHEMA.type, Schema.STRING_SCHEMA.type,
        Schema.FLOAT64_SCHEMA.type, Schema.STRING_SCHEMA.type]
    assert out.value_schema.field("text").schema.optional
    assert out.value_schema.field("kept").schema is SCHEMA.field("kept").schema  # type: ignore[union-attr]
    assert out.value_schema.name == "row"
    assert [out.value.get(f) for f in ("big", "flag", "text", "raw", "price", "kept")] == [
        44, 1, 42, "AP8=", 12.5, "k"]


def test_schemaless_map_fields_are_cast_and_missing_fields_become_null() -> None:
    out = smt(Cast.Value, spec="a:string,b:boolean,c:float32,missing:int8").apply(
        record({"a": 1.5, "b": "TRUE", "c": 3, "d": 7}))
    assert out.value == {"a": "1.5", "b": True, "c": 3.0, "d": 7, "missing": None}


def test_the_whole_key_is_cast_with_a_schema_and_without() -> None:
    out = smt(Cast.Key, spec="int32").apply(SourceRecord(topic="t", key_schema=Schema.STRING_SCHEMA, key="-7"))
    assert out.key_schema is not None
    assert (out.key_schema.type, out.key) == (Schema.INT32_SCHEMA.type, -7)
    assert smt(Cast.Key, spec="string").apply(SourceRecord(topic="t", key=False)).key == "false"
    assert smt(Cast.Key, spec="float64").apply(SourceRecord(topic="t", key=3)).key == 3.0


def test_whole_value_cast_keeps_optionality_and_casts_the_default() -> None:
    schema = SchemaBuilder.float32().optional().default_value(-42.125).doc("d").build()
    out = smt(Cast.Value, spec="int32").apply(record(42.125, schema))
    assert out.value == 42
    assert out.value_schema is not None
    assert (out.value_schema.optional, out.value_schema.default_value, out.value_schema.doc) == (True, -42, "d")


def test_integers_narrow_like_java() -> None:
    cast = smt(Cast.Value, spec="int8")
    assert [cast.apply(record(v)).value for v in (127, 128, -129, 1.9, -1.9, 1e20, float("nan"), True)] == [
        127, -128, 127, 1, -1, -1, 0, 1]
    assert smt(Cast.Value, spec="int64").apply(record(1e30)).value == 2**63 - 1


def test_strings_parse_like_java_and_must_fit() -> None:
    assert smt(Cast.Value, spec="int16").apply(record("+123")).value == 123
    assert smt(Cast.Value, spec="float64").apply(record(" 1.5e3d ")).value == 1500.0
    assert smt(Cast.Value, spec="boolean").apply(record("yes")).value is False
    for spec, text in (("int8", "128"), ("int32", " 1"), ("int64", "1_000"), ("float32", "abc")):
        with pytest.raises(DataException, match=rf"Value \({text}\) was out of range for requested data type"):
            smt(Cast.Value, spec=spec).apply(record(text))


def test_float32_rounds_to_single_precision_and_prints_like_java() -> None:
    assert smt(Cast.Value, spec="float32").apply(record(0.1)).value == pytest.approx(0.1, rel=1e-7)
    assert smt(Cast.Value, spec="float32").apply(record(0.1)).value != 0.1
    schema = SchemaBuilder.struct().field("f", Schema.FLOAT32_SCHEMA).field("d", Schema.FLOAT64_SCHEMA).build()
    value = Struct(schema).put("f", smt(Cast.Value, spec="float32").apply(record(0.1)).value).put("d", 1e10)
    out = smt(Cast.Value, spec="f:string,d:string").apply(record(value, schema))
    assert (out.value.get("f"), out.value.get("d")) == ("0.1", "1.0E10")


def test_numbers_to_boolean_use_the_truncated_long_value() -> None:
    cast = smt(Cast.Value, spec="boolean")
    assert [cast.apply(record(v)).value for v in (0, 2, 0.5, -1.0)] == [False, True, False, True]


def test_decimal_fields_cast_to_numbers_and_strings() -> None:
    schema = SchemaBuilder.struct().field("a", Decimal.schema(0)).field("b", Decimal.schema(2)).build()
    value = Struct(schema).put("a", decimal.Decimal(2**31)).put("b", decimal.Decimal("1E+3").quantize(
        decimal.Decimal("0.01")))
    out = smt(Cast.Value, spec="a:int32,b:string").apply(record(value, schema))
    assert (out.value.get("a"), out.value.get("b")) == (-(2**31), "1000.00")


def test_whole_decimal_cast_to_string_drops_the_logical_name() -> None:
    out = smt(Cast.Value, spec="string").apply(record(decimal.Decimal(42), Decimal.schema(0)))
    assert out.value == "42"
    assert out.value_schema is not None
    assert (out.value_schema.type, out.value_schema.name) == (Schema.STRING_SCHEMA.type, None)


def test_date_time_and_timestamp_cast_to_their_numbers_or_iso_strings() -> None:
    schema = (SchemaBuilder.struct().field("date", Date.schema()).field("time", Time.schema())
              .field("ts", Timestamp.schema()).field("ts_num", Timestamp.schema())
              .field("date_num", Date.schema()).build())
    value = (Struct(schema).put("date", dt.date(1970, 1, 2)).put("time", dt.time(1, 0))
             .put("ts", dt.datetime(2024, 5, 6, 7, 8, 9, 10_000, tzinfo=dt.UTC))
             .put("ts_num", dt.datetime(1970, 1, 1, 0, 0, 0, 5000, tzinfo=dt.UTC)).put("date_num", dt.date(1970, 1, 3)))
    out = smt(Cast.Value, spec="date:string,time:string,ts:string,ts_num:int64,date_num:int32").apply(
        record(value, schema))
    assert [out.value.get(f) for f in ("date", "time", "ts", "ts_num", "date_num")] == [
        "1970-01-02", "01:00:00.000Z", "2024-05-06T07:08:09.010Z", 5, 2]


def test_null_values_pass_through_unchanged() -> None:
    original = record(None, SCHEMA)
    assert smt(Cast.Value, spec="big:int8").apply(original) is original
    assert smt(Cast.Value, spec="int8").apply(record(None)).value is None
    schema = SchemaBuilder.struct().field("n", Schema.OPTIONAL_INT64_SCHEMA).build()
    out = smt(Cast.Value, spec="n:string").apply(record(Struct(schema), schema))
    assert out.value.get("n") is None


def test_bytes_only_become_strings() -> None:
    with pytest.raises(DataException, match="Unexpected type in Cast transformation: class bytes"):
        smt(Cast.Value, spec="int32").apply(record(b"\x01"))


def test_unsupported_inputs_are_data_errors() -> None:
    with pytest.raises(DataException, match=r"does not support casting from ARRAY; supported types are \[INT8, "):
        smt(Cast.Value, spec="int32").apply(record([1]))
    with pytest.raises(DataException, match=r"value of type class decimal\.Decimal which is not supported"):
        smt(Cast.Value, spec="int32").apply(record(decimal.Decimal(1)))
    schema = SchemaBuilder.struct().field("m", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA)).build()
    with pytest.raises(DataException, match="does not support casting from MAP"):
        smt(Cast.Value, spec="m:string").apply(record(Struct(schema).put("m", {"a": "b"}), schema))


@pytest.mark.parametrize(("spec", "message"), [
    ("", "Must specify at least one field to cast."),
    ("a:int7", "Invalid type found in casting spec: int7"),
    ("int7", "Invalid type found in casting spec: int7"),
    ("a:bytes", r"does not support casting to BYTES; supported types are \[INT8, INT16, INT32, INT64, FLOAT32, "
                r"FLOAT64, BOOLEAN, STRING\]"),
    ("int32,a:int8", "may ony specify a single cast"),
    ("a:b:c", r"Invalid value \[a:b:c\] for configuration renames: Invalid rename mapping: a:b:c"),
])
def test_bad_specs_are_config_errors(spec: str, message: str) -> None:
    with pytest.raises(ConfigException, match=message):
        smt(Cast.Value, spec=spec)


def test_a_missing_spec_is_a_config_error_and_validation_reports_bad_ones() -> None:
    with pytest.raises(ConfigException, match="spec"):
        smt(Cast.Value)
    results = Cast.Value().config().validate_all({"spec": "a:bytes"})
    assert any("does not support casting to BYTES" in e for e in results["spec"].errors)


def test_wrong_shapes_are_data_errors_with_kafkas_messages() -> None:
    with pytest.raises(DataException, match=r"Only Struct objects supported for \[cast types\], found: int"):
        smt(Cast.Value, spec="a:int8").apply(record(5, SCHEMA))
    with pytest.raises(DataException, match=r"Only Map objects supported in absence of schema for \[cast types\], "
                                            r"found: str"):
        smt(Cast.Value, spec="a:int8").apply(record("x"))
    with pytest.raises(DataException, match="Cannot list fields on non-struct type"):
        smt(Cast.Value, spec="a:int8").apply(record(5, Schema.INT32_SCHEMA))
