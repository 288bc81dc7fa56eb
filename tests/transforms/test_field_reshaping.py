"""ExtractField, HoistField, ValueToKey, ReplaceField and MaskField on schema and schemaless records."""

from __future__ import annotations

import decimal

import pytest

from engine.api.errors import ConfigException, DataException
from engine.api.records import SourceRecord
from engine.data import Schema, SchemaBuilder, Struct
from engine.transforms.extract_field import ExtractField
from engine.transforms.hoist_field import HoistField
from engine.transforms.mask_field import MaskField
from engine.transforms.replace_field import ReplaceField
from engine.transforms.value_to_key import ValueToKey
from tests.transforms.smt import smt

SCHEMA = (SchemaBuilder.struct().name("row").field("id", Schema.INT32_SCHEMA).field("name", Schema.STRING_SCHEMA)
          .field("secret", Schema.OPTIONAL_STRING_SCHEMA).build())


def row() -> Struct:
    return Struct(SCHEMA).put("id", 7).put("name", "ada").put("secret", "s3")


def with_value(value: object, schema: Schema | None = None) -> SourceRecord:
    return SourceRecord(topic="t", key="k", value_schema=schema, value=value)


def test_extract_field_takes_the_field_and_its_schema() -> None:
    out = smt(ExtractField.Value, field="name").apply(with_value(row(), SCHEMA))
    assert (out.value_schema, out.value) == (Schema.STRING_SCHEMA, "ada")
    assert smt(ExtractField.Key, field="id").apply(SourceRecord(topic="t", key={"id": 3})).key == 3
    assert smt(ExtractField.Value, field="missing").apply(with_value({"id": 1})).value is None
    assert smt(ExtractField.Value, field="id").apply(with_value(None)).value is None
    with pytest.raises(DataException, match="Unknown field: missing"):
        smt(ExtractField.Value, field="missing").apply(with_value(row(), SCHEMA))
    with pytest.raises(DataException, match="Only Struct objects supported for \\[field extraction\\], found: str"):
        smt(ExtractField.Value, field="id").apply(with_value("x", SCHEMA))


def test_hoist_field_wraps_in_a_struct_or_a_dict() -> None:
    out = smt(HoistField.Key, field="wrapped").apply(SourceRecord(topic="t", key_schema=Schema.INT64_SCHEMA, key=5))
    assert out.key_schema is not None
    assert out.key_schema.field("wrapped").schema == Schema.INT64_SCHEMA
    assert out.key.get("wrapped") == 5
    assert smt(HoistField.Value, field="w").apply(with_value(1)).value == {"w": 1}


def test_value_to_key_builds_the_key_from_value_fields() -> None:
    out = smt(ValueToKey, fields="id,name").apply(with_value(row(), SCHEMA))
    assert [f.name for f in out.key_schema.fields] == ["id", "name"]
    assert (out.key.get("id"), out.key.get("name")) == (7, "ada")
    assert smt(ValueToKey, fields="id").apply(with_value({"id": 1, "x": 2})).key == {"id": 1}
    with pytest.raises(DataException, match="Field does not exist: nope"):
        smt(ValueToKey, fields="nope").apply(with_value(row(), SCHEMA))


def test_replace_field_excludes_includes_and_renames() -> None:
    out = smt(ReplaceField.Value, exclude="secret", renames="name:full_name").apply(with_value(row(), SCHEMA))
    assert [f.name for f in out.value_schema.fields] == ["id", "full_name"]
    assert out.value.get("full_name") == "ada"
    kept = smt(ReplaceField.Value, include="id,secret", exclude="secret").apply(with_value({"id": 1, "secret": 2, "x": 3}))
    assert kept.value == {"id": 1}
    with pytest.raises(ConfigException, match="Invalid rename mapping: a"):
        smt(ReplaceField.Value, renames="a")


def test_mask_field_uses_type_defaults_or_a_converted_replacement() -> None:
    out = smt(MaskField.Value, fields="id,secret").apply(with_value(row(), SCHEMA))
    assert (out.value.get("id"), out.value.get("secret"), out.value.get("name")) == (0, "", "ada")
    value = {"n": 5, "f": 1.5, "d": decimal.Decimal("2.5"), "b": True, "l": [1], "s": "x", "none": None}
    masked = smt(MaskField.Value, fields="n,f,d,b,l,s,none").apply(with_value(value)).value
    assert masked == {"n": 0, "f": 0.0, "d": decimal.Decimal(0), "b": False, "l": [], "s": "", "none": None}
    replaced = smt(MaskField.Value, fields="n,s,absent", replacement="9").apply(with_value({"n": 5, "s": "x"})).value
    assert replaced == {"n": 9, "s": "9", "absent": None}
    with pytest.raises(DataException, match="found: null"):  # Kafka refuses a null value here
        smt(MaskField.Value, fields="n").apply(with_value(None))
    with pytest.raises(DataException, match="Unable to convert"):
        smt(MaskField.Value, fields="n", replacement="nine").apply(with_value({"n": 5}))
    with pytest.raises(DataException, match="with custom replacement"):
        smt(MaskField.Value, fields="b", replacement="1").apply(with_value({"b": True}))
    with pytest.raises(ConfigException):
        smt(MaskField.Value, fields="n", replacement="")
