"""``connect-engine standalone`` as a real process: files at start, REST, signals, durability."""

from __future__ import annotations

import asyncio
import json
import signal
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from engine.cli.standalone import read_connector_file, split_files
from engine.config.properties import parse_properties
from tests.integration.brokers import free_port
from tests.rest.worker_process import READY_TIMEOUT_S, Worker, start_worker


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    port = free_port()
    worker = tmp_path / "worker.properties"
    worker.write_text(
        f"listeners=http://127.0.0.1:{port}\n"
        f"config.storage.file.filename={tmp_path / 'configs.log'}\n"
        f"offset.storage.file.filename={tmp_path / 'offsets.log'}\n"
        "task.shutdown.graceful.timeout.ms=1000\n"
    )
    connector = tmp_path / "orders.json"
    connector.write_text(
        json.dumps(
            {
                "name": "orders",
                "config": {
                    "connector.class": "engine.testing.RecordingSourceConnector",
                    "tasks.max": "2",
                    "test.record.file": str(tmp_path / "calls.jsonl"),
                },
            }
        )
    )
    sink = tmp_path / "billing.properties"
    sink.write_text("name=billing\nconnector.class=engine.testing.RecordingSinkConnector\ntopics=invoices\n")
    return {"worker": worker, "orders": connector, "billing": sink, "calls": tmp_path / "calls.jsonl"}


@pytest.fixture
async def cleanup() -> AsyncIterator[list[Worker]]:
    workers: list[Worker] = []
    yield workers
    for worker in workers:
        if worker.process.returncode is None:
            worker.process.kill()
            await worker.process.wait()


async def test_connector_files_start_and_sigterm_stops_plainly(
    files: dict[str, Path], cleanup: list[Worker]
) -> None:
    worker = await start_worker(files["worker"], files["orders"], files["billing"])
    cleanup.append(worker)

    async def both_running() -> bool:
        status, body = await worker.get("/connectors?expand=status")
        return (
            status == 200
            and isinstance(body, dict)
            and all(
                v["status"]["connector"]["state"] == "RUNNING" and len(v["status"]["tasks"]) >= 1
                for v in body.values()
            )
            and len(body) == 2
        )

    await eventually_async(both_running)
    assert await worker.stop() == 0
    calls = [json.loads(line) for line in files["calls"].read_text().splitlines()]
    stops = [c["args"] for c in calls if c["unit"].startswith("task-") and c["method"] == "stop"]
    assert stops == [{"connector_deleted": False}, {"connector_deleted": False}]
    assert "deleted" not in [c["method"] for c in calls]

    again = await start_worker(files["worker"])  # no connector files: the config log remembers
    cleanup.append(again)
    status, names = await again.get("/connectors")
    assert (status, names) == (200, ["billing", "orders"])
    assert await again.stop(signal.SIGINT) == 0


async def eventually_async(check: Callable[[], Awaitable[bool]], timeout: float = READY_TIMEOUT_S) -> None:
    async with asyncio.timeout(timeout):
        while not await check():
            await asyncio.sleep(0.05)


def test_files_are_told_apart(files: dict[str, Path]) -> None:
    assert split_files([str(files["worker"]), str(files["orders"])]) == (
        str(files["worker"]),
        [str(files["orders"])],
    )
    assert split_files([str(files["billing"])]) == (None, [str(files["billing"])])
    assert split_files([]) == (None, [])
    assert read_connector_file(str(files["billing"]))[0] == "billing"
    assert read_connector_file(str(files["orders"]))[1]["tasks.max"] == "2"


def test_java_properties_syntax() -> None:
    text = (
        "# comment\n! also\nname=orders\na : b\nk v\nmulti=one \\\n   two\nesc=C:\\\\dir\\tx\\u0041\nempty=\n"
    )
    assert parse_properties(text) == {
        "name": "orders",
        "a": "b",
        "k": "v",
        "multi": "one two",
        "esc": "C:\\dir\txA",
        "empty": "",
    }


def test_help_documents_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    from engine.cli import main

    with pytest.raises(SystemExit):
        main(["standalone", "--help"])
    out = capsys.readouterr().out
    assert "[WORKER_PROPERTIES] [CONNECTOR_FILE ...]" in out
    assert "SIGINT/SIGTERM" in out
