"""DropHeaders: listed headers go (every occurrence), the rest keep their order."""

from __future__ import annotations

import pytest

from engine.api.errors import ConfigException
from engine.api.records import Header, SinkRecord, SourceRecord
from engine.transforms.drop_headers import DropHeaders


def _drop(headers: str) -> DropHeaders:
    t = DropHeaders()
    t.configure({"headers": headers})
    return t


def test_drops_listed_headers_and_keeps_the_rest() -> None:
    record = SourceRecord(
        topic="t", value="v", headers=(Header("a", 1), Header("b", 2), Header("a", 3), Header("c", 4))
    )
    out = _drop("a, c").apply(record)
    assert out.headers == (Header("b", 2),)
    assert (out.topic, out.value) == ("t", "v")


def test_sink_record_keeps_its_coordinates() -> None:
    record = SinkRecord(topic="t", kafka_partition=1, kafka_offset=5, headers=(Header("x", None),))
    out = _drop("x").apply(record)
    assert isinstance(out, SinkRecord)
    assert out.headers == ()
    assert (out.original_topic, out.kafka_offset) == ("t", 5)


def test_no_matching_header_is_a_no_op() -> None:
    record = SourceRecord(topic="t", headers=(Header("b", 2),))
    assert _drop("a").apply(record) == record


@pytest.mark.parametrize("configs", [{}, {"headers": ""}])
def test_headers_is_required_and_non_empty(configs: dict[str, str]) -> None:
    with pytest.raises(ConfigException):
        DropHeaders().configure(configs)


def test_empty_list_message() -> None:  # Kafka 4.2's ValidList (KIP-1161)
    with pytest.raises(
        ConfigException,
        match=r"^Configuration 'headers' must not be empty\. Valid values include: any non-empty value$",
    ):
        DropHeaders().configure({"headers": ""})
