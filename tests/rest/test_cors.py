"""CORS per ``access.control.allow.*``, with the headers Jetty's CrossOriginFilter (as Connect
configures it) answers: preflights, simple requests, origins that do not match, and no CORS at all."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from engine import Engine
from engine.rest.app import make_app
from engine.rest.auth import CREDENTIALS_FILE_KEY, hash_password
from tests.rest.conftest import FAST

UI = "https://ui.example.com"
CORS_HEADERS = ("Access-Control-Allow-Origin", "Access-Control-Allow-Credentials", "Access-Control-Allow-Methods",
                "Access-Control-Allow-Headers", "Access-Control-Max-Age")

Client = TestClient[web.Request, web.Application]


@pytest.fixture
def serving() -> Callable[[dict[str, str]], AbstractAsyncContextManager[Client]]:
    @asynccontextmanager
    async def serve(properties: dict[str, str]) -> AsyncIterator[Client]:
        async with Engine({**FAST, **properties}) as engine, \
                TestClient(TestServer(make_app(engine, rest_timeout=5.0), host="127.0.0.1")) as client:
            yield client

    return serve


def preflight(method: str, headers: str | None = None, origin: str = UI) -> dict[str, str]:
    asked = {"Origin": origin, "Access-Control-Request-Method": method}
    return {**asked, "Access-Control-Request-Headers": headers} if headers else asked


def cors(headers: object) -> dict[str, str]:
    return {name: headers[name] for name in CORS_HEADERS if name in headers}  # type: ignore[index,operator]


async def test_preflight_and_simple_requests(serving: Callable[..., AbstractAsyncContextManager[Client]]) -> None:
    async with serving({"access.control.allow.origin": f"{UI},https://*.corp.example",
                        "access.control.allow.methods": "GET,POST,PUT,DELETE"}) as client:
        answer = await client.options("/connectors/x/config", headers=preflight("PUT", "Content-Type, accept"))
        assert answer.status == 200
        assert cors(answer.headers) == {
            "Access-Control-Allow-Origin": UI, "Access-Control-Allow-Credentials": "true",
            "Access-Control-Allow-Methods": "GET,POST,PUT,DELETE",
            "Access-Control-Allow-Headers": "X-Requested-With,Content-Type,Accept,Origin",
            "Access-Control-Max-Age": "1800"}
        assert answer.headers["Vary"] == "Origin"
        for refused in (preflight("PATCH"), preflight("PUT", "X-Custom")):  # method, header not allowed
            answer = await client.options("/connectors", headers=refused)
            assert answer.status == 200
            assert cors(answer.headers) == {}

        answer = await client.get("/connectors", headers={"Origin": UI})
        assert (answer.status, await answer.json()) == (200, [])
        assert cors(answer.headers) == {"Access-Control-Allow-Origin": UI, "Access-Control-Allow-Credentials": "true"}
        answer = await client.post("/connectors", json={"name": "c", "config": {}},
                                   headers={"Origin": "https://team.corp.example"})  # a wildcard entry
        assert answer.status == 400  # still the API's own answer, with the CORS headers on it
        assert answer.headers["Access-Control-Allow-Origin"] == "https://team.corp.example"
        answer = await client.delete("/connectors/missing", headers={"Origin": UI})
        assert answer.status == 404
        assert answer.headers["Access-Control-Allow-Origin"] == UI

        stranger = await client.get("/connectors", headers={"Origin": "https://evil.example"})
        assert (stranger.status, cors(stranger.headers)) == (200, {})  # served; the browser withholds it
        assert cors((await client.options("/connectors", headers=preflight("GET", origin="https://evil.example")))
                    .headers) == {}


async def test_any_origin_and_the_default_methods(serving: Callable[..., AbstractAsyncContextManager[Client]]) -> None:
    async with serving({"access.control.allow.origin": "*"}) as client:
        answer = await client.options("/connectors", headers=preflight("POST", origin="http://localhost:3000"))
        assert answer.headers["Access-Control-Allow-Origin"] == "http://localhost:3000"  # echoed, as Jetty does
        assert answer.headers["Access-Control-Allow-Methods"] == "GET,POST,HEAD"
        assert "Vary" not in answer.headers
        assert cors((await client.options("/connectors", headers=preflight("DELETE"))).headers) == {}


async def test_no_origin_configured_means_no_cors(serving: Callable[..., AbstractAsyncContextManager[Client]]) -> None:
    async with serving({"access.control.allow.methods": "GET,PUT"}) as client:
        answer = await client.get("/connectors", headers={"Origin": UI})
        assert (answer.status, cors(answer.headers)) == (200, {})
        answer = await client.options("/connectors", headers=preflight("GET"))
        assert (answer.status, answer.headers["Allow"]) == (200, "HEAD,POST,GET,OPTIONS")  # Jersey's OPTIONS
        assert cors(answer.headers) == {}


async def test_preflights_need_no_credentials(serving: Callable[..., AbstractAsyncContextManager[Client]],
                                              tmp_path: Path) -> None:
    credentials = tmp_path / "credentials"
    credentials.write_text(f"alice:{hash_password('pw', iterations=1000)}\n")
    async with serving({"access.control.allow.origin": UI, CREDENTIALS_FILE_KEY: str(credentials)}) as client:
        answer = await client.options("/connectors", headers=preflight("GET", "Authorization"))
        assert answer.status == 200
        assert cors(answer.headers) == {}  # Authorization is not among the allowed headers (Jetty's default)
        answer = await client.options("/connectors", headers=preflight("POST", "Content-Type"))
        assert (answer.status, answer.headers["Access-Control-Allow-Origin"]) == (200, UI)
        answer = await client.get("/connectors", headers={"Origin": UI})
        assert answer.status == 401
        assert answer.headers["Access-Control-Allow-Origin"] == UI  # the page can read the refusal
