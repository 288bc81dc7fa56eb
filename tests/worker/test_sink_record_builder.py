"""The sink loop builds ``SinkRecord``s by their slots; they must equal what the constructor builds."""

from __future__ import annotations

import dataclasses

import pytest

from engine.api import SinkRecord
from engine.api.records import Header
from engine.data import Schema
from engine.worker.sink_loop import _sink_record


def test_a_record_built_by_slots_equals_the_constructed_one() -> None:
    headers = (Header("h", "v", Schema.STRING_SCHEMA),)
    built = _sink_record("orders", 3, Schema.STRING_SCHEMA, "k", None, {"a": 1}, 1700, headers, 42)
    constructed = SinkRecord(topic="orders", kafka_partition=3, key_schema=Schema.STRING_SCHEMA, key="k",
                             value_schema=None, value={"a": 1}, timestamp=1700, headers=headers, kafka_offset=42,
                             timestamp_type="CreateTime")
    assert built == constructed
    assert {f.name: getattr(built, f.name) for f in dataclasses.fields(SinkRecord)} == \
        {f.name: getattr(constructed, f.name) for f in dataclasses.fields(SinkRecord)}
    assert built.new_record(topic="routed").original_topic == "orders"  # SMT copies keep the original coordinates
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.topic = "other"  # type: ignore[misc]
