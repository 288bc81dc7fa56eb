"""SetSchemaMetadata: renames/re-versions the key or value schema; Structs follow the new schema."""

from __future__ import annotations

import pytest

from engine.api.errors import ConfigException, DataException
from engine.api.records import SourceRecord
from engine.data import Schema, SchemaBuilder, Struct
from engine.transforms.set_schema_metadata import SetSchemaMetadata

SCHEMA = SchemaBuilder.struct().name("old").version(1).doc("d").field("a", Schema.INT32_SCHEMA).build()


def _smt(cls: type[SetSchemaMetadata], **configs: str) -> SetSchemaMetadata:
    t = cls()
    t.configure(configs)
    return t


def test_value_struct_gets_name_and_version() -> None:
    value = Struct(SCHEMA).put("a", 1)
    out = _smt(SetSchemaMetadata.Value, **{"schema.name": "new", "schema.version": "7"}).apply(
        SourceRecord(topic="t", value_schema=SCHEMA, value=value)
    )
    assert out.value_schema is not None
    assert (out.value_schema.name, out.value_schema.version, out.value_schema.doc) == ("new", 7, "d")
    assert out.value.schema == out.value_schema
    assert out.value.get("a") == 1


def test_key_keeps_unset_attributes() -> None:
    schema = SchemaBuilder.int64().name("k").version(3).build()
    out = _smt(SetSchemaMetadata.Key, **{"schema.version": "4"}).apply(
        SourceRecord(topic="t", key_schema=schema, key=5, value="v")
    )
    assert (out.key_schema.name, out.key_schema.version, out.key) == ("k", 4, 5)
    assert out.value == "v"


def test_map_and_array_keep_their_children() -> None:
    schema = SchemaBuilder.map(Schema.STRING_SCHEMA, SchemaBuilder.array(Schema.INT8_SCHEMA)).build()
    out = _smt(SetSchemaMetadata.Value, **{"schema.name": "m"}).apply(
        SourceRecord(topic="t", value_schema=schema, value={"x": [1]})
    )
    assert out.value_schema.key_schema == Schema.STRING_SCHEMA
    assert out.value_schema.value_schema == schema.value_schema
    assert out.value == {"x": [1]}


def test_null_schema_and_value_pass_unchanged() -> None:
    record = SourceRecord(topic="t", value=None)
    assert _smt(SetSchemaMetadata.Value, **{"schema.name": "x"}).apply(record) is record


def test_schemaless_value_is_refused() -> None:
    with pytest.raises(DataException, match="Schema required for \\[updating schema metadata\\]"):
        _smt(SetSchemaMetadata.Value, **{"schema.name": "x"}).apply(SourceRecord(topic="t", value={"a": 1}))


def test_neither_name_nor_version() -> None:
    with pytest.raises(ConfigException, match="Neither schema name nor version configured"):
        SetSchemaMetadata.Value().configure({})


def test_version_must_be_an_int() -> None:
    with pytest.raises(ConfigException, match=r"schema\.version"):
        SetSchemaMetadata.Value().configure({"schema.version": "x"})


def test_base_class_is_abstract() -> None:
    with pytest.raises(TypeError):
        SetSchemaMetadata()  # type: ignore[abstract]
