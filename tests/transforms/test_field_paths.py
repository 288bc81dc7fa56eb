"""KIP-821 nested field paths (``field.syntax.version``), as Connect's ``SingleFieldPath`` and
``ExtractField`` (3.8) and ``ValueToKey`` (4.4), the SMTs Connect gives the V2 syntax, read them."""

from __future__ import annotations

import pytest

from engine.api.errors import ConfigException, DataException
from engine.api.records import SourceRecord
from engine.data import Schema, SchemaBuilder, Struct
from engine.transforms.chain import TransformationChain
from engine.transforms.extract_field import ExtractField
from engine.transforms.field_path import FieldSyntaxVersion, SingleFieldPath
from engine.validation.framework import validate_config_infos
from tests.transforms.smt import smt

INNER = (
    SchemaBuilder.struct()
    .field("city", Schema.STRING_SCHEMA)
    .field("zip", SchemaBuilder.string().optional().default_value("00000").build())
    .build()
)
OUTER = (
    SchemaBuilder.struct()
    .field("id", Schema.INT32_SCHEMA)
    .field("address", INNER)
    .field("a.b", Schema.STRING_SCHEMA)
    .build()
)


def outer() -> Struct:
    return Struct(OUTER).put("id", 1).put("address", Struct(INNER).put("city", "Oslo")).put("a.b", "dotted")


@pytest.mark.parametrize(
    ("path", "steps"),
    [  # Kafka's FieldPathNotationTest cases
        ("..", ["", "", ""]),
        ("foo..", ["foo", "", ""]),
        (".bar.", ["", "bar", ""]),
        ("..baz", ["", "", "baz"]),
        ("", []),
        ("foobarbaz", ["foobarbaz"]),
        ("foo.bar.baz", ["foo", "bar", "baz"]),
        ("foo`bar`baz", ["foo`bar`baz"]),
        ("`foo.bar.baz`", ["foo.bar.baz"]),
        ("foo.`bar.baz`", ["foo", "bar.baz"]),
        ("`foo.bar`.baz", ["foo.bar", "baz"]),
        ("foo.`bar`.baz", ["foo", "bar", "baz"]),
        ("foo.``bar.baz`", ["foo", "`bar.baz"]),
        ("foo.`bar.baz``", ["foo", "bar.baz`"]),
        ("foo.`ba`r.baz`", ["foo", "ba`r.baz"]),
        ("foo.ba`r.baz", ["foo", "ba`r", "baz"]),
        ("foo.``bar``.baz", ["foo", "`bar`", "baz"]),
        ("``foo.bar.baz``", ["`foo.bar.baz`"]),
        ("foo.`bar\\`.baz`", ["foo", "bar`.baz"]),
        ("foo.`bar.`baz`", ["foo", "bar.`baz"]),
        ("foo.`bar\\`.`baz`", ["foo", "bar`.`baz"]),
        ("foo.`bar\\\\`.\\`baz`", ["foo", "bar\\`.\\`baz"]),
    ],
)
def test_v2_paths_split_as_connect_splits_them(path: str, steps: list[str]) -> None:
    assert list(SingleFieldPath(path, FieldSyntaxVersion.V2).steps) == steps


def test_v1_keeps_the_whole_text_as_one_name() -> None:
    assert SingleFieldPath("`a.b`.c", FieldSyntaxVersion.V1).steps == ("`a.b`.c",)


@pytest.mark.parametrize(
    ("path", "position"),
    [("`foo.bar.baz", 0), ("foo.`bar.baz", 4), ("foo.bar.`baz", 8), ("foo.bar.`baz\\`", 8)],
)
def test_an_unclosed_backtick_is_refused_with_connects_message(path: str, position: int) -> None:
    with pytest.raises(ConfigException) as raised:
        SingleFieldPath(path, FieldSyntaxVersion.V2)
    assert str(raised.value) == (
        f"Incomplete backtick pair in path: [{path}], consider adding a backslash before "
        f"backtick at position {position} to escape it"
    )


def test_v2_extracts_a_nested_struct_field_and_its_schema() -> None:
    out = smt(ExtractField.Value, field="address.city", **{"field.syntax.version": "v2"}).apply(
        SourceRecord(topic="t", value_schema=OUTER, value=outer())
    )
    assert (out.value_schema, out.value) == (Schema.STRING_SCHEMA, "Oslo")


