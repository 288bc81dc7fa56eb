"""Two standalone workers on one broker, with default settings, never run each other's connectors
(issue 37): each keeps its connector configs beside its own offsets, unless a config topic is named."""

from __future__ import annotations

import uuid
from pathlib import Path

from structlog.testing import capture_logs

from engine import Engine
from engine.cli.standalone import StandaloneWorker
from engine.config.worker import WorkerConfig
from engine.configlog.factory import standalone_notice
from tests.integration.brokers import Broker


def standalone(kafka: Broker, directory: Path) -> dict[str, str]:
    directory.mkdir(exist_ok=True)
    return {
        "bootstrap.servers": kafka.bootstrap,
        "offset.storage.file.filename": str(directory / "connect.offsets"),
        "listeners": "http://127.0.0.1:0",
    }


def file_source(directory: Path, tag: str) -> dict[str, str]:
    (directory / "in.txt").touch()
    return {"connector.class": "FileStreamSource", "file": str(directory / "in.txt"), "topic": f"apart-{tag}"}


async def test_two_standalone_workers_on_one_broker_keep_their_connectors_apart(
    kafka: Broker, tmp_path: Path
) -> None:
    tag = uuid.uuid4().hex[:8]
    first, second = standalone(kafka, tmp_path / "a"), standalone(kafka, tmp_path / "b")
    async with Engine(first) as a, Engine(second) as b:
        await a.create_connector("conn-a", file_source(tmp_path / "a", tag))
        await b.create_connector("conn-b", file_source(tmp_path / "b", tag))
        await a.wait_for_state("conn-a", "RUNNING", tasks=1)
        await b.wait_for_state("conn-b", "RUNNING", tasks=1)
        assert await a.connectors() == ["conn-a"]
        assert await b.connectors() == ["conn-b"]
    assert (tmp_path / "a" / "connect.offsets.configs").exists()
    async with Engine(first) as again:  # a restart still finds its own, and only its own
        assert await again.connectors() == ["conn-a"]


async def test_the_start_names_where_configs_are_kept_and_the_key_that_shares_the_topic(
    kafka: Broker, tmp_path: Path
) -> None:
    properties = standalone(kafka, tmp_path)
    notice = standalone_notice(WorkerConfig.parse(properties))
    assert notice is not None
    assert str(tmp_path / "connect.offsets.configs") in notice
    assert "config.storage.topic=connect-configs" in notice
    assert standalone_notice(WorkerConfig.parse({**properties, "config.storage.topic": "mine"})) is None
    worker = StandaloneWorker(properties)
    with capture_logs() as logged:
        await worker.start()
        await worker.stop()
    (line,) = [e for e in logged if e["event"] == "worker.config_storage"]
    assert line["message"] == notice
