"""HeaderFrom: copy or move key/value fields into headers, with and without schemas."""

from __future__ import annotations

import pytest

from engine.api.errors import ConfigException, DataException
from engine.api.records import Header, SourceRecord
from engine.data import Schema, SchemaBuilder, Struct
from engine.transforms.header_from import HeaderFrom

SCHEMA = (
    SchemaBuilder.struct()
    .name("s")
    .field("id", Schema.INT32_SCHEMA)
    .field("name", Schema.OPTIONAL_STRING_SCHEMA)
    .field("keep", Schema.BOOLEAN_SCHEMA)
    .build()
)


def _smt(
    cls: type[HeaderFrom], operation: str, fields: str = "id,name", headers: str = "h_id,h_name"
) -> HeaderFrom:
    t = cls()
    t.configure({"fields": fields, "headers": headers, "operation": operation})
    return t


def _struct() -> Struct:
    return Struct(SCHEMA).put("id", 1).put("name", "n").put("keep", True)


def test_copy_from_value_struct() -> None:
    record = SourceRecord(topic="t", value_schema=SCHEMA, value=_struct(), headers=(Header("x", 0),))
    out = _smt(HeaderFrom.Value, "copy").apply(record)
    assert out.value_schema == SCHEMA
    assert out.value == _struct()
    assert out.headers == (
        Header("x", 0),
        Header("h_id", 1, Schema.INT32_SCHEMA),
        Header("h_name", "n", Schema.OPTIONAL_STRING_SCHEMA),
    )


def test_move_from_key_struct_drops_the_fields() -> None:
    record = SourceRecord(topic="t", key_schema=SCHEMA, key=_struct(), value="v")
    out = _smt(HeaderFrom.Key, "move").apply(record)
    assert [f.name for f in out.key_schema.fields] == ["keep"]
    assert out.key_schema.name == "s"
    assert out.key.get("keep") is True
    assert [h.key for h in out.headers] == ["h_id", "h_name"]
    assert out.value == "v"


def test_schemaless_copy_and_move() -> None:
    record = SourceRecord(topic="t", value={"id": 1, "name": "n", "keep": True})
    copied = _smt(HeaderFrom.Value, "copy").apply(record)
    assert copied.value == {"id": 1, "name": "n", "keep": True}
    assert copied.headers == (Header("h_id", 1), Header("h_name", "n"))
    moved = _smt(HeaderFrom.Value, "move").apply(record)
    assert moved.value == {"keep": True}
    assert moved.value_schema is None


def test_schemaless_missing_field_gives_a_null_header() -> None:
    out = _smt(HeaderFrom.Value, "copy", "absent", "h").apply(SourceRecord(topic="t", value={}))
    assert out.headers == (Header("h", None),)


def test_wrong_value_types() -> None:
    with pytest.raises(
        DataException,
        match="Only Map objects supported in absence of schema for \\[header copy\\], found: str",
    ):
        _smt(HeaderFrom.Value, "copy").apply(SourceRecord(topic="t", value="x"))
    with pytest.raises(
        DataException, match="Only Struct objects supported for \\[header move\\], found: dict"
    ):
        _smt(HeaderFrom.Value, "move").apply(SourceRecord(topic="t", value_schema=SCHEMA, value={}))


def test_config_errors() -> None:
    with pytest.raises(
        ConfigException, match=r"'fields' config must have the same number of elements as 'headers' config\."
    ):
        _smt(HeaderFrom.Value, "copy", "a,b", "h")
    with pytest.raises(ConfigException, match="String must be one of: move, copy"):
        _smt(HeaderFrom.Value, "swap")
    with pytest.raises(ConfigException, match="Empty list"):
        _smt(HeaderFrom.Value, "copy", "", "")
