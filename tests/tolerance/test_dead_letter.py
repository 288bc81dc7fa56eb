"""The dead letter queue, read back through a real MemoryTopics consumer (Kafka's
``DeadLetterQueueReporter`` header names)."""

from __future__ import annotations

import traceback

import pytest

from engine.api.errors import DataException
from engine.api.records import SourceRecord
from engine.tolerance import (
    DeadLetterQueueReporter,
    ErrorPolicy,
    ProcessingContext,
    Stage,
    ToleranceOperator,
    ensure_dlq_topic,
)
from engine.topics.base import ConsumedRecord, TopicPartition
from engine.topics.errors import TopicsError
from tests.tolerance.fakes import consume_one, memory_topics, read_all


class BrokenConverter:
    def to_connect_data(self, record: ConsumedRecord) -> object:
        raise DataException(
            f"Converting byte[] to Kafka Connect data failed: ünicode at offset {record.offset}"
        )


async def test_ensure_dlq_topic_creates_one_partition_once() -> None:
    async with memory_topics() as topics:
        policy = ErrorPolicy(dlq_topic="dlq")
        assert await ensure_dlq_topic(topics, policy) is True
        assert await topics.partitions("dlq") == 1
        assert await ensure_dlq_topic(topics, policy) is False
        assert await ensure_dlq_topic(topics, ErrorPolicy()) is False


async def test_raw_record_and_context_headers_byte_exact() -> None:
    async with memory_topics() as topics:
        policy = ErrorPolicy(tolerance="all", dlq_topic="dlq", dlq_context_headers=True)
        await ensure_dlq_topic(topics, policy)
        consumed = await consume_one(topics, "orders", b"\x00key", b"{not json", (("trace", b"\xff\x01"),))
        dlq = DeadLetterQueueReporter(topics.producer(), policy, "my-sink", 4)
        op = ToleranceOperator(policy, connector="my-sink", task=4, reporters=[dlq])
        converter = BrokenConverter()
        ctx = ProcessingContext(consumed=consumed)
        first: DataException | None = None
        try:  # what the sink loop does: call the stage directly, recover on failure
            converter.to_connect_data(consumed)
        except DataException as exc:
            first = exc
        assert first is not None
        result = await op.recover(
            ctx, Stage.VALUE_CONVERTER, BrokenConverter, lambda: converter.to_connect_data(consumed), first
        )
        assert result is None
        assert ctx.error is first

        (out,) = await read_all(topics, "dlq", 1)
        assert (out.key, out.value) == (b"\x00key", b"{not json")
        stacktrace = "".join(traceback.format_exception(ctx.error)).encode()
        assert stacktrace.startswith(b"Traceback (most recent call last):")
        assert b"to_connect_data" in stacktrace
        assert list(out.headers) == [
            ("trace", b"\xff\x01"),
            ("__connect.errors.topic", b"orders"),
            ("__connect.errors.partition", b"0"),
            ("__connect.errors.offset", b"0"),
            ("__connect.errors.connector.name", b"my-sink"),
            ("__connect.errors.task.id", b"4"),
            ("__connect.errors.stage", b"VALUE_CONVERTER"),
            ("__connect.errors.class.name", f"{__name__}.BrokenConverter".encode()),
            ("__connect.errors.exception.class.name", b"engine.api.errors.DataException"),
            (
                "__connect.errors.exception.message",
                "Converting byte[] to Kafka Connect data failed: ünicode at offset 0".encode(),
            ),
            ("__connect.errors.exception.stacktrace", stacktrace),
        ]
        assert op.total_dlq_produced == 1
        assert op.metrics.total_dlq_failures == 0


async def test_without_context_headers_only_the_original_headers() -> None:
    async with memory_topics() as topics:
        policy = ErrorPolicy(tolerance="all", dlq_topic="dlq")
        consumed = await consume_one(topics, "orders", b"k", b"v", (("h", b"1"),))
        op = ToleranceOperator(
            policy,
            connector="c",
            task=0,
            reporters=[DeadLetterQueueReporter(topics.producer(), policy, "c", 0)],
        )
        await op.recover(
            ProcessingContext(consumed=consumed), Stage.TRANSFORMATION, None, lambda: None, ValueError("smt")
        )
        (out,) = await read_all(topics, "dlq", 1)
        assert (out.key, out.value, list(out.headers)) == (b"k", b"v", [("h", b"1")])


async def test_source_contexts_never_reach_the_dlq() -> None:
    async with memory_topics() as topics:
        policy = ErrorPolicy(tolerance="all", dlq_topic="dlq")
        await ensure_dlq_topic(topics, policy)
        dlq = DeadLetterQueueReporter(topics.producer(), policy, "c", 0)
        op = ToleranceOperator(policy, connector="c", task=0, reporters=[dlq])
        ctx = ProcessingContext(source_record=SourceRecord(topic="t", value="v"))
        await op.recover(ctx, Stage.VALUE_CONVERTER, None, lambda: None, DataException("x"))
        assert ctx.failed
        assert topics.records(TopicPartition("dlq", 0)) == []
        assert op.total_dlq_produced == 0


async def test_a_refused_send_is_counted_and_raised_by_report() -> None:
    async with memory_topics() as topics:
        topics.auto_create = False  # the DLQ topic is missing: the send fails
        policy = ErrorPolicy(tolerance="all", dlq_topic="missing")
        consumed = await consume_one(topics, "orders", b"k", b"v")
        op = ToleranceOperator(
            policy,
            connector="c",
            task=0,
            reporters=[DeadLetterQueueReporter(topics.producer(), policy, "c", 0)],
        )
        ctx = ProcessingContext(consumed=consumed)
        with pytest.raises(TopicsError, match="missing"):
            await op.report(ctx, Stage.TASK_PUT, None, ValueError("rejected"))
        assert (op.total_dlq_produced, op.metrics.total_dlq_failures) == (1, 1)
