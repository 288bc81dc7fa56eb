"""The supervisor on Spark Connect and a standalone cluster: delete cancels a running job (<= 1 s), and an
unreachable master or server fails the task with the reason, in bounded time. The standalone cluster's
driver runs in a child process (one SparkContext per process; this session's is local)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from engine import Engine
from engine.spark import SparkJobCancelled, SparkSupervisor
from tests.spark.jobs import long_udf_job, wait_started
from tests.spark_servers import child_env, free_port

from .test_lifecycle_coupling import JOBS, SparkPollConnector, SparkPollTask

CONNECTOR = {"connector.class": "tests.spark.test_modes.UdfPollConnector"}
REPO = Path(__file__).resolve().parents[2]


class UdfPollTask(SparkPollTask):
    """Each poll runs the DataFrame-only slow job (Spark Connect has no RDDs)."""

    async def poll(self) -> None:
        try:
            await self.context.spark.run(long_udf_job(self.job["marker"]))
        except (SparkJobCancelled, asyncio.CancelledError):
            self.job["outcomes"].append("cancelled")
            raise


class UdfPollConnector(SparkPollConnector):
    async def task_class(self) -> type[UdfPollTask]:  # type: ignore[override]  # user code may be async (docs/ARCHITECTURE.md, decision 7)
        return UdfPollTask


@pytest.fixture
async def connect_engine(spark_connect_url: str, connect_supervisor: SparkSupervisor) -> AsyncIterator[Engine]:
    await connect_supervisor.session()  # the server is warm before the clock starts
    async with Engine({"spark.remote": spark_connect_url, "task.shutdown.graceful.timeout.ms": "10000"}) as engine:
        yield engine


async def deleted_within(engine: Engine, name: str, marker: str) -> float:
    JOBS[name] = {"marker": marker, "outcomes": []}
    await engine.create_connector(name, CONNECTOR)
    await wait_started(marker, timeout=180)  # a cluster starts an executor for the application first
    started = time.monotonic()
    await engine.delete_connector(name)
    return time.monotonic() - started


@pytest.mark.timeout(300)
async def test_delete_cancels_a_running_job_on_spark_connect(connect_engine: Engine,
                                                             marker: Callable[[], str]) -> None:
    await deleted_within(connect_engine, "connect-deleted", marker())
    assert JOBS["connect-deleted"]["outcomes"] == ["cancelled", "stopped"]
    assert connect_engine.spark.running("connect-deleted") == 0
    assert connect_engine.spark.metrics.jobs_cancelled >= 1


STANDALONE_CHILD = """
import asyncio, json, sys, time
from engine import Engine
from tests.spark.test_modes import CONNECTOR, deleted_within
from tests.spark.test_lifecycle_coupling import JOBS
async def main(master, marker):
    worker = {"spark.master": master, "spark.conf.spark.driver.host": "127.0.0.1",
              "spark.conf.spark.driver.bindAddress": "127.0.0.1", "spark.conf.spark.cores.max": "2",
              "spark.conf.spark.executor.memory": "512m", "spark.conf.spark.ui.enabled": "false",
              "task.shutdown.graceful.timeout.ms": "10000"}
    async with Engine(worker) as engine:
        seconds = await deleted_within(engine, "standalone-deleted", marker)
        print(json.dumps({"seconds": seconds, "outcomes": JOBS["standalone-deleted"]["outcomes"],
                          "running": engine.spark.running("standalone-deleted"),
                          "cancelled": engine.spark.metrics.jobs_cancelled}))
asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


@pytest.mark.timeout(300)
def test_delete_cancels_a_running_job_on_a_standalone_cluster(spark_master_url: str, tmp_path: Path) -> None:
    env = {**child_env(), "PYTHONPATH": str(REPO), "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable}
    done = subprocess.run([sys.executable, "-c", STANDALONE_CHILD, spark_master_url, str(tmp_path / "started")],
                          capture_output=True, text=True, timeout=280, env=env, cwd=REPO, check=False)
    assert done.returncode == 0, (done.stdout[-3000:], done.stderr[-2000:])
    result = json.loads(next(line for line in reversed(done.stdout.splitlines()) if line.startswith("{\"seconds")))
    assert result["outcomes"] == ["cancelled", "stopped"]
    assert (result["running"], result["cancelled"]) == (0, 1)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("key", ["spark.remote", "spark.master"])
async def test_an_unreachable_server_fails_the_task_with_the_reason(key: str, marker: Callable[[], str]) -> None:
    port = free_port()  # nothing listens there
    url = f"sc://127.0.0.1:{port}" if key == "spark.remote" else f"spark://127.0.0.1:{port}"
    name = f"unreachable-{key.split('.')[1]}"
    JOBS[name] = {"marker": marker(), "outcomes": []}
    async with Engine({key: url, "spark.server.timeout.ms": "2000"}) as engine:
        started = time.monotonic()
        await engine.create_connector(name, CONNECTOR)
        await engine.wait_for_state(name, "RUNNING", tasks=["FAILED"], timeout=60)
        trace = (await engine.connector_status(name))["tasks"][0]["trace"]
        assert time.monotonic() - started < 60
    assert "SparkUnreachable" in trace
    assert f"127.0.0.1:{port}" in trace
    assert "is unreachable" in trace
    assert "spark.server.timeout.ms" in trace