def test_v2_backticks_name_a_field_with_a_dot() -> None:
    out = smt(ExtractField.Value, field="`a.b`", **{"field.syntax.version": "V2"}).apply(
        SourceRecord(topic="t", value_schema=OUTER, value=outer())
    )
    assert out.value == "dotted"


def test_v1_reads_a_dotted_name_as_one_top_level_field() -> None:
    out = smt(ExtractField.Value, field="a.b").apply(
        SourceRecord(topic="t", value_schema=OUTER, value=outer())
    )
    assert out.value == "dotted"
    with pytest.raises(DataException, match=r"^Unknown field: address\.city$"):
        smt(ExtractField.Value, field="address.city").apply(
            SourceRecord(topic="t", value_schema=OUTER, value=outer())
        )


def test_v2_missing_nested_field_with_a_schema_is_unknown() -> None:
    with pytest.raises(DataException, match=r"^Unknown field: address\.nope$"):
        smt(ExtractField.Value, field="address.nope", **{"field.syntax.version": "V2"}).apply(
            SourceRecord(topic="t", value_schema=OUTER, value=outer())
        )


def test_v2_reads_nested_maps_and_a_missing_step_gives_null() -> None:
    transform = smt(ExtractField.Key, field="a.b.c", **{"field.syntax.version": "V2"})
    assert transform.apply(SourceRecord(topic="t", key={"a": {"b": {"c": 5}}}, value="v")).key == 5
    assert transform.apply(SourceRecord(topic="t", key={"a": {}}, value="v")).key is None
    assert transform.apply(SourceRecord(topic="t", key={"a": None}, value="v")).key is None
    with pytest.raises(
        DataException,
        match=r"Only Map objects supported in absence of schema for \[nested field "
        r"access\], found: int",
    ):
        transform.apply(SourceRecord(topic="t", key={"a": 3}, value="v"))


def test_v2_nested_default_and_replace_null_with_default() -> None:
    record = SourceRecord(topic="t", value_schema=OUTER, value=outer())
    v2 = {"field.syntax.version": "V2"}
    assert smt(ExtractField.Value, field="address.zip", **v2).apply(record).value == "00000"
    assert (
        smt(ExtractField.Value, field="address.zip", **v2, **{"replace.null.with.default": "false"})
        .apply(record)
        .value
        is None
    )


def test_an_unknown_version_is_refused_by_the_chain() -> None:
    with pytest.raises(ConfigException, match=r"field\.syntax\.version"):
        TransformationChain.from_config(
            {
                "transforms": "x",
                "transforms.x.type": "ExtractField$Value",
                "transforms.x.field": "a",
                "transforms.x.field.syntax.version": "V3",
            }
        )


def test_the_chain_runs_a_v2_extract_as_a_connector_config_writes_it() -> None:
    chain = TransformationChain.from_config(
        {
            "transforms": "x",
            "transforms.x.type": "org.apache.kafka.connect.transforms.ExtractField$Value",
            "transforms.x.field": "address.city",
            "transforms.x.field.syntax.version": "V2",
        }
    )
    out = chain.apply(SourceRecord(topic="t", value_schema=OUTER, value=outer()))
    assert out is not None
    assert out.value == "Oslo"


async def test_validation_lists_the_new_keys_with_connects_defaults() -> None:
    infos = await validate_config_infos(
        {
            "connector.class": "engine.testing.RecordingSourceConnector",
            "name": "c",
            "transforms": "x",
            "transforms.x.type": "ExtractField$Value",
            "transforms.x.field": "a",
            "transforms.x.field.syntax.version": "V9",
        }
    )
    configs = {(c["definition"] or c["value"])["name"]: c for c in infos["configs"]}
    version = configs["transforms.x.field.syntax.version"]
    assert version["definition"]["default_value"] == "V1"
    assert version["value"]["errors"] == [
        "Invalid value V9 for configuration field.syntax.version: String must be one of (case insensitive): V1, V2"
    ]
    assert configs["transforms.x.replace.null.with.default"]["definition"]["default_value"] == "true"
