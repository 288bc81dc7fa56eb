"""Basic authentication over real HTTP, the hash CLI, and the loopback default listener."""

from __future__ import annotations

import asyncio
import base64
import ipaddress
import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from engine import Engine
from engine.cli.standalone import StandaloneWorker
from engine.config.listeners import Listener, parse_listeners
from engine.config.worker import WorkerConfig
from engine.errors import ConfigError
from engine.rest.app import make_app
from engine.rest.auth import CREDENTIALS_FILE_KEY, PasswordHash, hash_password, load_credentials
from tests.integration.brokers import free_port
from tests.observability.test_metrics import parse, value
from tests.rest.conftest import FAST

Client = TestClient[web.Request, web.Application]
ITERATIONS = 1000  # fast for tests; the CLI defaults to 600 000


def basic(user: str, password: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


ALICE = basic("alice", "s3cret:with colon")


@pytest.fixture
def credentials(tmp_path: Path) -> Path:
    path = tmp_path / "credentials"
    path.write_text(f"# REST users\n\nalice:{hash_password('s3cret:with colon', ITERATIONS)}\n"
                    f"bob:{hash_password('hunter2', ITERATIONS)}\n")
    return path


@pytest.fixture
async def guarded(engine: Engine, credentials: Path) -> AsyncIterator[Client]:
    server = TestServer(make_app(engine, rest_timeout=2.0, credentials_file=str(credentials)), host="127.0.0.1")
    async with TestClient(server) as http:
        yield http


async def assert_unauthorized(response: aiohttp.ClientResponse) -> str:
    """JaasBasicAuthFilter's answer: plain text (and, our addition, a challenge browsers understand)."""
    assert response.status == 401
    assert response.headers["WWW-Authenticate"] == 'Basic realm="connect-engine"'
    assert response.content_type == "text/plain"
    return await response.text()


async def test_missing_or_wrong_credentials_answer_401(guarded: Client) -> None:
    assert await assert_unauthorized(await guarded.get("/connectors")) == "User cannot access the resource."
    for headers in (basic("alice", "wrong"), basic("mallory", "s3cret:with colon"), basic("bob", "s3cret:with colon"),
                    {"Authorization": "Basic !!!not-base64"}, {"Authorization": "Bearer abc"}):
        assert await assert_unauthorized(await guarded.get("/connectors", headers=headers)) == \
            "User cannot access the resource."


async def test_right_credentials_pass_every_time(guarded: Client) -> None:
    for _ in range(3):  # later requests take the cached path
        response = await guarded.get("/connectors", headers=ALICE)
        assert response.status == 200
        assert await response.json() == []
    assert (await guarded.get("/connectors", headers=basic("bob", "hunter2"))).status == 200
    assert (await guarded.get("/connectors", headers=basic("alice", "nope"))).status == 401  # cache is per password


async def test_everything_is_protected_as_in_connect(guarded: Client) -> None:
    for path in ("/", "/health", "/metrics", "/openapi.json", "/connector-plugins", "/no/such/path"):
        await assert_unauthorized(await guarded.get(path))
    assert (await guarded.get("/health", headers=ALICE)).status == 200


async def test_rejections_are_counted(guarded: Client) -> None:
    await guarded.get("/connectors")
    samples = parse(await (await guarded.get("/metrics", headers=ALICE)).text())
    assert value(samples, "rest_requests_total", method="GET", route="/connectors", status="401") == 1


async def test_the_worker_property_turns_auth_on(credentials: Path) -> None:
    async with (Engine({**FAST, CREDENTIALS_FILE_KEY: str(credentials)}) as engine,
                TestClient(TestServer(make_app(engine), host="127.0.0.1")) as http):
        await assert_unauthorized(await http.get("/connectors"))
        assert (await http.get("/connectors", headers=ALICE)).status == 200


async def test_no_credentials_file_means_no_auth(client: Client) -> None:
    assert (await client.get("/connectors")).status == 200


@pytest.mark.parametrize(("content", "reason"), [
    ("", "no credentials"),
    ("alice\n", "line 1: expected user:hash"),
    ("alice:md5$abc\n", "line 1: expected pbkdf2_sha256$"),
    ("alice:pbkdf2_sha256$x$c2FsdA==$aGFzaA==\n", "line 1: iterations must be a number"),
])
def test_a_malformed_credentials_file_is_a_config_error(tmp_path: Path, content: str, reason: str) -> None:
    path = tmp_path / "credentials"
    path.write_text(content)
    with pytest.raises(ConfigError, match=f"Invalid credentials file .*: {re.escape(reason)}"):
        load_credentials(path)
    with pytest.raises(ConfigError, match="No such file"):
        load_credentials(tmp_path / "missing")


async def test_the_hash_cli_prints_a_line_that_verifies(tmp_path: Path, engine: Engine) -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "engine.rest.auth", "hash", "carol", "--iterations", str(ITERATIONS),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await process.communicate(b"correct horse\n")
    assert process.returncode == 0, err.decode()
    line = out.decode()
    assert line.endswith("\n")
    assert line.count("\n") == 1
    user, _, encoded = line.strip().partition(":")
    assert user == "carol"
    scheme, iterations, salt, key = encoded.split("$")
    assert (scheme, iterations) == ("pbkdf2_sha256", str(ITERATIONS))
    assert len(base64.b64decode(salt)) == 16
    assert len(base64.b64decode(key)) == 32
    stored = PasswordHash.parse(encoded)
    assert stored.matches("correct horse")
    assert not stored.matches("correct horse\n")
    path = tmp_path / "credentials"
    path.write_text(line)
    async with TestClient(TestServer(make_app(engine, credentials_file=str(path)), host="127.0.0.1")) as http:
        assert (await http.get("/", headers=basic("carol", "correct horse"))).status == 200
        assert (await http.get("/", headers=basic("carol", "wrong"))).status == 401


def test_the_default_listener_is_loopback() -> None:
    listeners = parse_listeners(WorkerConfig.parse(None).raw["listeners"])
    assert listeners == [Listener("http", "127.0.0.1", 8083)]
    assert all(ipaddress.ip_address(listener.host).is_loopback for listener in listeners)


async def test_the_standalone_worker_applies_the_credentials_file(credentials: Path) -> None:
    port = free_port()
    worker = StandaloneWorker({**FAST, "listeners": f"http://127.0.0.1:{port}",
                               CREDENTIALS_FILE_KEY: str(credentials)})
    await worker.start()
    try:
        async with aiohttp.ClientSession() as session:
            async with session.get(f"http://127.0.0.1:{port}/connectors") as response:
                await assert_unauthorized(response)
            async with session.get(f"http://127.0.0.1:{port}/connectors", headers=ALICE) as response:
                assert response.status == 200
    finally:
        await worker.stop()


async def test_internal_endpoints_skip_basic_auth_as_connects_filter_does(guarded: Client) -> None:
    """Workers call these on each other and sign them instead (KIP-507): no credentials asked."""
    answer = await guarded.post("/connectors/orders/tasks", json=[{}])
    assert (answer.status, (await answer.json())["message"]) == (
        500, "Kafka Connect in standalone mode does not support externally setting task configurations.")
    assert (await guarded.put("/connectors/orders/fence")).status == 500
    assert (await guarded.get("/connectors/orders/tasks")).status == 401  # only those two methods and paths
