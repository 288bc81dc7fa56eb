"""A real distributed worker process with ``task.processes=3`` (a host per task): a segfaulting task fails alone, the
worker and its REST API stay up, another connector keeps delivering, and /metrics keeps the
per-task names for tasks that run in task hosts. Without ``task.processes`` a worker process on
Kafka, distributed or standalone, runs its tasks in a task host per core; with ``0``, in itself."""

from __future__ import annotations

import asyncio
import os
import sys
from functools import partial
from pathlib import Path

import aiohttp
import pytest

from engine.testing.cluster import free_port, request, worker_cluster
from engine.testing.waiting import eventually
from tests.integration.brokers import Broker
from tests.worker.task_host.connectors import TRIGGER
from tests.worker.task_host.test_task_processes import MODULE, _append, _delivered, _pipeline

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]


async def test_a_segfault_in_a_task_host_leaves_the_worker_process_serving(
    kafka: Broker, tmp_path: Path
) -> None:
    source_file, sink_prefix, source, sink = _pipeline(tmp_path, "w", tasks=1)
    trigger = tmp_path / "segv.trigger"
    with worker_cluster(kafka.bootstrap, tmp_path, extra={"task.processes": "3"}) as cluster:
        worker = cluster.start_worker()
        await cluster.started(worker)
        for name, config in (
            ("src", source),
            ("sink", sink),
            ("segv", {"connector.class": f"{MODULE}.SegfaultConnector", TRIGGER: str(trigger)}),
        ):
            status, body = await request(worker, "POST", "/connectors", {"name": name, "config": config})
            assert status == 201, body

        async def running(name: str) -> bool:
            status, body = await request(worker, "GET", f"/connectors/{name}/status")
            return status == 200 and [t["state"] for t in body["tasks"]] == ["RUNNING"]

        for name in ("src", "sink", "segv"):
            await eventually(partial(running, name), timeout=60, interval=0.2, message=f"{name} runs")
        _append(source_file, [f"a-{i}" for i in range(300)])
        await _delivered(sink_prefix, [f"a-{i}" for i in range(300)])

        trigger.touch()

        async def failed() -> str | None:
            _, body = await request(worker, "GET", "/connectors/segv/status")
            task = body["tasks"][0]
            return task.get("trace") if task["state"] == "FAILED" else None

        trace = await eventually(failed, timeout=60, interval=0.2, message="the segfaulting task is FAILED")
        assert "Task process exited with signal SIGSEGV (-11)" in trace
        assert worker.alive

        _append(source_file, [f"b-{i}" for i in range(300)])
        await _delivered(sink_prefix, [f"{p}-{i}" for p in "ab" for i in range(300)])

        async def counted() -> bool:
            async with aiohttp.ClientSession() as session, session.get(worker.url + "/metrics") as response:
                text = await response.text()
            return any(
                line.startswith(
                    'kafka_connect_source_task_source_record_poll_total{connector="src",task="0"}'
                )
                and float(line.rsplit(" ", 1)[1]) >= 600
                for line in text.splitlines()
            )

        await eventually(counted, timeout=30, interval=0.5, message="the host's counters reach /metrics")
        assert worker.alive
        await asyncio.sleep(0)


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid``."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


async def test_a_distributed_worker_runs_its_tasks_in_a_task_host_per_core_by_default(
    kafka: Broker, tmp_path: Path
) -> None:
    source_file, sink_prefix, source, sink = _pipeline(tmp_path, "d", tasks=1)
    with worker_cluster(kafka.bootstrap, tmp_path) as cluster:  # no task.processes in its properties
        worker = cluster.start_worker()
        await cluster.started(worker)
        for name, config in (("src", source), ("sink", sink)):
            status, body = await request(worker, "POST", "/connectors", {"name": name, "config": config})
            assert status == 201, body
        _append(source_file, [f"a-{i}" for i in range(100)])
        await _delivered(sink_prefix, [f"a-{i}" for i in range(100)])
        hosts = _children(worker.process.pid)
        assert len(hosts) == min(2, os.cpu_count() or 1)  # a host per task, up to the machine's cores
        assert "task_host.started" in worker.output()


async def _standalone(run: Path, worker: dict[str, str], *connectors: Path) -> asyncio.subprocess.Process:
    """``python -m engine standalone`` with these properties and connector files; its log in ``run``."""
    properties = run / "worker.properties"
    properties.write_text("".join(f"{k}={v}\n" for k, v in worker.items()))
    with (run / "worker.log").open("wb") as log:
        return await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "engine",
            "standalone",
            str(properties),
            *map(str, connectors),
            stdout=log,
            stderr=log,
        )


@pytest.mark.parametrize(("told", "hosts"), [({}, min(2, os.cpu_count() or 1)), ({"task.processes": "0"}, 0)])
async def test_a_standalone_worker_on_kafka_runs_its_tasks_in_task_hosts_unless_told_0(
    kafka: Broker, tmp_path: Path, told: dict[str, str], hosts: int
) -> None:
    source_file, sink_prefix, source, sink = _pipeline(tmp_path, "s", tasks=1)
    files = []
    for name, config in (("src", source), ("sink", sink)):
        files.append(path := tmp_path / f"{name}.properties")
        path.write_text("".join(f"{k}={v}\n" for k, v in {"name": name, **config}.items()))
    worker = {
        "bootstrap.servers": kafka.bootstrap,
        "listeners": f"http://127.0.0.1:{free_port()}",
        "offset.storage.file.filename": str(tmp_path / "offsets"),
        "offset.flush.interval.ms": "500",
        "task.shutdown.graceful.timeout.ms": "3000",
        **told,
    }
    process = await _standalone(tmp_path, worker, *files)
    try:
        _append(source_file, [f"a-{i}" for i in range(50)])
        await _delivered(sink_prefix, [f"a-{i}" for i in range(50)])
        assert len(_children(process.pid)) == hosts, (tmp_path / "worker.log").read_text()[-4000:]
    finally:
        process.terminate()
        assert await asyncio.wait_for(process.wait(), 60) == 0
