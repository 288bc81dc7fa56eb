"""errors.log.enable: the ERROR event, with and without the record's data."""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

import structlog.testing

from engine.api.errors import DataException
from engine.api.records import Header, SinkRecord, SourceRecord
from engine.tolerance import ErrorPolicy, LogReporter, ProcessingContext, Stage, ToleranceOperator
from engine.topics.base import ConsumedRecord

CONSUMED = ConsumedRecord(
    topic="orders",
    partition=3,
    offset=42,
    key=b"k-secret",
    value=b"v-secret",
    headers=(("h", b"h-secret"),),
    timestamp=1700000000000,
)


class JsonConverter:
    pass


async def failed_on(
    ctx: ProcessingContext, *, include: bool, enable: bool = True
) -> tuple[list[MutableMapping[str, Any]], ToleranceOperator]:
    policy = ErrorPolicy(tolerance="all", log_enable=enable, log_include_messages=include)
    op = ToleranceOperator(
        policy, connector="sink-a", task=1, reporters=[LogReporter(policy, connector="sink-a", task=1)]
    )
    with structlog.testing.capture_logs() as logs:
        await op.recover(ctx, Stage.VALUE_CONVERTER, JsonConverter, lambda: None, DataException("not json"))
    return logs, op


async def test_sink_error_without_messages_names_only_coordinates() -> None:
    logs, op = await failed_on(ProcessingContext(consumed=CONSUMED), include=False)
    (event,) = logs
    cls = f"{__name__}.JsonConverter"
    assert event["event"] == "task.error"
    assert event["log_level"] == "error"
    assert event["component"] == "errors"
    assert (event["connector"], event["task"], event["stage"], event["class_name"]) == (
        "sink-a",
        1,
        "VALUE_CONVERTER",
        cls,
    )
    assert event["message"] == (
        f"Error encountered in task sink-a-1. Executing stage 'VALUE_CONVERTER' with class '{cls}', "
        "where consumed record is {topic='orders', partition=3, offset=42, timestamp=1700000000000}."
    )
    assert isinstance(event["exc_info"], DataException)
    assert "not json" in event["error"]
    assert not {"key", "value", "headers"} & event.keys()
    assert "secret" not in repr(event)
    assert op.total_errors_logged == 1


async def test_sink_error_with_messages_includes_key_value_headers() -> None:
    logs, _ = await failed_on(ProcessingContext(consumed=CONSUMED), include=True)
    (event,) = logs
    assert (event["key"], event["value"], event["headers"]) == (
        b"k-secret",
        b"v-secret",
        [("h", b"h-secret")],
    )
    assert event["message"].endswith(
        "where consumed record is {topic='orders', partition=3, offset=42, timestamp=1700000000000, "
        "key=b'k-secret', value=b'v-secret', headers=[('h', b'h-secret')]}."
    )


async def test_source_record_with_and_without_messages() -> None:
    record = SourceRecord(
        topic="events",
        kafka_partition=None,
        key="id-secret",
        value={"x": "secret"},
        source_partition={"file": "a"},
        source_offset={"pos": 7},
        headers=(Header("h", "hv-secret"),),
    )
    logs, _ = await failed_on(ProcessingContext(source_record=record), include=False)
    assert logs[0]["message"].endswith(
        "where source record is {topic='events', partition=None, timestamp=None}."
    )
    assert "secret" not in repr(logs[0])
    logs, _ = await failed_on(ProcessingContext(source_record=record), include=True)
    assert (logs[0]["key"], logs[0]["value"], logs[0]["headers"]) == (
        "id-secret",
        {"x": "secret"},
        [("h", "hv-secret")],
    )
    assert "sourceOffset={'pos': 7}" in logs[0]["message"]


async def test_unmatched_sink_record_is_named_by_its_coordinates() -> None:
    record = SinkRecord(topic="orders", kafka_partition=0, kafka_offset=9, value="secret")
    logs, _ = await failed_on(ProcessingContext(sink_record=record), include=False)
    assert logs[0]["message"].endswith(
        "where sink record is {topic='orders', partition=0, offset=9, timestamp=None}."
    )


async def test_nothing_logged_unless_enabled() -> None:
    logs, op = await failed_on(ProcessingContext(consumed=CONSUMED), include=True, enable=False)
    assert logs == []
    assert op.total_errors_logged == 0
