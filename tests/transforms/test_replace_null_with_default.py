"""KIP-1040 ``replace.null.with.default`` in the SMTs Connect 3.9 gave it: true (the default) reads a
null struct field as its schema default, false keeps the null."""

from __future__ import annotations

from typing import Any

import pytest

from engine.api.records import SourceRecord
from engine.data import Schema, SchemaBuilder, Struct
from engine.transforms.chain import TransformationChain

NOTE = SchemaBuilder.string().optional().default_value("dflt").build()
COUNT = SchemaBuilder.int32().optional().default_value(9).build()
SCHEMA = SchemaBuilder.struct().field("id", Schema.INT32_SCHEMA).field("note", NOTE).field("count", COUNT).build()


def record() -> SourceRecord:
    return SourceRecord(topic="t", value_schema=SCHEMA, value=Struct(SCHEMA).put("id", 1))


def _field(value: Any, name: str) -> Any:
    return value.get_without_default(name) if isinstance(value, Struct) else value


# alias config, and how to read the transformed note back (the struct's stored value, not its default)
CASES: dict[str, tuple[dict[str, str], Any]] = {
    "ExtractField$Value": ({"field": "note"}, lambda r: r.value),
    "InsertField$Value": ({"topic.field": "topic"}, lambda r: r.value.get_without_default("note")),
    "ReplaceField$Value": ({"renames": "note:remark"}, lambda r: r.value.get_without_default("remark")),
    "MaskField$Value": ({"fields": "id"}, lambda r: r.value.get_without_default("note")),
    "Cast$Value": ({"spec": "count:string"}, lambda r: r.value.get_without_default("count")),
    "TimestampConverter$Value": ({"field": "ts", "target.type": "unix"},
                                 lambda r: r.value.get_without_default("note")),
    "SetSchemaMetadata$Value": ({"schema.name": "renamed"}, lambda r: r.value.get_without_default("note")),
    "ValueToKey": ({"fields": "note"}, lambda r: r.key.get_without_default("note")),
    "HeaderFrom$Value": ({"fields": "note", "headers": "h", "operation": "copy"}, lambda r: r.headers[-1].value),
}
DEFAULTS = {"Cast$Value": "9"}


def _chain(alias: str, configs: dict[str, str], replace: str | None) -> TransformationChain[Any]:
    props = {"transforms": "x", "transforms.x.type": alias, **{f"transforms.x.{k}": v for k, v in configs.items()}}
    if replace is not None:
        props["transforms.x.replace.null.with.default"] = replace
    return TransformationChain.from_config(props)


@pytest.mark.parametrize("alias", CASES)
def test_default_true_reads_the_schema_default(alias: str) -> None:
    configs, read = CASES[alias]
    out = _chain(alias, configs, None).apply(record())
    assert read(out) == DEFAULTS.get(alias, "dflt")


@pytest.mark.parametrize("alias", CASES)
def test_false_keeps_the_null(alias: str) -> None:
    configs, read = CASES[alias]
    out = _chain(alias, configs, "false").apply(record())
    assert read(out) is None


@pytest.mark.parametrize("alias", CASES)
def test_the_key_is_declared_as_connect_declares_it(alias: str) -> None:
    stage = _chain(alias, CASES[alias][0], None).stages[0].transformation
    key = stage.config().config_keys["replace.null.with.default"]
    assert (key.type.value, key.default, key.importance.value) == ("BOOLEAN", True, "MEDIUM")
    assert key.documentation.startswith("Whether to replace fields that have a default value and that are null")
