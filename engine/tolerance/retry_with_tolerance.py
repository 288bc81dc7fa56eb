"""Retry-with-tolerance for one task: Kafka's ``RetryWithToleranceOperator``, continued from a first failure.

The loops run each stage directly (no await, no wrapper on the happy path) and call
:meth:`ToleranceOperator.recover` only with the error they caught. From there:

1. A retriable error (``RetriableException`` or ``retriable = True``) is retried while the
   ``errors.retry.timeout`` deadline allows (-1: forever), backing off ``300 ms << (attempt-1)``;
   a backoff above ``errors.retry.delay.max.ms`` becomes a random value in ``[0, max)``; no
   backoff runs past the deadline; ``stopping()`` (or :meth:`trigger_stop`) ends retrying,
   also mid-backoff. Success returns the operation's result.
2. A final failure is recorded on the context, counted, and reported to every reporter.
3. Then: an error the stage does not tolerate (only converters and transformations tolerate any
   ``Exception``) raises ``ConnectException("Unhandled exception in error handler")``; with
   ``errors.tolerance=none`` it raises ``ConnectException("Tolerance exceeded in error handler")``;
   with ``all`` the record is skipped (``None``, ``ctx.failed``).

Decision, retriable errors that exhaust their retries under ``errors.tolerance=none``: Kafka's
code skips the record there without a tolerance check (with the default ``errors.retry.timeout=0``
that means every ``RetriableException`` from a converter or SMT silently drops its record). We fail
the task with "Tolerance exceeded in error handler" instead: a user who chose ``none`` expects no
silent loss. This includes retries ended by ``stopping()``; a loop that is stopping anyway may treat
that error as the stop it asked for.
"""

from __future__ import annotations

import asyncio
import math
import random
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, TypeVar, cast, overload

import structlog

from engine.api.errors import ConnectException
from engine.converters.base import ConversionPending, converted
from engine.tolerance.config import ErrorPolicy
from engine.tolerance.context import ProcessingContext
from engine.tolerance.metrics import ErrorMetrics
from engine.tolerance.reporter import ErrorReporter
from engine.tolerance.stage import Stage, is_retriable, is_tolerable

log = structlog.get_logger(component="errors")

T = TypeVar("T")

RETRIES_DELAY_MIN_MS = 300
_STOP_POLL_S = 0.05  # how often a backoff looks at ``stopping()``


