"""The embedded engine with its config log on a Kafka topic: state survives a restart of the engine."""

from __future__ import annotations

import uuid

import pytest

from engine import Engine
from engine.testing import CALLS
from tests.integration.brokers import Broker

pytestmark = pytest.mark.integration

SOURCE = {"connector.class": "engine.testing.RecordingSourceConnector", "tasks.max": "2"}


async def test_a_paused_connector_comes_back_paused_after_a_restart_and_deletes(broker: Broker, topic: str) -> None:
    CALLS.clear()
    worker = {"bootstrap.servers": broker.bootstrap, "config.storage.topic": topic}
    name = f"c-{uuid.uuid4().hex[:8]}"
    async with Engine(worker) as engine:
        await engine.create_connector(name, SOURCE)
        await engine.wait_for_state(name, "RUNNING", tasks=2)
        await engine.pause_connector(name)
        await engine.wait_for_state(name, "PAUSED", tasks=2)
    async with Engine(worker) as engine:
        await engine.wait_for_state(name, "PAUSED", tasks=2)
        assert await engine.connectors() == [name]
        outcome = await engine.delete_connector(name)
        assert outcome.succeeded
        assert "deleted" in CALLS.methods(name)
        assert await engine.connectors() == []
