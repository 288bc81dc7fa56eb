"""The Avro converter's per-record paths: the generated writer and reader around fastavro's compiled
encoder and decoder, made once per schema, against fastavro's public ``schemaless_writer`` and
``schemaless_reader`` (what the converter falls back to without fastavro's C extension): the same
bytes and the same Connect values for every kind of field, unions included."""

from __future__ import annotations

import datetime as dt
import decimal
import io
import json
from typing import Any

import fastavro
import pytest

from engine.api.errors import DataException
from engine.converters.registry import avro
from engine.converters.registry.avro_data import AvroData
from engine.data.builder import SchemaBuilder
from engine.data.logical import Date, Decimal, Timestamp
from engine.data.schema import Schema
from engine.data.values import Struct

INNER = SchemaBuilder.struct().name("com.example.Inner").field("n", Schema.INT32_SCHEMA).optional().build()
ENTRY = SchemaBuilder.struct().name("com.example.Entry").field("n", Schema.INT32_SCHEMA).build()
WIDE = (
    SchemaBuilder.struct()
    .name("com.example.Wide")
    .field("id", Schema.INT64_SCHEMA)
    .field("small", Schema.INT8_SCHEMA)
    .field("note", Schema.OPTIONAL_STRING_SCHEMA)
    .field("with_default", SchemaBuilder.int32().default_value(42).build())
    .field("ratio", Schema.FLOAT32_SCHEMA)
    .field("raw", Schema.BYTES_SCHEMA)
    .field("amount", Decimal.schema(2))
    .field("day", Date.schema())
    .field("at", Timestamp.builder().optional().build())
    .field("tags", SchemaBuilder.array(Schema.STRING_SCHEMA).build())
    .field("attrs", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA).build())
    .field("by_id", SchemaBuilder.map(Schema.INT32_SCHEMA, ENTRY).build())
    .field("inner", INNER)
    .build()
)


def _wide(full: bool) -> Struct:
    inner = Struct(INNER).put("n", 3)
    value = (
        Struct(WIDE)
        .put("id", 2**40 if full else 0)
        .put("small", -5)
        .put("note", "gift" if full else None)
        .put("ratio", 0.5)
        .put("raw", b"\x00\xff" if full else b"")
        .put("amount", decimal.Decimal("12.34"))
        .put("day", dt.date(2024, 5, 6))
        .put("at", dt.datetime(2024, 5, 6, 7, 8, 9, 123000, tzinfo=dt.UTC) if full else None)
        .put("tags", ["a", "b"] if full else [])
        .put("attrs", {"color": "red"} if full else {})
        .put("by_id", {1: Struct(ENTRY).put("n", 3), -2: Struct(ENTRY).put("n", 4)} if full else {})
        .put("inner", inner if full else None)
    )
    return value.put("with_default", 7) if full else value  # unset: written as its default


def _public_decoder(parsed: Any, union: bool) -> tuple[Any, ...]:
    return fastavro.schemaless_reader, parsed, None, union, union


def _paths(schema: Schema) -> tuple[Any, Any, Any, Any]:
    """(compiled writer, public writer, compiled reader, public reader) for ``schema``."""
    data = AvroData()
    writing = data.from_connect_schema(schema)
    parsed = fastavro.parse_schema(writing)
    public = (avro._public_encode, fastavro.schemaless_writer, parsed)
    connect = data.to_connect_schema(writing)
    union = avro._has_union(writing)
    return (
        data.writer(schema, *avro._encoder(fastavro, parsed)),
        data.writer(schema, *public),
        data.reader(connect, writing, *avro._decoder(fastavro, parsed, union)),
        data.reader(connect, writing, *_public_decoder(parsed, union)),
    )


def test_fastavro_has_the_compiled_entry_points_the_converter_uses() -> None:
    """Without them the converter falls back to the public functions (slower, same bytes): this says
    when a fastavro release moved them."""
    assert avro._encoder(fastavro, fastavro.parse_schema("long"))[0] is not avro._public_encode
    assert avro._decoder(fastavro, fastavro.parse_schema("long"), False)[0] is not fastavro.schemaless_reader


