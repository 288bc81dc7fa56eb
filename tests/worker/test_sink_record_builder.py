"""The sink loop builds ``SinkRecord``s by their slots; they must equal what the constructor builds."""

from __future__ import annotations

import dataclasses

import pytest

from engine.api import SinkRecord, SourceRecord
from engine.api.records import Header
from engine.data import Schema
from engine.worker.sink_loop import _sink_record


def test_a_record_built_by_slots_equals_the_constructed_one() -> None:
    headers = (Header("h", "v", Schema.STRING_SCHEMA),)
    built = _sink_record("orders", 3, Schema.STRING_SCHEMA, "k", None, {"a": 1}, 1700, headers, 42)
    constructed = SinkRecord(
        topic="orders",
        kafka_partition=3,
        key_schema=Schema.STRING_SCHEMA,
        key="k",
        value_schema=None,
        value={"a": 1},
        timestamp=1700,
        headers=headers,
        kafka_offset=42,
        timestamp_type="CreateTime",
    )
    assert built == constructed
    assert {f.name: getattr(built, f.name) for f in dataclasses.fields(SinkRecord)} == {
        f.name: getattr(constructed, f.name) for f in dataclasses.fields(SinkRecord)
    }
    assert (
        built.new_record(topic="routed").original_topic == "orders"
    )  # SMT copies keep the original coordinates
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.topic = "other"  # type: ignore[misc]


@pytest.mark.parametrize(
    "record",
    [
        SinkRecord(
            topic="t",
            kafka_partition=1,
            key="k",
            value=1,
            timestamp=5,
            kafka_offset=7,
            timestamp_type="CreateTime",
        ),
        SourceRecord(topic="t", value=1, source_partition={"p": 1}, source_offset={"o": 2}),
    ],
)
def test_new_record_copies_by_slots_as_replace_would(record: SinkRecord | SourceRecord) -> None:
    for changes in ({"topic": "u"}, {"value": None, "value_schema": Schema.INT32_SCHEMA}, {}):
        assert record.new_record(**changes) == dataclasses.replace(record, **changes)
    with pytest.raises(TypeError):
        record.new_record(nonsense=1)


def test_new_record_of_a_sink_record_keeps_its_original_coordinates() -> None:
    record = SinkRecord(topic="t", kafka_partition=1, value=1, kafka_offset=7)
    moved = record.new_record(topic="u", kafka_partition=2, kafka_offset=9)
    assert (moved.original_topic, moved.original_kafka_partition, moved.original_kafka_offset) == ("t", 1, 7)
    assert record.new_record(original_topic=None).original_topic == "t"  # __post_init__'s default, as replace
