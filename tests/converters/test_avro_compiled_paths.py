"""The Avro converter's per-record paths: the generated writer and reader around fastavro's compiled
encoder and decoder, and the record decoder generated per schema (``avro_decoder``), made once per
schema, against fastavro's public ``schemaless_writer`` and ``schemaless_reader`` (what the converter
falls back to without fastavro's C extension): the same bytes and the same Connect values for every
kind of field, unions included; a truncated record is an ``EOFError`` either way."""

from __future__ import annotations

import datetime as dt
import decimal
import io
import json
from typing import Any

import fastavro
import pytest
from fastavro.read import LOGICAL_READERS

from engine.api.errors import DataException
from engine.converters.registry import avro
from engine.converters.registry.avro_data import AvroData
from engine.converters.registry.avro_decoder import values_decoder
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


def _values(parsed: Any) -> Any:
    decode = values_decoder(parsed, LOGICAL_READERS)
    assert decode is not None
    return decode


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
        data.reader(connect, writing, *avro._decoder(fastavro, parsed, union), values=_values(parsed)),
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


DECODED = {
    "type": "record",
    "name": "Decoded",
    "namespace": "com.example",
    "fields": [
        {"name": "i", "type": "int"},
        {"name": "l", "type": "long"},
        {"name": "f", "type": "float"},
        {"name": "d", "type": "double"},
        {"name": "b", "type": "boolean"},
        {"name": "s", "type": "string"},
        {"name": "raw", "type": "bytes"},
        {"name": "n", "type": "null"},
        {"name": "opt", "type": ["null", "long"]},
        {"name": "opt_last", "type": ["string", "null"]},
        {"name": "dec", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 3}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "tm", "type": {"type": "int", "logicalType": "time-millis"}},
        {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "id", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "odd", "type": {"type": "long", "logicalType": "not-a-logical-type"}},
        {"name": "list", "type": {"type": "array", "items": ["null", "double"]}},
        {"name": "nested", "type": {"type": "map", "values": {"type": "array", "items": "string"}}},
        {
            "name": "inner",
            "type": {
                "type": "record",
                "name": "Inner",
                "fields": [
                    {"name": "x", "type": "int"},
                    {"name": "tags", "type": {"type": "map", "values": "long"}},
                ],
            },
        },
    ],
}


def _decoded(i: int) -> dict[str, Any]:
    import uuid

    return {
        "i": -(2**31) if i % 2 else 2**31 - 1,
        "l": -(2**63) if i % 2 else 2**63 - 1,
        "f": 1.1,
        "d": -0.0 if i % 2 else 1e308,
        "b": bool(i % 2),
        "s": "héllo ✓" * i,
        "raw": bytes(range(i * 40 % 256)),
        "n": None,
        "opt": None if i % 2 else 300,
        "opt_last": "x" if i % 2 else None,
        "dec": decimal.Decimal("-1234567.891"),
        "day": dt.date(1969, 12, 31 - i % 3),
        "tm": dt.time(23, 59, 59, 999000),
        "ts": dt.datetime(2024, 1, 2, 3, 4, 5, 678901, tzinfo=dt.UTC),
        "id": uuid.UUID(int=i),
        "odd": -i,
        "list": [1.5, None, -2.25] * i,
        "nested": {f"k{j}": [str(j)] * j for j in range(i)},
        "inner": {"x": i, "tags": {"a": i, "b": -i}},
    }


@pytest.mark.parametrize("i", [0, 1, 2, 7])
def test_the_generated_decoder_reads_what_fastavro_reads(i: int) -> None:
    parsed = fastavro.parse_schema(DECODED)
    decode = _values(parsed)
    payload = _schemaless(DECODED, _decoded(i))
    expected: Any = fastavro.schemaless_reader(io.BytesIO(payload), parsed, None)
    got = decode(b"\x00\x00\x00\x00\x01" + payload)
    assert got == list(expected.values())
    assert [type(v) for v in got] == [type(v) for v in expected.values()]


def test_blocks_with_a_byte_size_and_several_blocks_decode_as_fastavro_decodes_them() -> None:
    """Writers other than fastavro may write a negative count followed by the block's byte size, and
    split a map or an array into several blocks."""
    schema = {
        "type": "record",
        "name": "Blocks",
        "fields": [
            {"name": "m", "type": {"type": "map", "values": "int"}},
            {"name": "a", "type": {"type": "array", "items": "string"}},
        ],
    }
    parsed = fastavro.parse_schema(schema)
    # map: a block of -1 entry (size 3 bytes) {"a": 1}, a block of 1 entry {"b": 2}, end;
    # array: a block of 2 ["x", "y"], a block of -1 (size 2) ["z"], end
    payload = bytes([1, 6, 2, 97, 2, 2, 2, 98, 4, 0, 4, 2, 120, 2, 121, 1, 4, 2, 122, 0])
    expected: Any = fastavro.schemaless_reader(io.BytesIO(payload), parsed, None)
    assert expected == {"m": {"a": 1, "b": 2}, "a": ["x", "y", "z"]}
    assert _values(parsed)(b"\x00\x00\x00\x00\x01" + payload) == list(expected.values())


@pytest.mark.parametrize("cut", [6, 9, 12, 20])
def test_a_truncated_record_is_an_eof_error_as_with_fastavro(cut: int) -> None:
    """fastavro raises EOFError, or IndexError cut inside a varint; both are the record's
    ``DataException`` in the converter."""
    parsed = fastavro.parse_schema(DECODED)
    framed = b"\x00\x00\x00\x00\x01" + _schemaless(DECODED, _decoded(2))
    with pytest.raises((EOFError, IndexError)):
        fastavro.schemaless_reader(io.BytesIO(framed[5:cut]), parsed, None)
    with pytest.raises(EOFError):
        _values(parsed)(framed[:cut])


@pytest.mark.parametrize(
    "field",
    [
        {"type": "enum", "name": "E", "symbols": ["A"]},
        {"type": "fixed", "name": "F", "size": 2},
        ["null", "int", "string"],
        ["int", "string"],
    ],
    ids=["enum", "fixed", "union_of_three", "union_without_null"],
)
def test_schemas_the_decoder_cannot_promise_are_left_to_fastavro(field: Any) -> None:
    schema = {"type": "record", "name": "R", "fields": [{"name": "x", "type": field}]}
    parsed: Any = fastavro.parse_schema(schema)
    assert values_decoder(parsed, LOGICAL_READERS) is None
