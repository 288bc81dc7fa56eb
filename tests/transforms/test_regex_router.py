"""RegexRouter: full-match, then replaceFirst with Java's replacement syntax."""

from __future__ import annotations

import re

import pytest

from engine.api.errors import ConfigException
from engine.api.records import Header, SinkRecord, SourceRecord
from engine.transforms.regex_router import RegexRouter, java_regex, java_replacement


def _route(regex: str, replacement: str, topic: str) -> str:
    t = RegexRouter()
    t.configure({"regex": regex, "replacement": replacement})
    return t.apply(SourceRecord(topic=topic)).topic


@pytest.mark.parametrize(
    ("regex", "replacement", "topic", "expected"),
    [
        ("(.*)-(.*)", "$2_$1", "orders-eu", "eu_orders"),  # Kafka's documented example shape
        ("(.*)STATIC(.*)", "$1DYNAMIC$2", "aSTATICb", "aDYNAMICb"),
        ("static", "dynamic", "static", "dynamic"),
        ("static", "dynamic", "static-x", "static-x"),  # no full match: unchanged
        ("static", "dynamic", "x-static", "x-static"),
        ("(?<name>[a-z]+)\\.v1", "${name}.v2", "orders.v1", "orders.v2"),
        ("(a)", "\\$1$1", "a", "$1a"),  # backslash escapes
        ("a|ab", "X", "ab", "Xb"),  # matches() but replaceFirst finds "a"
        ("(a)(b)?", "[$2]", "a", "[]"),  # unmatched group adds nothing
    ],
)
def test_routes(regex: str, replacement: str, topic: str, expected: str) -> None:
    assert _route(regex, replacement, topic) == expected


def test_multi_digit_group_reference_takes_only_existing_groups() -> None:
    pattern = java_regex("(a)(b)")
    assert java_replacement("$12", pattern)(pattern.fullmatch("ab")) == "a2"  # type: ignore[arg-type]


def test_keeps_everything_but_the_topic() -> None:
    t = RegexRouter()
    t.configure({"regex": "t", "replacement": "u"})
    record = SinkRecord(
        topic="t", kafka_partition=2, key="k", value="v", timestamp=7, headers=(Header("h", 1),)
    )
    out = t.apply(record)
    assert out == record.new_record(topic="u")
    assert out.original_topic == "t"


def test_invalid_regex_is_a_config_error() -> None:
    with pytest.raises(ConfigException, match="Invalid value \\( for configuration regex: Invalid regex"):
        RegexRouter().configure({"regex": "(", "replacement": "x"})


@pytest.mark.parametrize("replacement", ["$", "$x", "$3", "${nope}", "tail\\"])
def test_invalid_replacement_is_a_config_error(replacement: str) -> None:
    with pytest.raises(ConfigException, match="configuration replacement"):
        RegexRouter().configure({"regex": "(a)(b)", "replacement": replacement})


def test_required_settings() -> None:
    with pytest.raises(ConfigException, match='Missing required configuration "replacement"'):
        RegexRouter().configure({"regex": "a"})


def test_java_quoting_and_end_anchor() -> None:
    assert java_regex("\\Qa.b\\E").fullmatch("a.b")
    assert not java_regex("\\Qa.b\\E").fullmatch("axb")
    assert java_regex("a\\z").search("a") is not None
    assert isinstance(java_regex("x"), re.Pattern)
