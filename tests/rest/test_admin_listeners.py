"""KIP-208 ``admin.listeners``: unset, ``/admin/loggers`` is served on every listener; set, only on its
own listeners (HTTPS with ``admin.listeners.https.*``) and nowhere else; empty, nowhere."""

from __future__ import annotations

import json
import ssl
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from engine.cli.standalone import StandaloneWorker
from engine.config.worker import WorkerConfig
from engine.errors import ConfigError
from tests.integration.brokers import free_port
from tests.rest.conftest import FAST
from tests.rest.pki import PASSWORD, Pki, make_pki

NOT_FOUND = {"error_code": 404, "message": "HTTP 404 Not Found"}


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture
async def started() -> AsyncIterator[list[StandaloneWorker]]:
    workers: list[StandaloneWorker] = []
    yield workers
    for worker in workers:
        await worker.stop()


async def start(started: list[StandaloneWorker], properties: dict[str, str]) -> StandaloneWorker:
    worker = StandaloneWorker({**FAST, "listeners": f"http://127.0.0.1:{free_port()}", **properties})
    await worker.start()
    started.append(worker)
    return worker


async def call(
    url: str, method: str = "GET", body: Any = None, tls: ssl.SSLContext | bool = True
) -> tuple[int, Any]:
    async with (
        aiohttp.ClientSession() as session,
        session.request(method, url, json=body, ssl=tls) as response,
    ):
        text = await response.text()
        return response.status, json.loads(text) if text else None


async def test_unset_the_admin_endpoints_stay_on_the_listeners(started: list[StandaloneWorker]) -> None:
    worker = await start(started, {})
    assert worker.admin_bound == []
    status, levels = await call(f"{worker.bound[0]}/admin/loggers")
    assert status == 200
    assert "root" in levels


async def test_set_the_admin_endpoints_move_to_the_admin_listener(started: list[StandaloneWorker]) -> None:
    admin_port = free_port()
    worker = await start(started, {"admin.listeners": f"http://127.0.0.1:{admin_port}"})
    main, admin = worker.bound[0], f"http://127.0.0.1:{admin_port}"
    assert worker.admin_bound == [admin]
    assert await call(f"{main}/admin/loggers") == (404, NOT_FOUND)
    status, _ = await call(f"{admin}/admin/loggers")
    assert status == 200
    status, _ = await call(f"{admin}/admin/loggers/org.example", "PUT", {"level": "DEBUG"})
    assert status == 200
    assert (await call(f"{admin}/admin/loggers/org.example"))[1]["level"] == "DEBUG"
    # the admin listener serves nothing else; the regular API stays on the listeners
    assert await call(f"{admin}/connectors") == (404, NOT_FOUND)
    assert (await call(f"{main}/connectors"))[0] == 200


@pytest.mark.parametrize("value", ["", "  "])
async def test_empty_turns_the_admin_endpoints_off(started: list[StandaloneWorker], value: str) -> None:
    worker = await start(started, {"admin.listeners": value})
    assert worker.admin_bound == []
    assert await call(f"{worker.bound[0]}/admin/loggers") == (404, NOT_FOUND)
    assert (await call(f"{worker.bound[0]}/connectors"))[0] == 200


async def test_an_https_admin_listener_takes_the_admin_tls_keys(
    pki: Pki, started: list[StandaloneWorker]
) -> None:
    admin_port = free_port()
    worker = await start(
        started,
        {
            "admin.listeners": f"https://127.0.0.1:{admin_port}",
            "admin.listeners.https.ssl.keystore.type": "PKCS12",
            "admin.listeners.https.ssl.keystore.location": str(pki.server_p12),
            "admin.listeners.https.ssl.keystore.password": PASSWORD,
        },
    )
    trust = ssl.create_default_context(cafile=str(pki.ca_pem))
    status, levels = await call(f"https://127.0.0.1:{admin_port}/admin/loggers", tls=trust)
    assert status == 200
    assert "root" in levels
    assert worker.admin_bound == [f"https://127.0.0.1:{admin_port}"]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("http://127.0.0.1:1,,http://127.0.0.1:2", "Empty URL found when parsing admin.listeners list."),
        (
            "127.0.0.1:8084",
            "Listener doesn't have the right format (protocol://hostname:port): 127.0.0.1:8084",
        ),
        ("ftp://127.0.0.1:8084", 'Listener protocol must be either "http" or "https": ftp://127.0.0.1:8084'),
    ],
)
async def test_a_malformed_admin_listener_stops_the_start_naming_the_key(value: str, message: str) -> None:
    worker = StandaloneWorker(
        {**FAST, "listeners": f"http://127.0.0.1:{free_port()}", "admin.listeners": value}
    )
    with pytest.raises(ConfigError) as caught:
        await worker.start()
    assert caught.value.errors == {"admin.listeners": [message]}


def test_admin_listener_keys_are_not_taken_for_admin_client_keys() -> None:
    clients = WorkerConfig.parse(
        {
            "admin.listeners": "http://127.0.0.1:8084",
            "admin.listeners.https.ssl.keystore.type": "PKCS12",
            "admin.request.timeout.ms": "9000",
        }
    ).kafka
    assert clients.worker_level("admin") == {"request_timeout_ms": 9000}
