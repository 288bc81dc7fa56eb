"""TaskSpark: errors.retry.* policy around supervised jobs, on real local Spark."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from structlog.testing import capture_logs

from engine.spark import JobOwner, SparkJobCancelled, SparkJobFailed, SparkSupervisor, TaskSpark
from tests.spark.jobs import failing_job, long_job, wait_started


def flaky(failures: int, attempts: list[int]) -> Callable[[Any], int]:
    """A job that fails in Spark ``failures`` times, then counts 5 rows."""
    fail = failing_job("flaky partition")

    def fn(spark: Any) -> int:
        attempts.append(1)
        if len(attempts) <= failures:
            return fail(spark)
        return int(spark.range(5).count())

    return fn


async def test_failed_job_is_retried_until_it_succeeds(supervisor: SparkSupervisor) -> None:
    attempts: list[int] = []
    spark = TaskSpark(
        supervisor, JobOwner("retrying", 0, 1), retry_timeout_ms=30_000, retry_delay_max_ms=1000
    )
    with capture_logs() as logs:
        assert await spark.run(flaky(2, attempts)) == 5
    assert len(attempts) == 3
    retries = [e for e in logs if e["event"] == "spark.job_retry"]
    assert [e["delay_ms"] for e in retries] == [300, 600]
    assert all(e["connector"] == "retrying" and e["task"] == 0 for e in retries)


async def test_retries_stop_when_the_retry_timeout_is_spent(supervisor: SparkSupervisor) -> None:
    attempts: list[int] = []
    spark = TaskSpark(supervisor, JobOwner("exhausted", 0, 1), retry_timeout_ms=800)
    with pytest.raises(SparkJobFailed, match="flaky partition") as info:
        await spark.run(flaky(1000, attempts))
    assert len(attempts) >= 2
    assert "flaky partition" in str(info.value.__cause__)


async def test_zero_retry_timeout_means_one_attempt(supervisor: SparkSupervisor) -> None:
    attempts: list[int] = []
    spark = TaskSpark(supervisor, JobOwner("no-retry", 0, 1))
    with pytest.raises(SparkJobFailed):
        await spark.run(flaky(1000, attempts))
    assert len(attempts) == 1


async def test_cancellation_is_never_retried(supervisor: SparkSupervisor, marker: Callable[[], str]) -> None:
    owner = JobOwner("cancel-no-retry", 0, 1)
    spark = TaskSpark(supervisor, owner, retry_timeout_ms=-1)
    m = marker()
    attempts: list[int] = []
    slow = long_job(m)

    def counted(session: Any) -> int:
        attempts.append(1)
        return slow(session)

    job = asyncio.create_task(spark.run(counted))
    await wait_started(m)
    assert await spark.cancel() == 1
    with pytest.raises(SparkJobCancelled):
        await job
    assert len(attempts) == 1
    assert supervisor.running("cancel-no-retry") == 0