class ToleranceOperator:
    """Shared by every record of one task; not thread-safe (call it on the task's event loop)."""

    def __init__(
        self,
        policy: ErrorPolicy,
        *,
        connector: str,
        task: int,
        reporters: Sequence[ErrorReporter] = (),
        stopping: Callable[[], bool] = lambda: False,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        clock: Callable[[], float] = time.monotonic,
        rng: random.Random | None = None,
        metrics: ErrorMetrics | None = None,
    ) -> None:
        """``metrics``: where to count (the task's, exposed at ``/metrics``); a private one by default."""
        self.policy = policy
        self.connector = connector
        self.task = task
        self.metrics = metrics if metrics is not None else ErrorMetrics()
        self._reporters = list(reporters)
        self._stopping = stopping
        self._sleep = sleep
        self._clock = clock
        self._rng = rng  # made on first backoff: seeding one from os.urandom costs more than a task start
        self._stop_requested = False
        self._failed_records = 0  # Kafka's ``totalFailures``: what ``errors.tolerance=none`` looks at

    # ---- configuration and state ----------------------------------------------------------

    @property
    def tolerates_all(self) -> bool:
        return self.policy.tolerance == "all"

    @property
    def reporters(self) -> tuple[ErrorReporter, ...]:
        return tuple(self._reporters)

    def add_reporter(self, reporter: ErrorReporter) -> None:
        self._reporters.append(reporter)

    def within_tolerance_limits(self) -> bool:
        """Kafka's check: ``all`` always; ``none`` until the first record failed."""
        return self.tolerates_all or self._failed_records == 0

    def trigger_stop(self) -> None:
        """Stop retrying now and fail what is backing off (Kafka's ``triggerStop``); loop thread only."""
        self._stop_requested = True

    def is_stopping(self) -> bool:
        return self._stop_requested or self._stopping()

    @property
    def total_failures(self) -> int:
        return self.metrics.total_failures

    @property
    def total_errors(self) -> int:
        return self.metrics.total_errors

    @property
    def total_records_skipped(self) -> int:
        return self.metrics.total_records_skipped

    @property
    def total_retries(self) -> int:
        return self.metrics.total_retries

    @property
    def total_errors_logged(self) -> int:
        return self.metrics.total_errors_logged

    @property
    def total_dlq_produced(self) -> int:
        return self.metrics.total_dlq_produced

    # ---- the algorithm ----------------------------------------------------------------------

    @overload
    async def recover(
        self,
        ctx: ProcessingContext,
        stage: Stage,
        executing_class: type | None,
        operation: Callable[..., Coroutine[Any, Any, T]],
        first_error: BaseException,
    ) -> T | None: ...

    @overload
    async def recover(
        self,
        ctx: ProcessingContext,
        stage: Stage,
        executing_class: type | None,
        operation: Callable[..., T],
        first_error: BaseException,
    ) -> T | None: ...

    async def recover(
        self,
        ctx: ProcessingContext,
        stage: Stage,
        executing_class: type | None,
        operation: Callable[..., T | Awaitable[T]],
        first_error: BaseException,
    ) -> T | None:
        """Continue after ``operation`` failed once with ``first_error``: retry, then tolerate or raise.

        ``operation`` is called without arguments (typed ``Callable[..., T]`` so that loops may bind
        loop variables as lambda defaults); an awaitable it returns is awaited.

        A ``ConversionPending`` (a converter waiting for a registry) is no failure: it is awaited
        and ``operation`` called again, as often as it asks; only what that call then raises counts.

        A ``BaseException`` that is not an ``Exception`` (cancellation, ``KeyboardInterrupt``) is
        re-raised untouched, as Kafka lets ``Error``\\s through. A context that already failed is
        left alone and yields ``None`` (its later stages are skipped).
        """
        if not isinstance(first_error, Exception):
            raise first_error
        if ctx.failed:
            return None
        if isinstance(first_error, ConversionPending):
            try:
                return cast(T, await converted(operation, first_error))
            except Exception as exc:
                first_error = exc
        ctx.position(stage, executing_class)
        timeout_ms = self.policy.retry_timeout_ms
        deadline = self._clock() + timeout_ms / 1000 if timeout_ms >= 0 else math.inf
        error: Exception = first_error
        attempt = 1
        while True:
            ctx.attempt = attempt
            self.metrics.record_failure()
            if not is_retriable(error) or self.is_stopping() or self._clock() >= deadline:
                break
            await self._backoff(attempt, deadline)
            self.metrics.total_retries += 1
            if self.is_stopping():
                break
            attempt += 1
            try:
                result = await converted(operation)
            except Exception as exc:
                error = exc
                continue
            ctx.attempt = attempt
            return result
        await self._failed(ctx, stage, error)
        return None

    async def _failed(self, ctx: ProcessingContext, stage: Stage, error: Exception) -> None:
        ctx.error = error
        self._failed_records += 1
        self.metrics.total_errors += 1
        if not is_tolerable(stage, error):
            raised: ConnectException | None = ConnectException("Unhandled exception in error handler")
        elif not self.tolerates_all:
            raised = ConnectException("Tolerance exceeded in error handler")
        else:
            raised = None
            self.metrics.total_records_skipped += 1
        try:
            await self._report_all(ctx)
        except Exception as exc:  # Kafka ignores these futures; the reporter already logged why
            log.warning(
                "task.error_report_failed",
                connector=self.connector,
                task=self.task,
                stage=str(stage),
                error=repr(exc),
            )
        if raised is not None:
            raise raised from error

    async def report(
        self, ctx: ProcessingContext, stage: Stage, executing_class: type | None, error: BaseException
    ) -> None:
        """Record and report a failure that happened outside :meth:`recover` (Kafka's ``executeFailed``).

        No retry and no tolerance decision: the caller decides (a source loop reports producer
        failures only under ``all``; the errant record reporter fails the task after ``put`` under
        ``none``). Raises the first reporter failure, after every reporter ran.
        """
        ctx.position(stage, executing_class)
        ctx.error = error
        ctx.attempt = max(ctx.attempt, 1)
        self._failed_records += 1
        self.metrics.record_failure()
        self.metrics.total_errors += 1
        await self._report_all(ctx)

    async def _report_all(self, ctx: ProcessingContext) -> None:
        first: Exception | None = None
        for reporter in self._reporters:
            try:
                await reporter.report(ctx, self.metrics)
            except Exception as exc:
                first = first or exc
        if first is not None:
            raise first

    # ---- backoff ----------------------------------------------------------------------------

    def backoff_ms(self, attempt: int, remaining_ms: float) -> float:
        """Kafka's delay before retry ``attempt + 1``: exponential, randomised above the maximum."""
        delay: float = RETRIES_DELAY_MIN_MS << min(attempt - 1, 62)
        maximum = self.policy.retry_delay_max_ms
        if delay > maximum:
            if self._rng is None:
                self._rng = random.Random()
            delay = self._rng.randrange(maximum) if maximum > 0 else 0
        return max(0.0, min(delay, remaining_ms))

    async def _backoff(self, attempt: int, deadline: float) -> None:
        """Sleep the delay unless stopping is requested first."""
        delay_s = self.backoff_ms(attempt, (deadline - self._clock()) * 1000) / 1000
        sleeper = asyncio.ensure_future(self._sleep(delay_s))
        watcher = asyncio.ensure_future(self._watch_stop())
        try:
            await asyncio.wait({sleeper, watcher}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in (sleeper, watcher):
                waiter.cancel()
            await asyncio.gather(sleeper, watcher, return_exceptions=True)
        if not sleeper.cancelled() and sleeper.exception() is not None:
            raise cast(BaseException, sleeper.exception())

    async def _watch_stop(self) -> None:
        while not self.is_stopping():  # noqa: ASYNC110 - stopping() is a callable, not an event
            await asyncio.sleep(_STOP_POLL_S)
