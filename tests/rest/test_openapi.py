"""The OpenAPI document matches the routes served, and a fuzzing run finds no undocumented answer."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from aiohttp import web
from aiohttp.test_utils import TestClient

from engine import Engine
from engine.rest.app import make_app
from engine.rest.openapi import OPERATIONS

Client = TestClient[web.Request, web.Application]
SCHEMATHESIS = str(Path(sys.executable).with_name("st"))


def served_routes(engine: Engine) -> set[tuple[str, str]]:
    app = make_app(engine)
    routes = set()
    for route in app.router.routes():
        info = route.resource.get_info() if route.resource is not None else {}
        path = info.get("path") or info.get("formatter")
        if route.method not in ("HEAD", "OPTIONS") and path:  # answered for every GET / every path
            routes.add((route.method, path.rstrip("/") or "/"))  # and every path also with a trailing "/"
    return routes


async def test_every_route_is_documented_and_every_documented_route_served(engine: Engine) -> None:
    assert served_routes(engine) == set(OPERATIONS)


async def test_the_document_is_served(client: Client) -> None:
    response = await client.get("/openapi.json")
    assert response.status == 200
    document = await response.json()
    assert document["openapi"] == "3.1.0"
    assert "/connectors/{connector}/status" in document["paths"]
    assert document["paths"]["/connectors"]["post"]["responses"]["201"]


async def test_a_bounded_schemathesis_run_finds_no_undocumented_status_or_shape(client: Client, tmp_path: Path) -> None:
    url = str(client.make_url("/openapi.json"))
    process = await asyncio.create_subprocess_exec(
        SCHEMATHESIS, "run", url, "--checks", "status_code_conformance,response_schema_conformance",
        "--max-examples", "12", "--seed", "20261122", "--request-timeout", "10", "--no-color",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, cwd=tmp_path)
    out, _ = await asyncio.wait_for(process.communicate(), 600)
    report = out.decode()
    assert process.returncode == 0, report[-6000:]
