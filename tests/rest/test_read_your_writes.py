"""A create or config update answers once the connector started and its tasks are configured, as
Kafka's ``StandaloneHerder`` does: a status read right after never misses. Black box, over HTTP,
against a ``connect-engine standalone`` process."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from engine import Engine
from tests.integration.brokers import free_port
from tests.rest.worker_process import Worker, start_worker

SOURCE = {"connector.class": "engine.testing.RecordingSourceConnector", "tasks.max": "2"}


@pytest.fixture
async def worker(tmp_path: Path) -> AsyncIterator[Worker]:
    properties = tmp_path / "worker.properties"
    properties.write_text(
        f"listeners=http://127.0.0.1:{free_port()}\ntask.shutdown.graceful.timeout.ms=1000\n"
    )
    started = await start_worker(properties)
    yield started
    if started.process.returncode is None:
        started.process.kill()
        await started.process.wait()


async def call(worker: Worker, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    async with (
        aiohttp.ClientSession() as session,
        session.request(method, worker.url + path, json=body) as response,
    ):
        text = await response.text()
        return response.status, (await response.json()) if text else None


async def test_status_right_after_create_or_update_is_always_there(worker: Worker) -> None:
    for round_ in range(12):  # today's race showed in about 1 of 4 tries
        name = f"orders-{round_}"
        code, info = await call(worker, "POST", "/connectors", {"name": name, "config": SOURCE})
        assert code == 201
        assert [t["task"] for t in info["tasks"]] == [0, 1]  # the answer lists the tasks
        code, status = await call(worker, "GET", f"/connectors/{name}/status")
        assert code == 200, status
        assert status["connector"]["state"] == "RUNNING"
        assert len(status["tasks"]) == 2
        code, info = await call(worker, "PUT", f"/connectors/{name}/config", {**SOURCE, "tasks.max": "3"})
        assert code == 200
        assert [t["task"] for t in info["tasks"]] == [0, 1, 2]
        code, status = await call(worker, "GET", f"/connectors/{name}/status")
        assert code == 200
        assert len(status["tasks"]) == 3


async def test_a_connector_whose_start_raises_answers_500_and_stays_failed(worker: Worker) -> None:
    config = {**SOURCE, "test.fail.start": "true"}
    code, body = await call(worker, "POST", "/connectors", {"name": "broken", "config": config})
    assert (code, body["message"]) == (500, "Failed to transition connector broken to state STARTED")
    code, written = await call(worker, "GET", "/connectors/broken/config")
    assert code == 200  # the config stays written, as in Kafka
    assert written["test.fail.start"] == "true"
    code, status = await call(worker, "GET", "/connectors/broken/status")
    assert status["connector"]["state"] == "FAILED"
    assert "injected failure" in status["connector"]["trace"]


async def test_embedded_create_returns_with_status_and_task_configs_in_place() -> None:
    async with Engine() as engine:
        for round_ in range(12):
            name = f"c{round_}"
            info = await engine.create_connector(name, SOURCE)
            assert len(info["tasks"]) == 2
            status = await engine.connector_status(name)  # never "No status found"
            assert status["connector"]["state"] == "RUNNING"
            assert len(await engine.task_configs(name)) == 2
