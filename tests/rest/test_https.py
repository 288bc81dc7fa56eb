"""HTTPS listeners on a standalone worker, with real TLS clients (aiohttp, curl), client
certificates, and start-up refusals that name the key."""

from __future__ import annotations

import asyncio
import json
import ssl
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from engine.cli.standalone import StandaloneWorker
from engine.config.worker import WorkerConfig
from engine.distributed.forwarding import RestClient
from engine.errors import ConfigError, EngineNotRunning, ForwardingFailed
from engine.testing import CALLS, FAULTS
from tests.integration.brokers import free_port
from tests.rest.conftest import FAST, SOURCE
from tests.rest.pki import PASSWORD, Pki, make_pki


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


def trusting(pki: Pki, client_cert: bool = False) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(pki.ca_pem))
    if client_cert:
        context.load_cert_chain(str(pki.client_cert), str(pki.client_key))
    return context


@pytest.fixture
async def started() -> AsyncIterator[list[StandaloneWorker]]:
    CALLS.clear()
    FAULTS.reset()
    workers: list[StandaloneWorker] = []
    yield workers
    for worker in workers:
        await worker.stop()


async def start(started: list[StandaloneWorker], properties: dict[str, str]) -> StandaloneWorker:
    worker = StandaloneWorker({**FAST, **properties})
    await worker.start()
    started.append(worker)
    return worker


async def call(
    url: str, tls: ssl.SSLContext | bool, method: str = "GET", body: Any = None
) -> tuple[int, Any]:
    async with (
        aiohttp.ClientSession() as session,
        session.request(method, url, json=body, ssl=tls) as response,
    ):
        text = await response.text()
        return response.status, json.loads(text) if text else None


