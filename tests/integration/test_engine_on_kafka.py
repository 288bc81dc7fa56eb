"""The embedded engine with its config log on a Kafka topic: state survives a restart of the engine."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from engine import Engine
from engine.testing import CALLS
from tests.integration.brokers import Broker
from tests.killed_worker import calls_in, delete_in_a_worker_killed_inside_deleted

pytestmark = pytest.mark.integration

SOURCE = {"connector.class": "engine.testing.RecordingSourceConnector", "tasks.max": "2"}


async def test_a_paused_connector_comes_back_paused_after_a_restart_and_deletes(
    broker: Broker, topic: str
) -> None:
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


async def test_a_worker_killed_inside_deleted_runs_it_again_after_restart(
    broker: Broker, topic: str, tmp_path: Path
) -> None:
    worker = {"bootstrap.servers": broker.bootstrap, "config.storage.topic": topic}
    record = tmp_path / "calls.jsonl"
    config = {
        **SOURCE,
        "test.exit.deleted": "true",
        "test.exit.once.file": str(tmp_path / "exited"),
        "test.record.file": str(record),
    }
    await delete_in_a_worker_killed_inside_deleted(worker, config)
    killed = calls_in(record)
    assert killed[-1] == ("connector", "deleted")

    async with Engine(worker) as engine:
        await engine.wait_for_state("doomed", "DESTROYED", timeout=20)
        assert await engine.connectors() == []
    assert calls_in(record)[len(killed) :] == [("connector", "initialize"), ("connector", "deleted")]

    async with Engine(worker) as engine:
        assert await engine.connectors() == []
    assert len(calls_in(record)) == len(killed) + 2
