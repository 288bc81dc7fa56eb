"""Flatten: nested structs and maps become one level; arrays stay; maps under a schema are refused."""

from __future__ import annotations

import decimal

import pytest

from engine.api.errors import DataException
from engine.api.records import SourceRecord
from engine.data import Schema, SchemaBuilder, Struct
from engine.transforms.flatten import Flatten, FlattenKey, FlattenValue
from tests.transforms.smt import smt

INNER = SchemaBuilder.struct().field("city", Schema.STRING_SCHEMA).field("zip", Schema.INT32_SCHEMA).build()
ADDRESS = SchemaBuilder.struct().optional().field("home", INNER).build()
SCHEMA = (SchemaBuilder.struct().name("person").field("name", Schema.STRING_SCHEMA).field("address", ADDRESS)
          .field("tags", SchemaBuilder.array(Schema.STRING_SCHEMA).build()).build())


def person(with_address: bool = True) -> Struct:
    value = Struct(SCHEMA).put("name", "ada").put("tags", ["x"])
    if with_address:
        value.put("address", Struct(ADDRESS).put("home", Struct(INNER).put("city", "Paris").put("zip", 75001)))
    return value


def test_nested_struct_fields_are_joined_and_made_optional_under_an_optional_parent() -> None:
    out = smt(Flatten.Value).apply(SourceRecord(topic="t", value_schema=SCHEMA, value=person()))
    schema = out.value_schema
    assert schema is not None
    assert [f.name for f in schema.fields] == ["name", "address.home.city", "address.home.zip", "tags"]
    assert schema.field("address.home.city").schema.optional
    assert not schema.field("name").schema.optional
    assert schema.name == "person"
    assert out.value.get("address.home.zip") == 75001
    assert out.value.get("tags") == ["x"]


def test_a_missing_nested_struct_leaves_its_fields_null() -> None:
    out = smt(Flatten.Value, delimiter="_").apply(SourceRecord(topic="t", value_schema=SCHEMA,
                                                              value=person(with_address=False)))
    assert out.value.get("address_home_city") is None


def test_schemaless_maps_are_flattened_and_lists_kept() -> None:
    value = {"a": {"b": {"c": 1}, "d": [1, {"e": 2}]}, "f": None}
    out = smt(Flatten.Key, delimiter="-").apply(SourceRecord(topic="t", key=value))
    assert out.key == {"a-b-c": 1, "a-d": [1, {"e": 2}], "f": None}


def test_nulls_pass_and_wrong_shapes_are_refused() -> None:
    assert smt(Flatten.Value).apply(SourceRecord(topic="t", value=None)).value is None
    with pytest.raises(DataException, match="Only Map objects supported in absence of schema for \\[flattening\\]"):
        smt(Flatten.Value).apply(SourceRecord(topic="t", value=[1]))


def test_a_map_field_with_a_schema_is_refused_and_a_null_value_passes() -> None:
    schema = SchemaBuilder.struct().field("m", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA)).build()
    with pytest.raises(DataException, match="does not support MAP for record with schemas \\(for field m\\)"):
        smt(Flatten.Value).apply(SourceRecord(topic="t", value_schema=schema, value=Struct(schema).put("m", {})))
    record = SourceRecord(topic="t", value_schema=SCHEMA, value=None)
    assert smt(Flatten.Value).apply(record) is record


def test_variants_are_published_on_the_base_class() -> None:
    assert Flatten.Key is FlattenKey
    assert Flatten.Value is FlattenValue


def test_the_key_is_flattened_with_its_schema() -> None:
    out = smt(Flatten.Key).apply(SourceRecord(topic="t", key_schema=SCHEMA, key=person(), value="v"))
    assert out.key_schema is not None
    assert out.key.get("address.home.city") == "Paris"
    assert out.value == "v"


def test_the_top_level_schema_keeps_its_name_but_not_its_optionality() -> None:
    schema = SchemaBuilder.struct().name("n").version(2).doc("d").optional().field("a", Schema.INT32_SCHEMA).build()
    out = smt(Flatten.Value).apply(SourceRecord(topic="t", value_schema=schema, value=Struct(schema).put("a", 1)))
    assert out.value_schema is not None
    assert (out.value_schema.name, out.value_schema.version, out.value_schema.doc) == ("n", 2, "d")
    assert not out.value_schema.optional
    assert out.value_schema.field("a").schema.optional


def test_defaults_come_from_the_field_or_the_nearest_struct_default() -> None:
    inner = (SchemaBuilder.struct().optional().field("x", Schema.INT32_SCHEMA)
             .field("y", SchemaBuilder.int32().default_value(9).build()).build())
    inner_default = Struct(inner).put("x", 5)
    with_default = SchemaBuilder.struct().optional().field("x", Schema.INT32_SCHEMA).field(
        "y", SchemaBuilder.int32().default_value(9).build()).default_value(inner_default).build()
    outer = SchemaBuilder.struct().field("in", with_default).build()
    out = smt(Flatten.Value).apply(SourceRecord(topic="t", value_schema=outer, value=Struct(outer)))
    assert out.value_schema is not None
    assert out.value_schema.field("in.x").schema.default_value == 5
    assert out.value_schema.field("in.y").schema.default_value == 9
    assert (out.value.get("in.x"), out.value.get("in.y")) == (5, 9)


def test_schemaless_values_of_unknown_types_are_refused() -> None:
    with pytest.raises(DataException, match=r"passed a value of type class decimal\.Decimal which is not supported"):
        smt(Flatten.Value).apply(SourceRecord(topic="t", value={"a": decimal.Decimal(1)}))
    inner = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()
    with pytest.raises(DataException, match=r"does not support class engine\.data\.values\.Struct for record "
                                            r"without schemas \(for field s\)"):
        smt(Flatten.Value).apply(SourceRecord(topic="t", value={"s": Struct(inner).put("a", 1)}))


def test_a_non_struct_value_with_a_schema_is_refused() -> None:
    with pytest.raises(DataException, match=r"Only Struct objects supported for \[flattening\], found: dict"):
        smt(Flatten.Value).apply(SourceRecord(topic="t", value_schema=SCHEMA, value={"a": 1}))


def test_the_schema_is_built_once_per_input_schema() -> None:
    flatten = smt(Flatten.Value)
    first = flatten.apply(SourceRecord(topic="t", value_schema=SCHEMA, value=person()))
    second = flatten.apply(SourceRecord(topic="t", value_schema=SCHEMA, value=person()))
    assert first.value_schema is second.value_schema