async def curl(*args: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        "curl", "-sS", *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await process.communicate()
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def test_https_and_http_listeners_serve_the_same_api(pki: Pki, started: list[StandaloneWorker]) -> None:
    http_port, https_port = free_port(), free_port()
    worker = await start(
        started,
        {
            "listeners": f"http://127.0.0.1:{http_port},HTTPS://127.0.0.1:{https_port}",
            # the listeners.https.* keys win over the plain ssl.* ones, which are broken on purpose
            "ssl.keystore.location": "/nowhere.p12",
            "ssl.keystore.password": "wrong",
            "listeners.https.ssl.keystore.type": "PKCS12",
            "listeners.https.ssl.keystore.location": str(pki.server_p12),
            "listeners.https.ssl.keystore.password": PASSWORD,
        },
    )
    assert worker.bound == [f"http://127.0.0.1:{http_port}", f"https://127.0.0.1:{https_port}"]
    assert (
        worker.engine.worker.advertised_url == f"http://127.0.0.1:{http_port}"
    )  # http listed: http advertised
    https = f"https://127.0.0.1:{https_port}"
    status, body = await call(f"{https}/", trusting(pki))
    assert status == 200
    assert "version" in body
    status, created = await call(
        f"{https}/connectors", trusting(pki), "POST", {"name": "secure", "config": SOURCE}
    )
    assert status == 201, created
    assert created["name"] == "secure"

    async def running() -> bool:
        code, state = await call(f"http://127.0.0.1:{http_port}/connectors/secure/status", True)
        return code == 200 and state["connector"]["state"] == "RUNNING"

    async with asyncio.timeout(20):
        while not await running():
            await asyncio.sleep(0.05)
    code, out, err = await curl("--cacert", str(pki.ca_pem), f"{https}/connectors")
    assert (code, json.loads(out)) == (0, ["secure"]), err
    with pytest.raises(aiohttp.ClientConnectorCertificateError):
        await call(f"{https}/connectors", True)  # the system's CAs do not know the test CA
    with pytest.raises(aiohttp.ClientError):
        await call(f"http://127.0.0.1:{https_port}/connectors", True)  # plain HTTP to the TLS port


async def test_client_certificates_when_required(pki: Pki, started: list[StandaloneWorker]) -> None:
    port = free_port()
    await start(
        started,
        {
            "listeners": f"https://127.0.0.1:{port}",
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": str(pki.server_pem),
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": str(pki.ca_pem),
            "ssl.client.authentication": "required",
        },
    )
    url = f"https://127.0.0.1:{port}/connectors"
    with pytest.raises(aiohttp.ClientError):
        await call(url, trusting(pki))
    assert await call(url, trusting(pki, client_cert=True)) == (200, [])
    code, _, err = await curl("--cacert", str(pki.ca_pem), url)
    assert code != 0, "curl without a client certificate was let in"
    code, out, err = await curl(
        "--cacert", str(pki.ca_pem), "--cert", str(pki.client_cert), "--key", str(pki.client_key), url
    )
    assert (code, out) == (0, "[]"), err


async def test_requested_client_certificates_are_optional(pki: Pki, started: list[StandaloneWorker]) -> None:
    port = free_port()
    await start(
        started,
        {
            "listeners": f"https://127.0.0.1:{port}",
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": str(pki.server_pem),
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": str(pki.ca_pem),
            "ssl.client.authentication": "requested",
        },
    )
    url = f"https://127.0.0.1:{port}/connectors"
    assert await call(url, trusting(pki)) == (200, [])
    assert await call(url, trusting(pki, client_cert=True)) == (200, [])


async def test_a_bad_key_store_stops_the_start_naming_the_key(pki: Pki, tmp_path: Path) -> None:
    port = free_port()
    base = {
        **FAST,
        "listeners": f"https://127.0.0.1:{port}",
        "listeners.https.ssl.keystore.type": "PKCS12",
        "listeners.https.ssl.keystore.location": str(pki.server_p12),
    }
    for wrong, key in [
        ({"listeners.https.ssl.keystore.password": "nope"}, "listeners.https.ssl.keystore.password"),
        (
            {
                "listeners.https.ssl.keystore.password": PASSWORD,
                "listeners.https.ssl.keystore.location": str(tmp_path / "gone.p12"),
            },
            "listeners.https.ssl.keystore.location",
        ),
    ]:
        worker = StandaloneWorker({**base, **wrong})
        with pytest.raises(ConfigError, match=f"configuration {key}:") as caught:
            await worker.start()
        assert set(caught.value.errors) == {key}
        with pytest.raises(EngineNotRunning):  # refused before the engine started
            await worker.engine.connectors()
        with pytest.raises(aiohttp.ClientConnectorError):  # nothing listens
            await call(f"https://127.0.0.1:{port}/", trusting(pki))
        await worker.stop()
    properties = tmp_path / "worker.properties"
    properties.write_text(
        "".join(f"{k}={v}\n" for k, v in base.items()) + "listeners.https.ssl.keystore.password=x\n"
    )
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "engine.cli",
        "standalone",
        str(properties),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    _out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 1
    lines = err.decode().strip().splitlines()
    assert lines[-1].startswith(
        "connect-engine standalone: Invalid value for configuration "
        "listeners.https.ssl.keystore.password: Failed to load SSL keystore"
    ), err.decode()
    assert "Traceback" not in err.decode()


async def test_the_forwarding_client_uses_the_workers_tls_keys(
    pki: Pki, started: list[StandaloneWorker]
) -> None:
    https_port, http_port = free_port(), free_port()
    await start(
        started,
        {
            "listeners": f"https://127.0.0.1:{https_port},http://127.0.0.1:{http_port}",
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": str(pki.server_pem),
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": str(pki.ca_pem),
            "ssl.client.authentication": "required",
        },
    )
    https, http = f"https://127.0.0.1:{https_port}/connectors", f"http://127.0.0.1:{http_port}/connectors"
    trust = {"ssl.truststore.type": "PEM", "ssl.truststore.location": str(pki.ca_pem)}
    peer = RestClient(
        WorkerConfig.parse(
            {**trust, "ssl.keystore.type": "PEM", "ssl.keystore.location": str(pki.server_pem)}
        )
    )
    assert (await peer.send("GET", https, body=None, headers={}, timeout=10))[:2] == (200, b"[]")
    no_certificate = RestClient(WorkerConfig.parse(trust))
    with pytest.raises(ForwardingFailed, match=r"^IO Error trying to forward REST request: "):
        await no_certificate.send("GET", https, body=None, headers={}, timeout=10)
    broken = RestClient(
        WorkerConfig.parse({"ssl.truststore.type": "PEM", "ssl.truststore.location": "/nowhere"})
    )
    with pytest.raises(ForwardingFailed) as caught:
        await broken.send("GET", https, body=None, headers={}, timeout=10)
    assert caught.value.status == 500
    assert str(caught.value).startswith(
        "Failed to start RestClient: Invalid value for configuration "
        "ssl.truststore.location: Cannot read /nowhere"
    )
    # an http URL never reads the TLS keys (KAFKA-14816)
    assert (await broken.send("GET", http, body=None, headers={}, timeout=10))[:2] == (200, b"[]")
