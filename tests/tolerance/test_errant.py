"""The sink task's errant record reporter, from an async put on the loop and a sync put in a thread."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
import structlog.testing

from engine.api.errors import ConnectException, DataException
from engine.api.records import SinkRecord
from engine.api.records import TopicPartition as ApiTopicPartition
from engine.tolerance import (
    DeadLetterQueueReporter,
    ErrantRecordReporter,
    ErrorPolicy,
    LogReporter,
    Stage,
    ToleranceOperator,
    ensure_dlq_topic,
    make_errant_reporter,
)
from engine.tolerance.errant import ThreadReportFuture
from engine.topics import MemoryTopics
from engine.topics.base import ConsumedRecord, TopicPartition
from tests.tolerance.fakes import FakeReporter, consume_one, memory_topics, read_all


class MySinkTask:
    pass


@dataclass
class Setup:
    topics: MemoryTopics
    consumed: ConsumedRecord
    record: SinkRecord
    op: ToleranceOperator
    errant: ErrantRecordReporter


def sink_record(consumed: ConsumedRecord) -> SinkRecord:
    return SinkRecord(topic="renamed-by-smt", kafka_partition=consumed.partition, value="converted",
                      kafka_offset=consumed.offset, original_topic=consumed.topic)


@pytest.fixture(params=["all", "none"])
async def setup(request: pytest.FixtureRequest) -> AsyncIterator[Setup]:
    async with memory_topics() as topics:
        policy = ErrorPolicy(tolerance=request.param, dlq_topic="dlq", dlq_context_headers=True)
        await ensure_dlq_topic(topics, policy)
        consumed = await consume_one(topics, "orders", b"k", b"v")
        by_coordinates = {(consumed.topic, consumed.partition, consumed.offset): consumed}
        op = ToleranceOperator(policy, connector="sink", task=0,
                               reporters=[DeadLetterQueueReporter(topics.producer(), policy, "sink", 0)])
        errant = make_errant_reporter(
            policy, op, task_class=MySinkTask,
            lookup=lambda r: by_coordinates.get((r.original_topic or "", r.original_kafka_partition or 0,
                                                 r.original_kafka_offset or 0)))
        assert errant is not None
        yield Setup(topics, consumed, sink_record(consumed), op, errant)


def headers(record: ConsumedRecord) -> dict[str, bytes | None]:
    return dict(record.headers)


async def test_report_from_an_async_put_sends_the_original_record(setup: Setup) -> None:
    error = DataException("cannot write row")
    future = setup.errant.report(setup.record, error)
    assert isinstance(future, asyncio.Future)
    await future
    (out,) = await read_all(setup.topics, "dlq", 1)
    assert (out.key, out.value) == (b"k", b"v")  # the raw record, not the SMT output
    assert headers(out)["__connect.errors.topic"] == b"orders"
    assert headers(out)["__connect.errors.stage"] == b"TASK_PUT"
    assert headers(out)["__connect.errors.class.name"] == f"{__name__}.MySinkTask".encode()
    assert headers(out)["__connect.errors.exception.message"] == b"cannot write row"
    assert setup.op.total_failures == 1


async def test_tolerance_decides_the_pending_failure(setup: Setup) -> None:
    error = DataException("bad")
    before = setup.errant.pending_failure
    assert before is None
    future = setup.errant.report(setup.record, error)
    failure = setup.errant.pending_failure
    if setup.op.tolerates_all:
        assert failure is None
    else:
        assert isinstance(failure, ConnectException)
        assert str(failure) == "Tolerance exceeded in error handler"
        assert failure.__cause__ is error
    await future  # the record reaches the DLQ either way
    assert len(await read_all(setup.topics, "dlq", 1)) == 1


async def test_report_from_a_sync_put_in_a_worker_thread(setup: Setup) -> None:
    def put() -> ThreadReportFuture:
        future = setup.errant.report(setup.record, ValueError("rejected"))
        assert isinstance(future, concurrent.futures.Future)
        assert isinstance(future, ThreadReportFuture)
        assert future.result(timeout=10) is None  # blocks this thread only
        return future

    thread_future = await asyncio.to_thread(put)
    await thread_future  # also awaitable on the loop
    (out,) = await read_all(setup.topics, "dlq", 1)
    assert headers(out)["__connect.errors.exception.class.name"] == b"builtins.ValueError"


async def test_await_partitions_waits_for_reports_made_from_a_thread(setup: Setup) -> None:
    def put() -> None:
        setup.errant.report(setup.record, ValueError("one"))
        setup.errant.report(setup.record, ValueError("two"))

    await asyncio.to_thread(put)
    assert setup.errant.outstanding() >= 1
    await setup.errant.await_partitions([ApiTopicPartition("other", 0)])
    await setup.errant.await_partitions([ApiTopicPartition("orders", 0)])
    assert setup.errant.outstanding() == 0
    assert len(await read_all(setup.topics, "dlq", 2)) == 2


async def test_await_partitions_accepts_the_topics_layers_partitions(setup: Setup) -> None:
    setup.errant.report(setup.record, ValueError("x"))
    await setup.errant.await_partitions([TopicPartition("orders", 0)])
    assert setup.errant.outstanding() == 0


async def test_a_failed_report_fails_await_partitions() -> None:
    policy = ErrorPolicy(tolerance="all", log_enable=True)
    op = ToleranceOperator(policy, connector="c", task=0, reporters=[FakeReporter(fail=OSError("down"))])
    errant = ErrantRecordReporter(op, lookup=lambda r: None)
    record = SinkRecord(topic="t", kafka_partition=2, kafka_offset=5)
    future = errant.report(record, ValueError("x"))
    with pytest.raises(OSError, match="down"):
        await future
    with pytest.raises(ConnectException, match="errant record") as raised:
        await errant.await_partitions([ApiTopicPartition("t", 2)])
    assert isinstance(raised.value.__cause__, OSError)


async def test_an_unmatched_record_is_logged_by_its_own_coordinates() -> None:
    policy = ErrorPolicy(tolerance="all", log_enable=True)
    op = ToleranceOperator(policy, connector="c", task=0, reporters=[LogReporter(policy, connector="c", task=0)])
    errant = ErrantRecordReporter(op, lookup=lambda r: None, task_class=MySinkTask)
    with structlog.testing.capture_logs() as logs:
        await errant.report(SinkRecord(topic="t", kafka_partition=1, kafka_offset=8), ValueError("x"))
    (event,) = logs
    assert event["stage"] == Stage.TASK_PUT
    assert "where sink record is {topic='t', partition=1, offset=8, timestamp=None}" in event["message"]


async def test_made_only_with_a_dlq_or_error_logging() -> None:
    def make(policy: ErrorPolicy) -> ErrantRecordReporter | None:
        op = ToleranceOperator(policy, connector="c", task=0)
        return make_errant_reporter(policy, op, lookup=lambda r: None)

    assert make(ErrorPolicy()) is None
    assert make(ErrorPolicy(tolerance="all")) is None
    assert make(ErrorPolicy(dlq_topic="dlq")) is not None
    assert make(ErrorPolicy(log_enable=True)) is not None
