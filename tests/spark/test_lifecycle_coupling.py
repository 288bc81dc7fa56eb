"""Spark jobs live and die with their task, through a real engine: pause, stop, restart and delete
cancel a running job before the task stops; a failing job fails the task with the Spark error."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from engine import Engine
from engine.api import SourceConnector, SourceRecord, SourceTask, Task
from engine.spark import SparkJobCancelled, SparkSupervisor
from tests.spark.conftest import WORKER_CONFIG
from tests.spark.jobs import failing_job, long_job, wait_started

JOBS: dict[str, dict[str, Any]] = {}  # connector -> {"marker", "fail", "outcomes"}


class SparkPollTask(SourceTask):
    """Each poll runs one Spark job: a slow one (only cancellation ends it) or a failing one."""

    async def start(self, props: dict[str, str]) -> None:
        self.job = JOBS[props["name"]]

    async def poll(self) -> list[SourceRecord] | None:
        job = self.job
        fn = failing_job("boom in a partition") if job.get("fail") else long_job(job["marker"])
        try:
            await self.context.spark.run(fn)
        except (SparkJobCancelled, asyncio.CancelledError):  # the job, or the waiting poll, was cancelled
            job["outcomes"].append("cancelled")
            raise
        return None

    async def stop(self, connector_deleted: bool = False) -> None:
        self.job["outcomes"].append("stopped")


class SparkPollConnector(SourceConnector):
    async def start(self, props: dict[str, str]) -> None:
        self.props = props

    async def stop(self) -> None:
        return None

    async def task_class(self) -> type[Task]:  # type: ignore[override]  # user code may be async (docs/ARCHITECTURE.md, decision 7)
        return SparkPollTask

    async def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props)]


CONNECTOR = {"connector.class": f"{__name__}.SparkPollConnector"}


@pytest.fixture
async def engine(supervisor: SparkSupervisor) -> AsyncIterator[Engine]:
    await supervisor.session()  # the shared session exists first: the engine reuses it, never stops it
    async with Engine({**WORKER_CONFIG, "task.shutdown.graceful.timeout.ms": "10000"}) as running:
        yield running


def job(name: str, marker: Callable[[], str], **extra: Any) -> str:
    path = marker()
    JOBS[name] = {"marker": path, "outcomes": [], **extra}
    return path


async def _running_job(engine: Engine, name: str, marker: Callable[[], str]) -> None:
    started = job(name, marker)
    await engine.create_connector(name, CONNECTOR)
    await engine.wait_for_state(name, "RUNNING", tasks=1)
    await wait_started(started, timeout=60)


@pytest.mark.timeout(180)
async def test_pause_cancels_the_running_job_before_the_task_pauses(engine: Engine,
                                                                    marker: Callable[[], str]) -> None:
    await _running_job(engine, "paused", marker)
    await engine.pause_connector("paused")
    await engine.wait_for_state("paused", "PAUSED", tasks=["PAUSED"], timeout=30)
    assert JOBS["paused"]["outcomes"] == ["cancelled"]
    assert engine.spark.running("paused") == 0
    assert engine.spark.metrics.jobs_cancelled >= 1


@pytest.mark.timeout(180)
async def test_delete_cancels_the_job_and_stops_the_task(engine: Engine, marker: Callable[[], str]) -> None:
    await _running_job(engine, "deleted", marker)
    await engine.delete_connector("deleted")
    assert JOBS["deleted"]["outcomes"] == ["cancelled", "stopped"]
    assert engine.spark.running("deleted") == 0
    assert engine.spark.metrics.jobs_cancelled >= 1


@pytest.mark.timeout(180)
async def test_restart_cancels_the_old_generations_job(engine: Engine, marker: Callable[[], str]) -> None:
    await _running_job(engine, "restarted", marker)
    await engine.restart_connector("restarted", include_tasks=True)
    await engine.wait_for_state("restarted", "RUNNING", tasks=1, timeout=30)
    await asyncio.sleep(0)
    assert JOBS["restarted"]["outcomes"][:2] == ["cancelled", "stopped"]
    await engine.stop_connector("restarted")
    await engine.wait_for_state("restarted", "STOPPED", timeout=30)
    assert engine.spark.running("restarted") == 0


@pytest.mark.timeout(180)
async def test_a_failing_job_fails_the_task_with_the_spark_error(engine: Engine, marker: Callable[[], str]) -> None:
    job("failing", marker, fail=True)
    await engine.create_connector("failing", CONNECTOR)
    await engine.wait_for_state("failing", "RUNNING", tasks=["FAILED"], timeout=60)
    trace = (await engine.connector_status("failing"))["tasks"][0]["trace"]
    assert "boom in a partition" in trace
    assert "SparkJobFailed" in trace


async def test_spark_metrics_are_served_with_the_engines(engine: Engine) -> None:
    text = engine.metrics.render()
    assert "connect_engine_spark_jobs_running" in text
    assert 'connect_engine_spark_jobs_total{outcome="cancelled"}' in text


def test_an_engine_that_never_uses_spark_never_imports_pyspark(tmp_path: Path) -> None:
    import subprocess
    import sys

    code = ("import asyncio, sys\nfrom engine import Engine\n"
            "async def main():\n    async with Engine() as e:\n        await e.settled()\n"
            "asyncio.run(main())\nprint('pyspark' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip().splitlines()[-1] == "False"
