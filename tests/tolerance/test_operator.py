"""The retry/tolerance algorithm (Kafka's ``RetryWithToleranceOperator``), driven with a fake clock and
a fake sleep."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest
import structlog.testing

from engine.api.errors import ConnectException, DataException, RetriableException
from engine.tolerance import ErrorPolicy, ProcessingContext, Stage, ToleranceOperator, is_tolerable
from tests.tolerance.fakes import FailingOperation, FakeClock, FakeReporter, FakeSleep


def operator(
    *,
    timeout: int = 0,
    max_delay: int = 60000,
    tolerance: str = "all",
    reporters: tuple[Any, ...] = (),
    stopping: Any = lambda: False,
    rng: random.Random | None = None,
) -> tuple[ToleranceOperator, FakeSleep]:
    clock = FakeClock()
    sleep = FakeSleep(clock)
    policy = ErrorPolicy(retry_timeout_ms=timeout, retry_delay_max_ms=max_delay, tolerance=tolerance)  # type: ignore[arg-type]
    op = ToleranceOperator(
        policy,
        connector="conn",
        task=2,
        reporters=reporters,
        stopping=stopping,
        sleep=sleep,
        clock=clock,
        rng=rng,
    )
    return op, sleep


class Retriably(Exception):
    """Not a RetriableException, but flagged retriable (as TopicsError can be)."""

    retriable = True


def test_tolerable_classes_per_stage() -> None:
    for stage in (Stage.TRANSFORMATION, Stage.KEY_CONVERTER, Stage.VALUE_CONVERTER, Stage.HEADER_CONVERTER):
        assert is_tolerable(stage, ValueError())
    for stage in (Stage.TASK_POLL, Stage.TASK_PUT, Stage.KAFKA_PRODUCE, Stage.KAFKA_CONSUME):
        assert not is_tolerable(stage, ValueError())
        assert is_tolerable(stage, RetriableException())
        assert is_tolerable(stage, Retriably())
    assert [s.value for s in Stage] == [
        "TASK_POLL",
        "TASK_PUT",
        "TRANSFORMATION",
        "KEY_CONVERTER",
        "VALUE_CONVERTER",
        "HEADER_CONVERTER",
        "KAFKA_PRODUCE",
        "KAFKA_CONSUME",
    ]


async def test_backoff_doubles_from_300ms_and_never_passes_the_deadline() -> None:
    op, sleep = operator(timeout=10_000)
    ctx = ProcessingContext()
    operation = FailingOperation(*[RetriableException("busy")] * 100)
    assert await op.recover(ctx, Stage.VALUE_CONVERTER, int, operation, RetriableException("first")) is None
    assert sleep.delays_ms == [300, 600, 1200, 2400, 4800, 700]  # the last one stops at the deadline
    assert operation.calls == 6
    assert ctx.failed
    assert ctx.attempt == 7
    assert (op.total_failures, op.total_retries, op.total_records_skipped, op.total_errors) == (7, 6, 1, 1)


async def test_backoff_above_the_maximum_is_random_below_it() -> None:
    op, sleep = operator(timeout=100_000, max_delay=1000, rng=random.Random(7))
    await op.recover(
        ProcessingContext(),
        Stage.TRANSFORMATION,
        None,
        FailingOperation(*[RetriableException()] * 6),
        RetriableException(),
    )
    expected = random.Random(7)
    assert sleep.delays_ms[:2] == [300, 600]
    assert sleep.delays_ms[2:6] == [expected.randrange(1000) for _ in range(4)]
    assert all(0 <= d < 1000 for d in sleep.delays_ms)


async def test_retry_success_returns_the_result_awaiting_async_operations() -> None:
    op, sleep = operator(timeout=60_000, tolerance="none")
    errors = [RetriableException(), Retriably()]

    async def operation() -> str:
        if errors:
            raise errors.pop(0)
        return "converted"

    ctx = ProcessingContext()
    assert await op.recover(ctx, Stage.KEY_CONVERTER, str, operation, RetriableException()) == "converted"
    assert not ctx.failed
    assert ctx.attempt == 4
    assert sleep.delays_ms == [300, 600, 1200]
    assert (op.total_failures, op.total_retries, op.total_errors) == (3, 3, 0)


async def test_no_retry_with_the_default_timeout() -> None:
    op, sleep = operator(timeout=0)
    operation = FailingOperation()
    assert (
        await op.recover(ProcessingContext(), Stage.TRANSFORMATION, None, operation, RetriableException())
        is None
    )
    assert operation.calls == 0
    assert sleep.delays_ms == []


async def test_stopping_after_a_backoff_ends_retrying() -> None:
    stop = False
    op, sleep = operator(timeout=60_000, stopping=lambda: stop)

    def after(n: int) -> None:
        nonlocal stop
        stop = n == 2

    sleep.after = after
    operation = FailingOperation(*[RetriableException()] * 10)
    ctx = ProcessingContext()
    assert await op.recover(ctx, Stage.TRANSFORMATION, None, operation, RetriableException()) is None
    assert sleep.delays_ms == [300, 600]
    assert operation.calls == 1
    assert ctx.failed


async def test_stopping_wakes_a_backoff_in_progress() -> None:
    stop = asyncio.Event()
    op, _ = operator(timeout=-1, stopping=stop.is_set)
    never = asyncio.Event()

    async def sleep_forever(seconds: float) -> None:
        await never.wait()

    op._sleep = sleep_forever  # a backoff that would never end by itself
    recovering = asyncio.create_task(
        op.recover(ProcessingContext(), Stage.VALUE_CONVERTER, None, FailingOperation(), RetriableException())
    )
    await asyncio.sleep(0)
    assert not recovering.done()
    stop.set()
    assert await recovering is None


async def test_trigger_stop_ends_retrying() -> None:
    op, sleep = operator(timeout=-1)
    sleep.after = lambda n: op.trigger_stop()
    assert (
        await op.recover(
            ProcessingContext(),
            Stage.TRANSFORMATION,
            None,
            FailingOperation(*[RetriableException()] * 5),
            RetriableException(),
        )
        is None
    )
    assert sleep.delays_ms == [300]


async def test_infinite_retry_goes_on_until_stopping() -> None:
    stop = False
    op, sleep = operator(timeout=-1, max_delay=2000, rng=random.Random(1), stopping=lambda: stop)

    def after(n: int) -> None:
        nonlocal stop
        stop = n == 50

    sleep.after = after
    operation = FailingOperation(*[RetriableException()] * 1000)
    assert (
        await op.recover(ProcessingContext(), Stage.TASK_POLL, None, operation, RetriableException()) is None
    )
    assert len(sleep.delays_ms) == 50
    assert operation.calls == 49
    assert sleep.delays_ms[:3] == [300, 600, 1200]
    assert all(d < 2000 for d in sleep.delays_ms[3:])
    assert op.total_records_skipped == 1


async def test_tolerance_all_skips_and_reports() -> None:
    reporter = FakeReporter()
    op, _ = operator(tolerance="all", reporters=(reporter,))
    ctx = ProcessingContext()
    error = DataException("bad json")
    assert await op.recover(ctx, Stage.VALUE_CONVERTER, dict, FailingOperation(), error) is None
    assert ctx.failed
    assert ctx.error is error
    assert ctx.stage is Stage.VALUE_CONVERTER
    assert ctx.executing_class is dict
    assert reporter.seen == [(ctx, Stage.VALUE_CONVERTER, error)]
    assert (op.total_failures, op.total_errors, op.total_records_skipped) == (1, 1, 1)
    assert op.tolerates_all
    assert op.within_tolerance_limits()


async def test_tolerance_none_fails_after_reporting() -> None:
    reporter = FakeReporter()
    op, _ = operator(tolerance="none", reporters=(reporter,))
    error = DataException("bad json")
    ctx = ProcessingContext()
    with pytest.raises(ConnectException, match=r"^Tolerance exceeded in error handler$") as raised:
        await op.recover(ctx, Stage.TRANSFORMATION, None, FailingOperation(), error)
    assert raised.value.__cause__ is error
    assert reporter.seen == [(ctx, Stage.TRANSFORMATION, error)]
    assert op.total_records_skipped == 0
    assert not op.within_tolerance_limits()


@pytest.mark.parametrize("tolerance", ["none", "all"])
async def test_a_non_tolerable_class_is_unhandled(tolerance: str) -> None:
    reporter = FakeReporter()
    op, _ = operator(tolerance=tolerance, reporters=(reporter,))
    error = ValueError("bug in poll")
    with pytest.raises(ConnectException, match=r"^Unhandled exception in error handler$") as raised:
        await op.recover(ProcessingContext(), Stage.TASK_POLL, None, FailingOperation(), error)
    assert raised.value.__cause__ is error
    assert len(reporter.seen) == 1


async def test_a_retry_that_fails_differently_is_judged_by_the_new_error() -> None:
    op, _ = operator(timeout=60_000, tolerance="all")
    later = KeyError("gone")
    with pytest.raises(ConnectException, match="Unhandled") as raised:
        await op.recover(
            ProcessingContext(), Stage.KAFKA_PRODUCE, None, FailingOperation(later), RetriableException()
        )
    assert raised.value.__cause__ is later


async def test_exhausted_retriable_under_none_fails_the_task() -> None:
    """Our decision (Kafka's code would drop the record): no silent loss under errors.tolerance=none."""
    reporter = FakeReporter()
    op, sleep = operator(timeout=1000, tolerance="none", reporters=(reporter,))
    last = RetriableException("still busy")
    ctx = ProcessingContext()
    with pytest.raises(ConnectException, match=r"^Tolerance exceeded in error handler$") as raised:
        await op.recover(
            ctx,
            Stage.VALUE_CONVERTER,
            None,
            FailingOperation(RetriableException(), RetriableException(), last),
            RetriableException(),
        )
    assert raised.value.__cause__ is last
    assert ctx.error is last
    assert sleep.delays_ms == [300, 600, 100]
    assert len(reporter.seen) == 1


async def test_exhausted_retriable_under_none_with_no_retries_configured_fails_too() -> None:
    op, _ = operator(timeout=0, tolerance="none")
    with pytest.raises(ConnectException, match="Tolerance exceeded"):
        await op.recover(ProcessingContext(), Stage.KEY_CONVERTER, None, FailingOperation(), Retriably())


async def test_exhausted_retriable_under_all_is_skipped_at_any_stage() -> None:
    op, _ = operator(timeout=0, tolerance="all")
    ctx = ProcessingContext()
    assert await op.recover(ctx, Stage.TASK_PUT, None, FailingOperation(), RetriableException()) is None
    assert ctx.failed


async def test_a_failed_context_is_left_alone() -> None:
    op, _ = operator()
    error = DataException("first")
    ctx = ProcessingContext(error=error, stage=Stage.KEY_CONVERTER)
    operation = FailingOperation()
    assert await op.recover(ctx, Stage.TRANSFORMATION, None, operation, RetriableException()) is None
    assert ctx.error is error
    assert ctx.stage is Stage.KEY_CONVERTER
    assert operation.calls == 0


async def test_non_exceptions_pass_through_unreported() -> None:
    class Interrupt(BaseException):
        pass

    reporter = FakeReporter()
    op, _ = operator(reporters=(reporter,))
    with pytest.raises(Interrupt):
        await op.recover(ProcessingContext(), Stage.TRANSFORMATION, None, FailingOperation(), Interrupt())
    assert reporter.seen == []


async def test_a_failing_reporter_does_not_change_the_outcome_of_recover() -> None:
    broken, fine = FakeReporter(fail=OSError("disk full")), FakeReporter()
    op, _ = operator(tolerance="all", reporters=(broken, fine))
    with structlog.testing.capture_logs() as logs:
        assert (
            await op.recover(
                ProcessingContext(), Stage.TRANSFORMATION, None, FailingOperation(), DataException()
            )
            is None
        )
    assert len(fine.seen) == 1
    assert [e["event"] for e in logs] == ["task.error_report_failed"]


async def test_report_records_without_retry_or_tolerance_decision() -> None:
    broken, fine = FakeReporter(fail=OSError("disk full")), FakeReporter()
    op, sleep = operator(timeout=60_000, tolerance="none", reporters=(broken,))
    op.add_reporter(fine)
    ctx = ProcessingContext()
    error = RetriableException("send failed")
    with pytest.raises(OSError, match="disk full"):
        await op.report(ctx, Stage.KAFKA_PRODUCE, str, error)
    assert ctx.error is error
    assert ctx.stage is Stage.KAFKA_PRODUCE
    assert ctx.attempt == 1
    assert len(fine.seen) == 1
    assert sleep.delays_ms == []
    assert (op.total_failures, op.total_errors) == (1, 1)
    assert not op.within_tolerance_limits()
