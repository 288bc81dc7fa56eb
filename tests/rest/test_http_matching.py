"""Request matching as Connect's Jersey does it, against a real ``connect-engine standalone`` process:
415 for a non-JSON body, a trailing ``/``, HEAD and OPTIONS, and ``expand`` with unknown values."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from importlib.metadata import version
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.integration.brokers import free_port
from tests.rest.conftest import SOURCE
from tests.rest.worker_process import READY_TIMEOUT_S, Worker, start_worker

UNSUPPORTED = {"error_code": 415, "message": "HTTP 415 Unsupported Media Type"}


@pytest.fixture
async def worker(tmp_path: Path) -> AsyncIterator[Worker]:
    properties = tmp_path / "worker.properties"
    properties.write_text(
        f"listeners=http://127.0.0.1:{free_port()}\ntask.shutdown.graceful.timeout.ms=1000\n"
    )
    process = await start_worker(properties)
    try:
        yield process
    finally:
        if process.process.returncode is None:
            await process.stop()


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


async def call(
    http: aiohttp.ClientSession, worker: Worker, method: str, path: str, **kwargs: Any
) -> tuple[int, Any, aiohttp.ClientResponse]:
    async with http.request(method, worker.url + path, **kwargs) as response:
        text = await response.text()
        body: Any = text
        if response.content_type == "application/json" and text:
            body = await response.json()
        return response.status, body, response


async def test_a_body_that_is_not_json_is_415_before_anything_runs(
    worker: Worker, http: aiohttp.ClientSession
) -> None:
    create = '{"name": "orders", "config": {"connector.class": "engine.testing.RecordingSourceConnector"}}'
    for content_type in ("text/plain", "application/x-www-form-urlencoded", "application/xml", "json"):
        status, body, _ = await call(
            http, worker, "POST", "/connectors", data=create, headers={"Content-Type": content_type}
        )
        assert (status, body) == (415, UNSUPPORTED), content_type
    for method, path in [
        ("PUT", "/connectors/orders/config"),
        ("PATCH", "/connectors/orders/config"),
        ("PUT", "/connector-plugins/RecordingSource/config/validate"),
        ("PUT", "/admin/loggers/engine"),
        ("PATCH", "/connectors/ghost/offsets"),
    ]:
        status, body, _ = await call(
            http, worker, method, path, data="{}", headers={"Content-Type": "text/plain"}
        )
        assert (status, body) == (415, UNSUPPORTED), path
    assert (await call(http, worker, "GET", "/connectors"))[1] == []  # nothing was created
    status, _, _ = await call(
        http,
        worker,
        "PUT",
        "/connectors/a/config",
        data=b'{"connector.class": "engine.testing.RecordingSourceConnector"}',
        headers={"Content-Type": "application/json; charset=UTF-8"},
    )
    assert status == 201
    status, _, _ = await call(
        http, worker, "POST", "/connectors", data=create.encode(), skip_auto_headers={"Content-Type"}
    )
    assert status == 201  # no Content-Type: read as JSON, as Jersey does
    status, _, _ = await call(
        http, worker, "PUT", "/connectors/orders/pause", headers={"Content-Type": "application/octet-stream"}
    )
    assert status == 202  # no body, nothing to refuse (a client library's default label)


async def test_trailing_slash_head_options_and_expand(worker: Worker, http: aiohttp.ClientSession) -> None:
    root = (await call(http, worker, "GET", "/"))[1]
    assert (root["version"], root["engine_version"]) == ("4.4.0", version("connect-engine"))
    status, created, _ = await call(
        http, worker, "POST", "/connectors/", json={"name": "orders", "config": SOURCE}
    )
    assert status == 201, created
    async with asyncio.timeout(READY_TIMEOUT_S):
        while (await call(http, worker, "GET", "/connectors/orders/status/"))[0] != 200:
            await asyncio.sleep(0.05)  # the status appears once the connector started
    for path in (
        "/connectors/orders/",
        "/connectors/orders/config/",
        "/connectors/orders/tasks/",
        "/health/",
    ):
        status, body, _ = await call(http, worker, "GET", path)
        assert status == 200, (path, body)
    assert (await call(http, worker, "GET", "/connectors/"))[1] == ["orders"]
    assert (await call(http, worker, "GET", "/connectors/ghost/"))[0] == 404
    assert (await call(http, worker, "GET", "/connectors/orders//"))[0] == 404  # one slash, as Jersey's (/)?

    status, body, response = await call(http, worker, "HEAD", "/connectors/orders")
    assert (status, body, response.content_type) == (200, "", "application/json")
    assert (await call(http, worker, "HEAD", "/connectors/ghost/"))[:2] == (404, "")
    assert (await call(http, worker, "HEAD", "/"))[0] == 200

    status, body, response = await call(http, worker, "OPTIONS", "/connectors")
    assert (status, body, response.headers["Allow"]) == (
        200,
        "HEAD, POST, GET, OPTIONS",
        "HEAD,POST,GET,OPTIONS",
    )
    assert response.content_type == "text/plain"
    status, body, response = await call(
        http, worker, "OPTIONS", "/connectors/orders/config/", headers={"Accept": "application/json"}
    )
    assert (status, body, response.headers["Allow"]) == (200, "", "HEAD,GET,OPTIONS,PUT,PATCH")
    assert (await call(http, worker, "OPTIONS", "/connectors/orders/pause"))[1] == "OPTIONS, PUT"
    assert (await call(http, worker, "OPTIONS", "/nowhere"))[0] == 404

    expanded = (await call(http, worker, "GET", "/connectors?expand=bogus"))[1]
    assert expanded == {"orders": {}}  # an object whenever expand is given, as Connect answers
    assert (await call(http, worker, "GET", "/connectors?expand="))[1] == {"orders": {}}
