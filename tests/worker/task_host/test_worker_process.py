"""A real distributed worker process with ``task.processes=3`` (a host per task): a segfaulting task fails alone, the
worker and its REST API stay up, another connector keeps delivering, and /metrics keeps the
per-task names for tasks that run in task hosts."""

from __future__ import annotations

import asyncio
from functools import partial
from pathlib import Path

import aiohttp
import pytest

from engine.testing.cluster import request, worker_cluster
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
