"""The Protobuf mapping's per-record paths: every plain field read in one go, a Struct's values written by
index, and the checked path that names a required field a message leaves unset."""

from __future__ import annotations

import pytest

from engine.api.errors import DataException
from engine.converters.registry.protobuf_data import ProtobufData
from engine.data.builder import SchemaBuilder
from engine.data.schema import Schema
from engine.data.values import Struct

INNER = SchemaBuilder.struct().name("com.example.Inner").field("n", Schema.INT32_SCHEMA).build()
ROW = (
    SchemaBuilder.struct()
    .name("com.example.Row")
    .field("id", Schema.INT64_SCHEMA)
    .field("note", Schema.OPTIONAL_STRING_SCHEMA)
    .field("with_default", SchemaBuilder.int32().default_value(42).build())
    .field("attrs", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA).build())
    .field("inner", INNER)
    .build()
)


def _row(note: str | None) -> Struct:
    return (
        Struct(ROW)
        .put("id", 7)
        .put("note", note)
        .put("attrs", {"a": "b"})
        .put("inner", Struct(INNER).put("n", 1))
    )


@pytest.mark.parametrize("note", [None, "gift"])
def test_a_struct_round_trips_through_the_compiled_paths(note: str | None) -> None:
    data = ProtobufData()
    _, descriptor = data.file_for(ROW)
    written = data.writer(ROW, descriptor)(_row(note))
    read = data.reader(ROW, descriptor)(written)
    assert read == _row(note).put("with_default", 42)  # the default written where the value was unset


def test_a_struct_of_an_equal_schema_object_is_written_by_index() -> None:
    data = ProtobufData()
    _, descriptor = data.file_for(ROW)
    copy = (
        SchemaBuilder.struct()
        .name("com.example.Row")
        .field("id", Schema.INT64_SCHEMA)
        .field("note", Schema.OPTIONAL_STRING_SCHEMA)
        .field("with_default", SchemaBuilder.int32().default_value(42).build())
        .field("attrs", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA).build())
        .field("inner", INNER)
        .build()
    )
    value = Struct(copy).put("id", 1).put("attrs", {}).put("inner", Struct(INNER).put("n", 2))
    assert data.writer(ROW, descriptor)(value) == data.writer(ROW, descriptor)(
        Struct(ROW).put("id", 1).put("attrs", {}).put("inner", Struct(INNER).put("n", 2))
    )


def test_a_message_without_a_required_struct_names_the_field() -> None:
    data = ProtobufData()
    _, descriptor = data.file_for(ROW)
    without_inner = data.message_class(descriptor)(id=1).SerializeToString()
    with pytest.raises(DataException, match="inner"):
        data.reader(ROW, descriptor)(without_inner)


def test_what_is_not_a_struct_is_refused_with_the_schema_name() -> None:
    data = ProtobufData()
    _, descriptor = data.file_for(ROW)
    with pytest.raises(DataException, match=r"Expected a Struct for schema com\.example\.Row, got dict"):
        data.writer(ROW, descriptor)({"id": 1})
