"""The Protobuf mapping's per-record paths: every plain field read in one go, a Struct's values written by
index, and the checked path that names a required field a message leaves unset."""

from __future__ import annotations

import datetime as dt

import pytest

from engine.api.errors import DataException
from engine.converters.registry.protobuf_data import ProtobufData
from engine.data.builder import SchemaBuilder
from engine.data.logical import Timestamp
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


KIND = (
    SchemaBuilder.string()
    .parameter("io.confluent.connect.protobuf.Enum", "Kind")
    .parameter("io.confluent.connect.protobuf.Enum.NONE", "0")
    .parameter("io.confluent.connect.protobuf.Enum.BIG", "1")
    .build()
)
WIDE = (
    SchemaBuilder.struct()
    .name("com.example.Wide")
    .field("from", Schema.INT64_SCHEMA)  # Python keywords: set and read with setattr/getattr
    .field("class", Schema.OPTIONAL_STRING_SCHEMA)
    .field("note", Schema.OPTIONAL_STRING_SCHEMA)
    .field("count", Schema.OPTIONAL_INT32_SCHEMA)
    .field("ratio", Schema.FLOAT32_SCHEMA)
    .field("raw", Schema.BYTES_SCHEMA)
    .field("kind", KIND)
    .field("tags", SchemaBuilder.array(Schema.STRING_SCHEMA).build())
    .field("scores", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT64_SCHEMA).build())
    .field("by_id", SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.STRING_SCHEMA).build())
    .field(
        "inner",
        SchemaBuilder.struct().name("com.example.Inner").field("n", Schema.INT32_SCHEMA).optional().build(),
    )
    .field("at", Timestamp.builder().optional().build())
    .field("with_default", SchemaBuilder.int32().default_value(42).build())
    .build()
)


def _wide(note: str | None, count: int | None, empty: bool) -> Struct:
    inner = WIDE.field("inner")
    assert inner is not None
    return (
        Struct(WIDE)
        .put("from", 0 if empty else 2**40)
        .put("class", None if empty else "first")
        .put("note", note)
        .put("count", count)
        .put("ratio", 0.0 if empty else 0.5)
        .put("raw", b"" if empty else b"\x00\xff")
        .put("kind", "NONE" if empty else "BIG")
        .put("tags", [] if empty else ["a", "b"])
        .put("scores", {} if empty else {"x": -1, "y": 2**33})
        .put("by_id", {} if empty else {1: "one", -2: "minus two"})
        .put("inner", None if empty else Struct(inner.schema).put("n", 3))
        .put("at", None if empty else dt.datetime(2024, 5, 6, 7, 8, 9, 123000, tzinfo=dt.UTC))
    )


@pytest.mark.parametrize(
    ("note", "count", "empty"),
    [(None, None, True), ("", 0, True), ("gift", 7, False), (None, None, False)],
    ids=["unset", "set_to_defaults", "set", "optional_unset"],
)
def test_the_generated_paths_write_and_read_what_the_general_walk_does(
    note: str | None, count: int | None, empty: bool
) -> None:
    """Field for field against the per-field fillers and getters the generated functions replace: the
    same bytes written, the same Struct read (an optional scalar set to its default, "" or 0, stays
    set; unset, it reads null)."""
    data = ProtobufData()
    _, descriptor = data.file_for(WIDE)
    cls = data.message_class(descriptor)
    value = _wide(note, count, empty)
    general = cls()
    data._filler(WIDE, descriptor)(general, value)
    written = data.writer(WIDE, descriptor)(value)
    assert written == general.SerializeToString()
    connect = data.to_connect_schema(descriptor)
    read = data.reader(connect, descriptor)(written)
    assert read == data._message_out(connect, descriptor)(cls.FromString(written))
    assert read.get("note") == note
    assert read.get("count") == count
    assert read.get("from") == value.get("from")
    assert read.get("scores") == value.get("scores")
    assert read.get("by_id") == value.get("by_id")
    assert read.get("with_default") == 42


def test_a_framed_reader_reads_the_first_message_itself_and_hands_other_indexes_on() -> None:
    data = ProtobufData()
    _, descriptor = data.file_for(ROW)
    message = data.writer(ROW, descriptor)(_row("gift"))
    handed: list[bytes] = []

    def other(record: bytes) -> str:
        handed.append(record)
        return "other"

    read = data.reader(ROW, descriptor, framed=other)
    assert read(b"\x00\x00\x00\x00\x07\x00" + message) == _row("gift").put("with_default", 42)
    assert read(b"\x00\x00\x00\x00\x07\x02\x02" + message) == "other"
    assert handed == [b"\x00\x00\x00\x00\x07\x02\x02" + message]
