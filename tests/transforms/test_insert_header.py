"""InsertHeader: the literal is parsed once as Values.parseString and appended as a header."""

from __future__ import annotations

import pytest

from engine.api.errors import ConfigException
from engine.api.records import Header, SourceRecord
from engine.data import Schema
from engine.transforms.insert_header import InsertHeader


def _insert(literal: str) -> InsertHeader:
    t = InsertHeader()
    t.configure({"header": "h", "value.literal": literal})
    return t


@pytest.mark.parametrize(
    ("literal", "schema", "value"),
    [
        ("hello", Schema.STRING_SCHEMA, "hello"),
        ("true", Schema.BOOLEAN_SCHEMA, True),
        ("42", Schema.INT8_SCHEMA, 42),
        ("70000", Schema.INT32_SCHEMA, 70000),
        ("1.5", Schema.FLOAT64_SCHEMA, 1.5),
    ],
)
def test_literal_is_typed(literal: str, schema: Schema, value: object) -> None:
    out = _insert(literal).apply(SourceRecord(topic="t"))
    assert out.headers == (Header("h", value, schema),)


def test_appends_after_existing_headers_of_the_same_name() -> None:
    record = SourceRecord(topic="t", key="k", value="v", headers=(Header("h", "old"),))
    out = _insert("new").apply(record)
    assert [h.value for h in out.headers] == ["old", "new"]
    assert (out.key, out.value) == ("k", "v")


@pytest.mark.parametrize("configs", [{"header": "h"}, {"value.literal": "x"}])
def test_both_settings_are_required(configs: dict[str, str]) -> None:
    with pytest.raises(ConfigException, match="Missing required configuration"):
        InsertHeader().configure(configs)