@pytest.mark.parametrize("full", [True, False], ids=["set", "nulls_and_defaults"])
def test_the_compiled_paths_write_and_read_what_fastavros_public_functions_do(full: bool) -> None:
    write, write_public, read, read_public = _paths(WIDE)
    value = _wide(full)
    written = bytes(write(value))
    assert written == bytes(write_public(value))
    assert written == _schemaless(AvroData().from_connect_schema(WIDE), AvroData().to_avro(WIDE)(value))
    framed = b"\x00\x00\x00\x00\x01" + written
    back = read(framed)
    assert back == read_public(framed)
    assert back.get("with_default") == (7 if full else 42)
    assert back.get("note") == ("gift" if full else None)
    assert back.get("by_id") == value.get("by_id")
    if full:
        assert back.get("at") == value.get("at")


def test_a_union_of_records_reads_the_same_both_ways() -> None:
    writer_schema = {
        "type": "record",
        "name": "Holder",
        "namespace": "com.example",
        "fields": [
            {
                "name": "either",
                "type": [
                    "null",
                    {"type": "record", "name": "A", "fields": [{"name": "a", "type": "int"}]},
                    {"type": "record", "name": "B", "fields": [{"name": "b", "type": "string"}]},
                ],
            },
            {"name": "n", "type": ["null", "long", "string"]},
        ],
    }
    data = AvroData()
    parsed = fastavro.parse_schema(writer_schema)
    connect = data.to_connect_schema(writer_schema)
    compiled = data.reader(connect, writer_schema, *avro._decoder(fastavro, parsed, True))
    public = data.reader(connect, writer_schema, *_public_decoder(parsed, True))
    for record in (
        {"either": ("com.example.B", {"b": "x"}), "n": 5},
        {"either": {"a": 1}, "n": "five"},
        {"either": None, "n": None},
    ):
        framed = b"\x00\x00\x00\x00\x01" + _schemaless(writer_schema, record)
        assert compiled(framed) == public(framed)
    either = compiled(b"\x00\x00\x00\x00\x01" + _schemaless(writer_schema, {"either": {"a": 1}, "n": 5}))
    assert either.get("either").get("A").get("a") == 1


def test_the_compiled_writer_refuses_what_is_not_a_struct_with_the_schema_name() -> None:
    write, _, _, _ = _paths(WIDE)
    with pytest.raises(DataException, match=r"Expected a Struct for schema com\.example\.Wide, got dict"):
        write({"id": 1})


def _schemaless(schema: Any, record: Any) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(schema), record)
    return out.getvalue()


def test_interleaved_schema_ids_each_read_with_their_own_schema_and_a_bad_header_is_refused() -> None:
    """The converter keeps the last record's 5-byte header to skip unframing: a record of another id
    (or a damaged header) after it goes the full way."""
    small = SchemaBuilder.struct().name("com.example.Small").field("s", Schema.STRING_SCHEMA).build()
    converter = avro.AvroConverter()
    converter.configure({"schema.registry.url": "http://127.0.0.1:9"}, False)  # never asked: cached
    data = AvroData()
    framed = {}
    for schema_id, schema, value in ((1, WIDE, _wide(True)), (2, small, Struct(small).put("s", "x"))):
        writing = data.from_connect_schema(schema)
        converter._reads.put(schema_id, converter._prepare_read(json.dumps(writing), {}))
        framed[schema_id] = (
            b"\x00" + schema_id.to_bytes(4, "big") + _schemaless(writing, data.to_avro(schema)(value))
        )
    for schema_id in (1, 1, 2, 1, 2, 2):
        read = converter.to_connect_data("t", framed[schema_id])
        assert read.schema is not None
        assert read.schema.name == ("com.example.Wide" if schema_id == 1 else "com.example.Small")
    with pytest.raises(DataException, match=r"Unknown magic byte! \(got 0x01, expected 0x00\)"):
        converter.to_connect_data("t", b"\x01" + framed[2][1:])
    with pytest.raises(DataException, match="shorter than the 5-byte header"):
        converter.to_connect_data("t", framed[2][:3])
