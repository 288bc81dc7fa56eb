"""HoistField: the key or value is wrapped in a one-field Struct (with a schema) or map (without)."""

from __future__ import annotations

import pytest

from engine.api.errors import ConfigException, DataException
from engine.api.records import SourceRecord
from engine.data import Schema
from engine.transforms.hoist_field import HoistField, HoistFieldKey, HoistFieldValue
from tests.transforms.smt import smt


def test_variants_are_published_on_the_base_class() -> None:
    assert HoistField.Key is HoistFieldKey
    assert HoistField.Value is HoistFieldValue


def test_a_key_with_a_schema_is_wrapped_in_a_struct() -> None:
    out = smt(HoistField.Key, field="wrapped").apply(
        SourceRecord(topic="t", key_schema=Schema.INT64_SCHEMA, key=5, value="v")
    )
    assert out.key_schema is not None
    assert [(f.name, f.schema) for f in out.key_schema.fields] == [("wrapped", Schema.INT64_SCHEMA)]
    assert (out.key.get("wrapped"), out.value) == (5, "v")


def test_a_schemaless_value_is_wrapped_in_a_map_even_when_null() -> None:
    assert smt(HoistField.Value, field="w").apply(SourceRecord(topic="t", value=[1])).value == {"w": [1]}
    assert smt(HoistField.Value, field="w").apply(SourceRecord(topic="t", value=None)).value == {"w": None}


def test_a_null_with_an_optional_schema_is_wrapped_and_with_a_required_one_refused() -> None:
    out = smt(HoistField.Value, field="w").apply(
        SourceRecord(topic="t", value_schema=Schema.OPTIONAL_STRING_SCHEMA, value=None)
    )
    assert out.value.get("w") is None
    with pytest.raises(DataException, match="null used for required"):
        smt(HoistField.Value, field="w").apply(
            SourceRecord(topic="t", value_schema=Schema.STRING_SCHEMA, value=None)
        )


def test_the_wrapper_schema_is_reused_for_the_same_input_schema() -> None:
    hoist = smt(HoistField.Value, field="w")
    first = hoist.apply(SourceRecord(topic="t", value_schema=Schema.STRING_SCHEMA, value="a"))
    second = hoist.apply(SourceRecord(topic="t", value_schema=Schema.STRING_SCHEMA, value="b"))
    assert first.value_schema is second.value_schema


def test_the_field_setting_is_required() -> None:
    with pytest.raises(ConfigException, match="field"):
        smt(HoistField.Value)
