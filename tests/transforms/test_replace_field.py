"""ReplaceField: exclude wins over include, renames follow, deprecated aliases, nulls pass."""

from __future__ import annotations

import pytest

from engine.api.errors import ConfigException, DataException
from engine.api.records import SourceRecord
from engine.data import Schema, SchemaBuilder, Struct
from engine.transforms.replace_field import ReplaceField, ReplaceFieldKey, ReplaceFieldValue
from tests.transforms.smt import smt

SCHEMA = (
    SchemaBuilder.struct()
    .name("row")
    .field("id", Schema.INT32_SCHEMA)
    .field("name", Schema.STRING_SCHEMA)
    .field("secret", Schema.OPTIONAL_STRING_SCHEMA)
    .field("zone", SchemaBuilder.string().optional().default_value("eu").build())
    .build()
)


def row() -> Struct:
    return Struct(SCHEMA).put("id", 7).put("name", "ada").put("secret", "s3")


def with_value(value: object, schema: Schema | None = None) -> SourceRecord:
    return SourceRecord(topic="t", key="k", value_schema=schema, value=value)


def test_variants_are_published_on_the_base_class() -> None:
    assert ReplaceField.Key is ReplaceFieldKey
    assert ReplaceField.Value is ReplaceFieldValue


def test_struct_fields_are_excluded_and_renamed_with_defaults_applied() -> None:
    out = smt(ReplaceField.Value, exclude="secret", renames="name:full_name,zone:region").apply(
        with_value(row(), SCHEMA)
    )
    assert out.value_schema is not None
    assert [f.name for f in out.value_schema.fields] == ["id", "full_name", "region"]
    assert out.value_schema.name == "row"
    assert (out.value.get("id"), out.value.get("full_name"), out.value.get("region")) == (7, "ada", "eu")


def test_exclude_takes_precedence_over_include() -> None:
    out = smt(ReplaceField.Value, include="id,secret", exclude="secret").apply(
        with_value({"id": 1, "secret": 2, "x": 3})
    )
    assert out.value == {"id": 1}


def test_the_key_variant_filters_the_key_only() -> None:
    key = row()
    out = smt(ReplaceField.Key, include="id").apply(
        SourceRecord(topic="t", key_schema=SCHEMA, key=key, value="v")
    )
    assert out.key_schema is not None
    assert [f.name for f in out.key_schema.fields] == ["id"]
    assert (out.key.get("id"), out.value) == (7, "v")


def test_deprecated_aliases_apply_only_when_the_new_names_are_unset() -> None:
    value = {"a": 1, "b": 2, "c": 3}
    assert smt(ReplaceField.Value, blacklist="a").apply(with_value(value)).value == {"b": 2, "c": 3}
    assert smt(ReplaceField.Value, whitelist="a").apply(with_value(value)).value == {"a": 1}
    assert smt(ReplaceField.Value, exclude="b", blacklist="a").apply(with_value(value)).value == {
        "a": 1,
        "c": 3,
    }


def test_null_values_pass_through_unchanged() -> None:
    for record in (with_value(None), with_value(None, SCHEMA)):
        assert smt(ReplaceField.Value, exclude="id").apply(record) is record


def test_bad_rename_mappings_are_config_errors() -> None:
    with pytest.raises(
        ConfigException,
        match=r"Invalid value \[a\] for configuration renames: "
        r"Invalid rename mapping: a",
    ):
        smt(ReplaceField.Value, renames="a")
    with pytest.raises(ConfigException, match="Invalid rename mapping: a:b:c"):
        smt(ReplaceField.Value, renames="a:b:c")
    errors = ReplaceField.Value().config().validate_all({"renames": "x"})["renames"].errors
    assert any("Invalid rename mapping: x" in e for e in errors)


def test_wrong_shapes_are_data_errors_with_kafkas_messages() -> None:
    with pytest.raises(
        DataException, match=r"Only Struct objects supported for \[field replacement\], found: dict"
    ):
        smt(ReplaceField.Value, exclude="a").apply(with_value({"a": 1}, SCHEMA))
    with pytest.raises(
        DataException,
        match=r"Only Map objects supported in absence of schema for \[field replacement\], found: int",
    ):
        smt(ReplaceField.Value, exclude="a").apply(with_value(1))
