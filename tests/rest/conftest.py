"""A started engine behind the REST app on a real loopback port, and an HTTP client for it."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from engine import Engine
from engine.rest.app import make_app
from engine.testing import CALLS, FAULTS

FAST = {
    "task.shutdown.graceful.timeout.ms": "500",
    "connector.shutdown.graceful.timeout.ms": "500",
    "connector.deleted.timeout.ms": "1000",
    "connector.callback.timeout.ms": "5000",
}
SOURCE = {"connector.class": "engine.testing.RecordingSourceConnector", "tasks.max": "2"}
SINK = {"connector.class": "engine.testing.RecordingSinkConnector", "tasks.max": "1", "topics": "t"}


@pytest.fixture
async def engine() -> AsyncIterator[Engine]:
    CALLS.clear()
    FAULTS.reset()
    async with Engine(FAST) as running:
        yield running
    FAULTS.reset()


@pytest.fixture
async def client(engine: Engine) -> AsyncIterator[TestClient[web.Request, web.Application]]:
    server = TestServer(make_app(engine, rest_timeout=2.0), host="127.0.0.1")
    async with TestClient(server) as http:
        yield http
