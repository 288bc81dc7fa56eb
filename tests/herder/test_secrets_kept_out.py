"""A value a config provider resolved never leaves the engine: not in a status's trace (over REST), not
in a log line as the worker writes it, not in ``errors.log`` nor a dead letter queue's headers, not in
validate's answer. Each shows as the reference written (``${file:...:password}``), as in Connect 4.4."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import structlog
from aiohttp.test_utils import TestClient, TestServer
from structlog.testing import capture_logs

from engine import Engine
from engine.config.secrets import REVEALED
from engine.observability.logs import configure_logging
from engine.rest.app import make_app
from engine.testing import eventually
from tests.herder.conftest import FAST
from tests.integration.brokers import Broker

SECRET = "s3cr3t-Ewq9"
LEAKY_SOURCE = "tests.herder.provider_probes.LeakySourceConnector"
LEAKY_SINK = "tests.herder.provider_probes.LeakySinkConnector"


@pytest.fixture(autouse=True)
def _forget_secrets() -> Iterator[None]:
    REVEALED.forget_all()
    yield
    REVEALED.forget_all()


@pytest.fixture
def reference(tmp_path: Path) -> str:
    path = tmp_path / "secrets.properties"
    path.write_text(f"password={SECRET}\n", encoding="utf-8")
    return f"${{file:{path}:password}}"


def _worker(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {
        **FAST,
        "config.providers": "file",
        "config.storage.file.filename": str(tmp_path / "configs.log"),
        **extra,
    }


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[TestClient]:  # type: ignore[type-arg]
    async with (
        Engine(_worker(tmp_path)) as engine,
        TestClient(TestServer(make_app(engine, rest_timeout=5.0), host="127.0.0.1")) as http,
    ):
        yield http


async def test_a_status_trace_over_rest_shows_the_reference(client: TestClient, reference: str) -> None:  # type: ignore[type-arg]
    """Before, the connector's trace quoted the password its start() was refused with."""
    config = {"connector.class": LEAKY_SOURCE, "tasks.max": "1", "test.db.password": reference}
    created = await client.put("/connectors/c/config", json=config)
    assert SECRET not in await created.text()  # the start failure answers 500 without it

    async def trace() -> str:
        status = await (await client.get("/connectors/c/status")).json()
        return str(status["connector"].get("trace") or "")

    found = ""
    for _ in range(200):
        if found := await trace():
            break
        await __import__("asyncio").sleep(0.05)
    assert "login refused for password" in found
    assert SECRET not in found
    assert f"login refused for password {reference}" in found
    body = await (await client.get("/connectors/c/status")).text()
    assert SECRET not in body


async def test_a_log_line_as_the_worker_writes_it_shows_the_reference(
    tmp_path: Path, reference: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The worker's own log configuration (JSON lines on stderr): no line carries the password."""
    saved = structlog.get_config()
    configure_logging("INFO", json=True)
    try:
        async with Engine(_worker(tmp_path)) as engine:
            config = {"connector.class": LEAKY_SOURCE, "tasks.max": "1", "test.db.password": reference}
            await engine.create_connector("c", config)
            await engine.wait_for_state("c", "FAILED")
    finally:
        structlog.configure(**saved)
    err = capsys.readouterr().err
    lines = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    failed = [line for line in lines if "login refused for password" in json.dumps(line)]
    assert failed, err[-2000:]
    assert SECRET not in err
    assert reference in json.dumps(failed)


@pytest.mark.parametrize("topics_on", ["memory", pytest.param("kafka", marks=pytest.mark.integration)])
async def test_errors_log_and_dead_letter_headers_show_the_reference(
    tmp_path: Path, reference: str, topics_on: str, request: pytest.FixtureRequest
) -> None:
    """A sink reports records as errant with an error quoting its password: before, ``errors.log``'s
    line and the DLQ record's ``__connect.errors.exception.*`` headers carried it."""
    suffix = uuid.uuid4().hex[:8]
    topic, dlq = f"in-{suffix}", f"dlq-{suffix}"
    extra = {}
    if topics_on == "kafka":
        kafka: Broker = request.getfixturevalue("kafka")
        extra = {"bootstrap.servers": kafka.bootstrap, "config.storage.topic": f"configs-{suffix}"}
    async with Engine(_worker(tmp_path, **extra)) as engine:
        await engine.topics.create_topic(topic)
        await engine.topics.create_topic(dlq)
        producer = engine.topics.producer()
        await producer.send(topic, b"k", b"v")
        await producer.flush()
        with capture_logs() as logged:
            await engine.create_connector(
                f"sink-{suffix}",
                {
                    "connector.class": LEAKY_SINK,
                    "tasks.max": "1",
                    "topics": topic,
                    "test.db.password": reference,
                    "key.converter": "org.apache.kafka.connect.storage.StringConverter",
                    "value.converter": "org.apache.kafka.connect.storage.StringConverter",
                    "errors.tolerance": "all",
                    "errors.log.enable": "true",
                    "errors.deadletterqueue.topic.name": dlq,
                    "errors.deadletterqueue.topic.replication.factor": "1",
                    "errors.deadletterqueue.context.headers.enable": "true",
                },
            )
            await eventually(
                lambda: any(e["event"] == "task.error" for e in logged), timeout=30, message="errors.log"
            )
        line = next(e for e in logged if e["event"] == "task.error")
        assert "rejected with password" in line["error"]
        assert SECRET not in line["error"]
        assert reference in line["error"]
        reader = await engine.topics.consumer(f"reader-{suffix}", [dlq])
        try:
            records = []
            for _ in range(300):
                records += await reader.getmany(100)
                if records:
                    break
            assert records, "the record reached the dead letter queue"
            headers = dict(records[0].headers)
        finally:
            await reader.close()
    message = (headers["__connect.errors.exception.message"] or b"").decode()
    stack = (headers["__connect.errors.exception.stacktrace"] or b"").decode()
    assert message == f"rejected with password {reference}"
    assert SECRET not in stack
    assert reference in stack


async def test_validate_answers_with_the_reference(client: TestClient, reference: str) -> None:  # type: ignore[type-arg]
    """Validation reads the config as written (references are resolved when the connector starts):
    neither a value nor an error message of its answer carries the password."""
    config = {"connector.class": LEAKY_SOURCE, "tasks.max": reference, "test.db.password": reference}
    response = await client.put("/connector-plugins/LeakySourceConnector/config/validate", json=config)
    body = await response.text()
    assert response.status == 200, body
    assert SECRET not in body
    assert reference.replace("\\", "\\\\") in body or reference in json.loads(body).__repr__()
