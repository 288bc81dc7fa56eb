"""A standalone worker, run as a user runs it (no --log-level), says when a connector is created,
updated and deleted, and when it stops: INFO lines naming the connector and the worker, as Connect's
default INFO log does."""

from __future__ import annotations

import json
from pathlib import Path

import aiohttp

from tests.integration.brokers import free_port
from tests.rest.worker_process import start_worker


async def test_create_update_delete_and_stop_are_logged(tmp_path: Path) -> None:
    properties = tmp_path / "worker.properties"
    properties.write_text(f"listeners=http://127.0.0.1:{free_port()}\n")
    worker = await start_worker(properties)
    config = {"connector.class": "RecordingSource", "tasks.max": "1"}
    try:
        async with aiohttp.ClientSession() as http:
            async with http.post(worker.url + "/connectors", json={"name": "orders", "config": config}) as r:
                assert r.status == 201
            async with http.put(
                worker.url + "/connectors/orders/config", json={**config, "tasks.max": "2"}
            ) as r:
                assert r.status == 200
            async with http.delete(worker.url + "/connectors/orders") as r:
                assert r.status == 204
    finally:
        assert await worker.stop() == 0
    await worker._drain
    events = [json.loads(line) for line in worker.log if line.startswith("{")]
    shown = [
        (e["event"], e.get("connector"), e["level"])
        for e in events
        if e["event"] in ("connector.created", "connector.updated", "connector.deleted", "worker.stopped")
    ]
    assert shown == [
        ("connector.created", "orders", "info"),
        ("connector.updated", "orders", "info"),
        ("connector.deleted", "orders", "info"),
        ("worker.stopped", None, "info"),
    ]
    by_event = {e["event"]: e for e in events}
    assert by_event["connector.created"]["connector_class"] == "RecordingSource"
    assert by_event["connector.deleted"]["succeeded"] is True
    assert by_event["worker.stopped"]["worker"] == worker.url.removeprefix("http://")
