"""Filter and the three predicates, alone and as Kafka's docs combine them."""

from __future__ import annotations

import pytest

from engine.api.errors import ConfigException
from engine.api.records import Header, SinkRecord, SourceRecord
from engine.transforms.filter import Filter
from engine.transforms.predicates import HasHeaderKey, RecordIsTombstone, TopicNameMatches


def test_filter_drops_everything() -> None:
    f = Filter()
    f.configure({})
    assert f.apply(SourceRecord(topic="t", value=1)) is None  # type: ignore[func-returns-value]
    assert f.config().names() == []


@pytest.mark.parametrize(("pattern", "topic", "expected"), [
    ("foo.*", "foo-bar", True), ("foo", "foo-bar", False), ("bar", "foo-bar", False), (".*-bar", "foo-bar", True),
])
def test_topic_name_matches_whole_topic(pattern: str, topic: str, expected: bool) -> None:
    p = TopicNameMatches()
    p.configure({"pattern": pattern})
    assert p.test(SinkRecord(topic=topic)) is expected


@pytest.mark.parametrize(("configs", "message"), [
    ({}, 'Missing required configuration "pattern"'),
    ({"pattern": ""}, "String must be non-empty"),
    ({"pattern": "["}, "Invalid regex"),
])
def test_topic_name_matches_config_errors(configs: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigException, match=message):
        TopicNameMatches().configure(configs)


def test_has_header_key() -> None:
    p = HasHeaderKey()
    p.configure({"name": "h"})
    assert p.test(SourceRecord(topic="t", headers=(Header("x", 1), Header("h", None))))
    assert not p.test(SourceRecord(topic="t", headers=(Header("x", 1),)))
    assert not p.test(SourceRecord(topic="t"))
    with pytest.raises(ConfigException):
        HasHeaderKey().configure({"name": ""})


def test_record_is_tombstone() -> None:
    p = RecordIsTombstone()
    p.configure({})
    assert p.test(SourceRecord(topic="t", key="k", value=None))
    assert not p.test(SourceRecord(topic="t", value=""))


def test_reprs_name_their_settings() -> None:
    p = TopicNameMatches()
    p.configure({"pattern": "a.*"})
    h = HasHeaderKey()
    h.configure({"name": "n"})
    assert (repr(p), repr(h), repr(RecordIsTombstone())) == (
        "TopicNameMatches{pattern=a.*}", "HasHeaderKey{name='n'}", "RecordIsTombstone{}")
