"""SparkSupervisor against real Spark in local mode: results, failures, cancellation by owner."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any

import pytest
from structlog.testing import capture_logs

from engine.spark import JobOwner, SparkJobCancelled, SparkJobFailed, SparkSupervisor, prometheus_families
from tests.spark.jobs import failing_job, long_job, wait_started

log = logging.getLogger(__name__)


async def test_run_returns_the_job_result(supervisor: SparkSupervisor) -> None:
    owner = JobOwner("counting", 0, 1)
    assert await supervisor.run(owner, lambda spark: spark.range(10).count()) == 10
    assert await supervisor.run(owner, lambda spark, n: spark.range(n).count(), 7) == 7


async def test_session_is_built_once(supervisor: SparkSupervisor) -> None:
    sessions = await asyncio.gather(*(supervisor.session() for _ in range(3)))
    assert all(s is sessions[0] for s in sessions)


async def test_run_keeps_the_event_loop_free(supervisor: SparkSupervisor) -> None:
    def slowish(spark: Any) -> int:
        def sleepy(rows: Any) -> Any:
            import time as _time

            _time.sleep(1.0)
            return rows

        return int(spark.sparkContext.parallelize(range(4), 2).mapPartitions(sleepy).count())

    ticks = 0
    job = asyncio.create_task(supervisor.run(JobOwner("loop", 0, 1), slowish))
    while not job.done():
        await asyncio.sleep(0.05)
        ticks += 1
    assert await job == 4
    assert ticks >= 5  # the job took >= 1 s; a blocked loop would have ticked once


async def test_job_failure_raises_spark_job_failed_with_the_spark_error(supervisor: SparkSupervisor) -> None:
    owner = JobOwner("failing", 3, 2)
    with pytest.raises(SparkJobFailed) as info:
        await supervisor.run(owner, failing_job("boom-from-the-udf"))
    message = str(info.value)
    assert "boom-from-the-udf" in message
    assert "connector failing task 3 (generation 2)" in message
    assert info.value.owner == owner
    assert info.value.__cause__ is not None
    assert "boom-from-the-udf" in str(info.value.__cause__)
    assert supervisor.running("failing") == 0


async def test_driver_side_error_is_a_job_failure_too(supervisor: SparkSupervisor) -> None:
    def broken(spark: Any) -> None:
        raise KeyError("no-such-table")

    with pytest.raises(SparkJobFailed, match="no-such-table") as info:
        await supervisor.run(JobOwner("driver", 0, 1), broken)
    assert isinstance(info.value.__cause__, KeyError)


async def test_cancel_by_owner_stops_a_running_job_quickly(
    supervisor: SparkSupervisor, marker: Callable[[], str]
) -> None:
    owner = JobOwner("cancel-me", 0, 1)
    started_marker = marker()
    job = asyncio.create_task(supervisor.run(owner, long_job(started_marker)))
    await wait_started(started_marker)
    assert supervisor.running("cancel-me") == 1

    with capture_logs() as logs:
        cancel_at = time.monotonic()
        assert await supervisor.cancel(owner, timeout=5.0) == 1
        with pytest.raises(SparkJobCancelled, match="cancel-me"):
            await job
        latency = time.monotonic() - cancel_at
    log.info("cancel latency %.3f s", latency)
    assert latency < 10.0  # ~0.1 s measured; the bound only catches a job left running
    assert supervisor.running("cancel-me") == 0
    assert any(e["event"] == "spark.jobs_cancelled" and e["connector"] == "cancel-me" for e in logs)


async def test_cancel_of_one_owner_leaves_another_owners_job_running(
    supervisor: SparkSupervisor, marker: Callable[[], str]
) -> None:
    a, b = JobOwner("owner-a", 0, 1), JobOwner("owner-b", 0, 1)
    ma, mb = marker(), marker()
    job_a = asyncio.create_task(supervisor.run(a, long_job(ma)))
    job_b = asyncio.create_task(supervisor.run(b, long_job(mb)))
    await asyncio.gather(wait_started(ma), wait_started(mb))

    assert await supervisor.cancel(a) == 1
    with pytest.raises(SparkJobCancelled):
        await job_a
    await asyncio.sleep(0.5)
    assert not job_b.done()
    assert supervisor.running("owner-b") == 1

    assert await supervisor.cancel(b) == 1
    with pytest.raises(SparkJobCancelled):
        await job_b


async def test_cancel_by_connector_name_and_by_task_covers_every_generation(
    supervisor: SparkSupervisor, marker: Callable[[], str]
) -> None:
    owners = [JobOwner("multi", 0, 1), JobOwner("multi", 1, 1), JobOwner("multi", 1, 2)]
    markers = [marker() for _ in owners]
    jobs = [asyncio.create_task(supervisor.run(o, long_job(m))) for o, m in zip(owners, markers, strict=True)]
    await asyncio.gather(*(wait_started(m) for m in markers))
    assert supervisor.running("multi") == 3

    assert await supervisor.cancel(("multi", 1)) == 2  # task 1, both generations
    for job in jobs[1:]:
        with pytest.raises(SparkJobCancelled):
            await job
    assert not jobs[0].done()

    assert await supervisor.cancel("multi") == 1
    with pytest.raises(SparkJobCancelled):
        await jobs[0]
    assert supervisor.running("multi") == 0


async def test_cancel_with_nothing_running_returns_zero(supervisor: SparkSupervisor) -> None:
    assert await supervisor.cancel("nobody") == 0
    assert await supervisor.cancel(("nobody", 0)) == 0


async def test_cancelling_the_awaiting_coroutine_cancels_the_spark_job(
    supervisor: SparkSupervisor, marker: Callable[[], str]
) -> None:
    m = marker()
    job = asyncio.create_task(supervisor.run(JobOwner("abandoned", 0, 1), long_job(m)))
    await wait_started(m)
    job.cancel()
    with pytest.raises(asyncio.CancelledError):
        await job
    deadline = time.monotonic() + 10.0
    while supervisor.running("abandoned"):
        assert time.monotonic() < deadline, "the Spark job outlived its awaiting task"
        await asyncio.sleep(0.05)


async def test_metrics_count_jobs_by_outcome(supervisor: SparkSupervisor, marker: Callable[[], str]) -> None:
    m = supervisor.metrics
    before = (m.jobs_succeeded, m.jobs_failed, m.jobs_cancelled, m.durations["failed"].count)
    owner = JobOwner("metered", 0, 1)

    await supervisor.run(owner, lambda spark: spark.range(3).count())
    with pytest.raises(SparkJobFailed):
        await supervisor.run(owner, failing_job("metered failure"))
    mk = marker()
    slow = asyncio.create_task(supervisor.run(owner, long_job(mk)))
    await wait_started(mk)
    assert m.jobs_running >= 1
    await supervisor.cancel(owner)
    with pytest.raises(SparkJobCancelled):
        await slow

    after = (m.jobs_succeeded, m.jobs_failed, m.jobs_cancelled, m.durations["failed"].count)
    assert [x - y for x, y in zip(after, before, strict=True)] == [1, 1, 1, 1]
    assert m.durations["cancelled"].sum_seconds > 0
    samples = {(s.name, tuple(s.labels.items())): s.value for f in prometheus_families(m) for s in f.samples}
    assert samples[("connect_engine_spark_jobs_total", (("outcome", "succeeded"),))] == m.jobs_succeeded
    assert samples[("connect_engine_spark_jobs_total", (("outcome", "cancelled"),))] == m.jobs_cancelled
    assert samples[("connect_engine_spark_job_seconds_count", (("outcome", "failed"),))] == m.durations["failed"].count
    assert ("connect_engine_spark_jobs_running", ()) in samples


def _stubborn_job(marker: str, linger_s: float) -> Callable[[Any], int]:
    """A job that swallows its first cancellation and lingers: its canceller keeps re-issuing meanwhile."""

    def fn(spark: Any) -> int:
        with contextlib.suppress(Exception):
            long_job(marker)(spark)
        time.sleep(linger_s)
        return 0

    return fn


async def test_a_job_the_owner_starts_after_a_cancel_is_not_cancelled_by_it(
    supervisor: SparkSupervisor, marker: Callable[[], str]
) -> None:
    """A sink's stop-time commit starts a job after its task's jobs were cancelled: it must complete."""
    owner = JobOwner("final-commit", 0, 1)
    m = marker()
    first = asyncio.create_task(supervisor.run(owner, _stubborn_job(m, linger_s=4.0)))
    await wait_started(m)
    cancelling = asyncio.create_task(supervisor.cancel(owner, timeout=6.0))
    await asyncio.sleep(0.5)  # the first action is cancelled; the job lingers, the cancel is re-issued

    def short(spark: Any) -> int:
        def slow(x: int) -> int:
            time.sleep(0.4)
            return x

        return int(spark.sparkContext.parallelize(range(4), 2).map(slow).count())

    assert await supervisor.run(owner, short) == 4
    with pytest.raises(SparkJobCancelled):
        await first
    assert await cancelling == 1
