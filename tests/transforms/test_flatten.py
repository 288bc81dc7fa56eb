"""Flatten: nested structs and dicts become one level; arrays (and maps with a schema) stay."""

from __future__ import annotations

import pytest

from engine.api.errors import DataException
from engine.api.records import SourceRecord
from engine.data import Schema, SchemaBuilder, Struct
from engine.transforms.flatten import Flatten
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
    assert schema.field("address.home.city").schema.optional  # type: ignore[union-attr]
    assert not schema.field("name").schema.optional  # type: ignore[union-attr]
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
