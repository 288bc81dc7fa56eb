"""The status of a connector whose ``deleted()`` still runs: its stopped units read UNASSIGNED with the
deleted connector's type, as Connect's shut-down units do, and the status is a 404 once it returned."""

from __future__ import annotations

import asyncio

from aiohttp import web
from aiohttp.test_utils import TestClient

from engine.testing import FAULTS
from engine.testing.waiting import eventually
from tests.rest.conftest import SOURCE

Client = TestClient[web.Request, web.Application]


async def test_a_deleting_connector_reads_unassigned_then_404(client: Client) -> None:
    assert (await client.put("/connectors/d/config", json=SOURCE)).status == 201
    FAULTS.inject("d", "deleted", "block")
    deleting = asyncio.ensure_future(client.delete("/connectors/d"))

    async def unassigned() -> dict[str, object] | None:
        answer = await client.get("/connectors/d/status")
        body = await answer.json()
        return body if answer.status == 200 and body["connector"]["state"] == "UNASSIGNED" else None

    body = await eventually(unassigned, timeout=10, what="the deleting connector UNASSIGNED")
    assert body["type"] == "source"
    assert [t["state"] for t in body["tasks"]] == ["UNASSIGNED", "UNASSIGNED"]  # type: ignore[attr-defined]
    assert (await client.get("/connectors/d")).status == 404  # the config is gone already
    assert not deleting.done()
    FAULTS.clear("d")
    assert (await deleting).status == 204
    answer = await client.get("/connectors/d/status")
    assert (answer.status, await answer.json()) == (404, {"error_code": 404, "message": "No status found for connector d"})
