"""One copy per chain: a record made by a shipped SMT is changed in place by the next shipped SMT, and
nothing any other plugin saw, nor the input record, ever changes."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from engine.api import records
from engine.api.records import DRAFT, ConnectRecord, Header, SinkRecord, SourceRecord
from engine.api.transforms import Transformation
from engine.transforms.chain import TransformationChain, TransformationStage

SHIPPED = {
    "transforms": "insert,replace,header,route",
    "transforms.insert.type": "org.apache.kafka.connect.transforms.InsertField$Value",
    "transforms.insert.static.field": "pipeline",
    "transforms.insert.static.value": "bench",
    "transforms.replace.type": "org.apache.kafka.connect.transforms.ReplaceField$Value",
    "transforms.replace.exclude": "active",
    "transforms.header.type": "org.apache.kafka.connect.transforms.InsertHeader",
    "transforms.header.header": "h",
    "transforms.header.value.literal": "v",
    "transforms.route.type": "org.apache.kafka.connect.transforms.TimestampRouter",
}


def sink_record() -> SinkRecord:
    return SinkRecord(
        topic="t",
        kafka_partition=0,
        value={"id": 1, "name": "x", "active": True},
        timestamp=1_700_000_000_000,
        kafka_offset=5,
        headers=(Header("a", "b"),),
    )


def snapshot(record: ConnectRecord) -> dict[str, Any]:
    return {f.name: getattr(record, f.name) for f in dataclasses.fields(record)}


def one_by_one(chain: TransformationChain[Any], record: ConnectRecord) -> ConnectRecord | None:
    """The stages applied outside any chain: every SMT makes its own copy."""
    current: ConnectRecord | None = record
    for stage in chain.stages:
        assert current is not None
        current = stage.apply(current)
    return current


class Keeper(Transformation[ConnectRecord]):
    """A plugin from elsewhere that keeps every record it is given and returns it as is."""

    def __init__(self) -> None:
        self.seen: list[tuple[ConnectRecord, dict[str, Any]]] = []

    def configure(self, configs: Any) -> None:
        return None

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        self.seen.append((record, snapshot(record)))
        return record

    def close(self) -> None:
        return None


def test_shipped_smts_give_what_they_give_one_by_one_and_leave_the_input_alone() -> None:
    chain = TransformationChain.from_config(SHIPPED)
    record = sink_record()
    before = snapshot(record)
    out = chain.apply(record)
    expected = one_by_one(chain, sink_record())
    assert out is not None
    assert expected is not None
    assert snapshot(out) == snapshot(expected)
    assert out.topic == "t-20231114"
    assert out.original_topic == "t"
    assert out.headers == (Header("a", "b"), Header("h", "v", out.headers[1].schema))
    assert snapshot(record) == before
    assert DRAFT.record is None


def test_a_record_another_plugin_saw_is_never_changed() -> None:
    """A plugin from elsewhere between shipped SMTs: what it was given stays as it was given."""
    shipped = TransformationChain.from_config(SHIPPED).stages
    keeper = Keeper()
    chain = TransformationChain([shipped[0], TransformationStage(keeper), *shipped[1:]])
    out = chain.apply(sink_record())
    assert out is not None
    ((kept, as_seen),) = keeper.seen
    assert snapshot(kept) == as_seen
    assert kept is not out
    assert snapshot(out) == snapshot(one_by_one(chain, sink_record()))  # type: ignore[arg-type]


def test_a_stage_that_returns_its_input_keeps_the_draft_rules() -> None:
    """RegexRouter not matching returns its input: the input record stays untouched either way."""
    props = {
        "transforms": "nomatch,route,insert",
        "transforms.nomatch.type": "org.apache.kafka.connect.transforms.RegexRouter",
        "transforms.nomatch.regex": "nothing",
        "transforms.nomatch.replacement": "x",
        "transforms.route.type": "org.apache.kafka.connect.transforms.TimestampRouter",
        "transforms.insert.type": "org.apache.kafka.connect.transforms.InsertField$Value",
        "transforms.insert.static.field": "f",
        "transforms.insert.static.value": "v",
    }
    chain = TransformationChain.from_config(props)
    record = SourceRecord(topic="t", value={"a": 1}, timestamp=0)
    before = snapshot(record)
    out = chain.apply(record)
    assert out is not None
    assert snapshot(record) == before
    assert out.topic == "t-19700101"
    assert out.value == {"a": 1, "f": "v"}


def test_new_record_outside_a_chain_always_copies() -> None:
    record = sink_record()
    copy = record.new_record(topic="u")
    assert copy is not record
    assert record.topic == "t"


def test_shipped_smts_copy_the_record_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Four shipped SMTs, one copy: the first SMT's; the other three change that copy."""
    keys, copy = records._COPIERS[SinkRecord]
    copies: list[ConnectRecord] = []

    def counting(record: ConnectRecord, changes: dict[str, Any]) -> Any:
        copies.append(record)
        return copy(record, changes)

    monkeypatch.setitem(records._COPIERS, SinkRecord, (keys, counting))
    chain = TransformationChain.from_config(SHIPPED)
    assert chain.apply(sink_record()) is not None
    assert len(copies) == 1
    assert one_by_one(chain, sink_record()) is not None
    assert len(copies) == 5  # stage by stage, outside a chain: a copy each
