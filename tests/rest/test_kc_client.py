"""An existing Connect client, kafka-connect-py's ``kc`` CLI, drives a running worker end to end."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.brokers import free_port
from tests.rest.pki import PASSWORD, make_pki
from tests.rest.worker_process import Worker, start_worker

KC = str(Path(sys.executable).with_name("kc"))


@pytest.fixture
async def worker(tmp_path: Path) -> AsyncIterator[Worker]:
    properties = tmp_path / "worker.properties"
    properties.write_text(
        f"listeners=http://127.0.0.1:{free_port()}\nconfig.storage.file.filename={tmp_path / 'configs.log'}\n"
    )
    running = await start_worker(properties)
    yield running
    await running.stop()


async def kc(worker: Worker, *args: str, env: dict[str, str] | None = None) -> Any:
    """Run ``kc``; return its JSON output (None when it prints nothing)."""
    process = await asyncio.create_subprocess_exec(
        KC,
        "--url",
        worker.url,
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "NO_COLOR": "1", **(env or {})},
    )
    out, err = await process.communicate()
    assert process.returncode == 0, f"kc {' '.join(args)} failed: {err.decode()} {out.decode()}"
    text = out.decode().strip()
    return json.loads(text) if text else None


async def state(worker: Worker, name: str, wanted: str, tasks: int) -> dict[str, Any]:
    async with asyncio.timeout(20):
        while True:
            status: dict[str, Any] = await kc(worker, "status", name)
            if (
                status["connector"]["state"] == wanted
                and [t["state"] for t in status["tasks"]] == [wanted] * tasks
            ):
                return status
            await asyncio.sleep(0.05)


async def test_kc_round_trip(worker: Worker) -> None:
    config = {"connector.class": "engine.testing.RecordingSourceConnector", "tasks.max": "2"}
    created = await kc(worker, "create", "-d", json.dumps({"name": "orders", "config": config}))
    assert created["name"] == "orders"
    assert await kc(worker, "list") == ["orders"]
    await state(worker, "orders", "RUNNING", 2)

    await kc(worker, "pause", "orders")
    await state(worker, "orders", "PAUSED", 2)
    await kc(worker, "resume", "orders")
    await state(worker, "orders", "RUNNING", 2)
    await kc(worker, "restart", "orders", "--include-tasks")
    await state(worker, "orders", "RUNNING", 2)
    await kc(worker, "restart-task", "orders", "1")
    assert (await kc(worker, "task-status", "orders", "1"))["id"] == 1

    updated = await kc(worker, "update", "orders", "-d", json.dumps({**config, "tasks.max": "3"}))
    assert updated["config"]["tasks.max"] == "3"
    await state(worker, "orders", "RUNNING", 3)
    assert (await kc(worker, "config", "orders"))["tasks.max"] == "3"
    assert len(await kc(worker, "list-tasks", "orders")) == 3

    await kc(worker, "delete", "orders")
    assert await kc(worker, "list") == []


async def test_kc_over_https(tmp_path: Path) -> None:
    """kc (requests) verifies the worker's certificate against the test CA (REQUESTS_CA_BUNDLE)."""
    pki = make_pki(tmp_path / "pki")
    properties = tmp_path / "worker.properties"
    properties.write_text(
        f"listeners=https://127.0.0.1:{free_port()}\n"
        f"ssl.keystore.type=PKCS12\nssl.keystore.location={pki.server_p12}\n"
        f"ssl.keystore.password={PASSWORD}\n"
    )
    worker = await start_worker(properties)
    try:
        assert worker.url.startswith("https://")
        trust = {"REQUESTS_CA_BUNDLE": str(pki.ca_pem)}
        config = {"connector.class": "engine.testing.RecordingSourceConnector", "tasks.max": "1"}
        created = await kc(worker, "create", "-d", json.dumps({"name": "tls", "config": config}), env=trust)
        assert created["name"] == "tls"
        assert await kc(worker, "list", env=trust) == ["tls"]
        await kc(worker, "delete", "tls", env=trust)
        assert await kc(worker, "list", env=trust) == []
        process = await asyncio.create_subprocess_exec(  # trusting another CA: refused (kc exits 0 anyway)
            KC,
            "--url",
            worker.url,
            "list",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            env={**os.environ, "NO_COLOR": "1", "REQUESTS_CA_BUNDLE": str(pki.other_ca_pem)},
        )
        out, _ = await process.communicate()
        assert "CERTIFICATE_VERIFY_FAILED" in out.decode()
    finally:
        await worker.stop()
