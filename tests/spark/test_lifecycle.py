"""Laziness and shutdown, each in a fresh interpreter (one SparkContext per process)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from engine.spark import SparkSettings, SparkSupervisor

ROOT = Path(__file__).resolve().parents[2]


def run_python(code: str, timeout: float = 50.0) -> str:
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr[-4000:]
    return done.stdout


def test_importing_and_constructing_does_not_import_pyspark() -> None:
    out = run_python(
        """
        import asyncio, sys
        import engine.spark
        from engine.spark import SparkSettings, SparkSupervisor, TaskSpark, JobOwner
        sup = SparkSupervisor(SparkSettings.from_worker({"spark.master": "local[1]"}))
        TaskSpark(sup, JobOwner("c", 0, 1))
        assert sup.running() == 0
        asyncio.run(sup.shutdown())
        print(sorted(m for m in sys.modules if m.split(".")[0] in ("pyspark", "py4j")))
        """
    )
    assert out.strip() == "[]"


def test_shutdown_of_an_unused_supervisor_is_safe_and_idempotent() -> None:
    sup = SparkSupervisor(SparkSettings.from_worker({}))

    async def twice() -> None:
        await sup.shutdown()
        await sup.shutdown()

    asyncio.run(twice())
    assert sup.running() == 0


@pytest.mark.integration  # starts a Spark session (a JVM) in a child process
def test_shutdown_stops_the_session_once_and_refuses_new_jobs() -> None:
    out = run_python(
        """
        import asyncio
        from structlog.testing import capture_logs
        from engine.spark import JobOwner, SparkJobCancelled, SparkSettings, SparkSupervisor

        async def main():
            sup = SparkSupervisor(SparkSettings.from_worker({"spark.master": "local[2]"}))
            owner = JobOwner("c", 0, 1)
            with capture_logs() as logs:
                first = await asyncio.gather(*(sup.session() for _ in range(4)))
                assert all(s is first[0] for s in first)
                assert await sup.run(owner, lambda spark: spark.range(4).count()) == 4
                await sup.shutdown()
                await sup.shutdown()
            events = [e["event"] for e in logs]
            assert events.count("spark.session_started") == 1, events
            assert events.count("spark.session_stopped") == 1, events
            assert first[0].sparkContext._jsc is None  # stopped
            try:
                await sup.run(owner, lambda spark: 1)
            except SparkJobCancelled as exc:
                print("refused:", exc)
            else:
                raise AssertionError("run after shutdown was accepted")

        asyncio.run(main())
        """
    )
    assert "refused:" in out
    assert "shut down" in out


@pytest.mark.integration  # starts a Spark session (a JVM) in a child process
def test_a_task_interrupted_while_spark_starts_never_waits_for_the_start() -> None:
    """Ctrl-C during Spark's start-up: the waiting job and the stop-time commit are refused at once."""
    out = run_python(
        """
        import asyncio, time
        from engine.spark import JobOwner, SparkJobCancelled, SparkSettings, SparkSupervisor

        async def main():
            sup = SparkSupervisor(SparkSettings.from_worker({"spark.master": "local[1]"}))
            owner = JobOwner("c", 0, 1)
            first = asyncio.create_task(sup.run(owner, lambda spark: spark.range(2).count()))
            while not sup.starting:
                await asyncio.sleep(0.01)
            cancelled_at = time.monotonic()
            assert await sup.cancel(("c", 0)) == 1
            try:
                await first
            except SparkJobCancelled:
                print("waiting job refused after", round(time.monotonic() - cancelled_at, 1))
            try:
                await sup.run(owner, lambda spark: 1)  # the task's stop-time commit
            except SparkJobCancelled as exc:
                print("later job refused while starting:", sup.starting, exc)
            await sup.session()
            print("once started:", await sup.run(JobOwner("c", 0, 2), lambda spark: spark.range(3).count()))
            await sup.shutdown()

        asyncio.run(main())
        """,
        timeout=120,
    )
    lines = [line for line in out.splitlines() if line.startswith(("waiting", "later", "once"))]  # no log lines
    assert lines[0].startswith("waiting job refused after"), out  # how soon: bench/spark_sink.py
    assert lines[1].startswith("later job refused while starting: True"), out
    assert "interrupted while Spark was starting" in lines[1]
    assert lines[2] == "once started: 3"
