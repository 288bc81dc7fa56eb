"""``error.rest.response.message.detail.enabled=false``: no traces or 5xx details in REST answers,
while the log and the embedded API keep them."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from structlog.testing import capture_logs

from engine import Engine
from engine.errors import ConfigError
from engine.rest.app import make_app
from engine.testing import CALLS, FAULTS
from tests.rest.conftest import FAST, SOURCE

Client = TestClient[web.Request, web.Application]
QUIET = {**FAST, "error.rest.response.message.detail.enabled": "false"}


@pytest.fixture
async def quiet_engine() -> AsyncIterator[Engine]:
    CALLS.clear()
    FAULTS.reset()
    async with Engine(QUIET) as running:
        yield running
    FAULTS.reset()


@pytest.fixture
async def quiet(quiet_engine: Engine) -> AsyncIterator[Client]:
    async with TestClient(TestServer(make_app(quiet_engine, rest_timeout=2.0), host="127.0.0.1")) as http:
        yield http


async def test_a_failed_start_answers_500_without_its_details_and_logs_them(quiet: Client) -> None:
    config = {**SOURCE, "test.fail.start": "true"}
    with capture_logs() as logs:
        response = await quiet.post("/connectors", json={"name": "broken", "config": config})
    assert response.status == 500
    body = await response.json()
    assert body["error_code"] == 500
    assert "broken" not in body["message"]
    assert "details are in the worker's log" in body["message"]
    incident = body["message"].split("(incident ")[1].split(")")[0]
    [hidden] = [e for e in logs if e["event"] == "rest.error_hidden"]
    assert hidden["incident"] == incident
    assert hidden["message"] == "Failed to transition connector broken to state STARTED"
    assert hidden["log_level"] == "error"


async def test_status_traces_are_replaced_and_the_embedded_api_keeps_them(
    quiet: Client, quiet_engine: Engine
) -> None:
    config = {**SOURCE, "test.fail.task.start": "true"}
    with capture_logs() as logs:
        assert (await quiet.post("/connectors", json={"name": "tasks", "config": config})).status == 201
        await quiet_engine.wait_for_state("tasks", "RUNNING", tasks=["FAILED", "FAILED"])
    failures = [e for e in logs if e["event"] == "task.state_changed" and e["to_state"] == "FAILED"]
    assert {e["task"] for e in failures} == {0, 1}
    assert all("injected failure in task-" in e["trace"] for e in failures)  # the log keeps the trace
    status = await (await quiet.get("/connectors/tasks/status")).json()
    worker = quiet_engine.worker.worker_id
    for task in status["tasks"]:
        assert task["state"] == "FAILED"
        assert task["trace"] == (
            "The trace is not shown (error.rest.response.message.detail.enabled=false); it is "
            f"in the log of worker {worker}."
        )
    one = await (await quiet.get("/connectors/tasks/tasks/0/status")).json()
    assert "injected failure" not in one["trace"]
    expanded = await (await quiet.get("/connectors?expand=status")).json()
    assert all("injected failure" not in t["trace"] for t in expanded["tasks"]["status"]["tasks"])
    embedded = await quiet_engine.connector_status("tasks")
    assert "injected failure in task-0.start" in embedded["tasks"][0]["trace"]
    restarted = await quiet.post("/connectors/tasks/restart?includeTasks=true&onlyFailed=true")
    assert restarted.status == 202
    assert "injected failure" not in await restarted.text()


async def test_client_errors_keep_their_messages(quiet: Client) -> None:
    response = await quiet.get("/connectors/ghost/status")
    assert response.status == 404
    assert (await response.json())["message"] == "No status found for connector ghost"
    bad = await quiet.post("/connectors", json={"name": "x", "config": {"tasks.max": "1"}})
    assert (await bad.json())["message"] == "Connector config contains no connector type"


async def test_a_bad_value_is_refused_when_the_app_is_made() -> None:
    async with Engine({**FAST, "error.rest.response.message.detail.enabled": "sometimes"}) as engine:
        with pytest.raises(ConfigError, match=r"error\.rest\.response\.message\.detail\.enabled"):
            make_app(engine)
