"""A task's handle on Spark (``self.context.spark``): its owner, plus the errors.retry policy.

Retries follow Kafka Connect's RetryWithToleranceOperator: 300 ms doubling, capped at
``errors.retry.delay.max.ms``, the last sleep cut to the deadline and one final attempt there.
One difference: the ``errors.retry.timeout`` window opens at the first failure, not at the
first attempt, since a Spark job (or the session start) may itself outlast the window.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, TypeVar

import structlog

from engine.spark.supervisor import JobOwner, SparkJobFailed, SparkSupervisor

T = TypeVar("T")

log = structlog.get_logger(component="spark")

RETRY_DELAY_MIN_MS = 300


class TaskSpark:
    """Runs Spark work for one task generation, retrying failed jobs per ``errors.retry.*``."""

    def __init__(
        self,
        supervisor: SparkSupervisor,
        owner: JobOwner,
        retry_timeout_ms: int = 0,
        retry_delay_max_ms: int = 60000,
    ) -> None:
        self.supervisor = supervisor
        self.owner = owner
        self.retry_timeout_ms = retry_timeout_ms
        self.retry_delay_max_ms = retry_delay_max_ms

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(spark, *args)`` as a supervised job; SparkJobFailed once retries are spent.

        ``retry_timeout_ms``: 0 = no retry, -1 = retry forever. SparkJobCancelled (the task is
        being paused, stopped or deleted) propagates at once.
        """
        first_failure: float | None = None
        attempt = 0
        while True:
            attempt += 1
            try:
                return await self.supervisor.run(self.owner, fn, *args)
            except SparkJobFailed as exc:
                if first_failure is None:
                    first_failure = time.monotonic()
                delay = self._next_delay(attempt, first_failure)
                if delay is None:
                    raise
                log.warning(
                    "spark.job_retry",
                    connector=self.owner.connector,
                    task=self.owner.task,
                    generation=self.owner.generation,
                    attempt=attempt,
                    delay_ms=round(delay * 1000),
                    error=str(exc).splitlines()[0],
                )
                await asyncio.sleep(delay)

    def _next_delay(self, attempt: int, first_failure: float) -> float | None:
        """Seconds to wait before the next attempt, or None when the policy is spent."""
        if self.retry_timeout_ms == 0:
            return None
        delay_ms = min(RETRY_DELAY_MIN_MS << min(attempt - 1, 32), self.retry_delay_max_ms)
        if self.retry_timeout_ms < 0:
            return delay_ms / 1000
        remaining_ms = self.retry_timeout_ms - (time.monotonic() - first_failure) * 1000
        if remaining_ms <= 0:
            return None
        return min(delay_ms, remaining_ms) / 1000

    async def cancel(self, timeout: float = 1.0) -> int:
        """Cancel this task generation's running jobs (what pause/stop/delete call)."""
        return await self.supervisor.cancel(self.owner, timeout)
