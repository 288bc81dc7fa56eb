"""A plugin that blocks never stalls other requests or connectors; the blocked request gets a 500."""

from __future__ import annotations

import asyncio

from aiohttp import web
from aiohttp.test_utils import TestClient

from engine import Engine
from engine.testing import FAULTS
from tests.rest.conftest import SOURCE

Client = TestClient[web.Request, web.Application]


async def test_a_blocking_validate_times_out_with_the_stage_and_others_are_served(client: Client) -> None:
    FAULTS.inject("slow", "validate", "block")
    slow = asyncio.create_task(client.post("/connectors", json={"name": "slow", "config": SOURCE}))
    await asyncio.sleep(0.1)
    listed = await client.get("/connectors")  # answered while the other request hangs
    assert listed.status == 200
    other = await client.post("/connectors", json={"name": "other", "config": SOURCE})
    assert other.status == 201
    response = await slow  # the app's REST timeout is 2 s in these tests
    assert response.status == 500
    assert await response.json() == {
        "error_code": 500,
        "message": "Request timed out. The worker is currently performing multi-property validation for the connector"}
    FAULTS.release_all()


async def test_a_connector_blocking_in_start_or_stop_stalls_only_itself(client: Client, engine: Engine) -> None:
    FAULTS.inject("stuck", "start", "block")
    # Kafka's standalone herder answers a create once the connector started: this one waits
    creating = asyncio.ensure_future(client.post("/connectors", json={"name": "stuck", "config": SOURCE}))
    fine = await client.post("/connectors", json={"name": "fine", "config": SOURCE})
    assert fine.status == 201
    await engine.wait_for_state("fine", "RUNNING", tasks=2)
    assert (await client.put("/connectors/fine/pause")).status == 202
    await engine.wait_for_state("fine", "PAUSED", tasks=2)
    assert not creating.done()
    FAULTS.clear("stuck")
    created = await creating
    assert created.status == 201
    assert [t["task"] for t in (await created.json())["tasks"]] == [0, 1]  # read-your-writes: tasks listed
    await engine.wait_for_state("stuck", "RUNNING", tasks=2)
    FAULTS.inject("stuck", "stop", "block")
    assert (await client.put("/connectors/stuck/pause")).status == 202
    assert (await client.put("/connectors/fine/resume")).status == 202
    await engine.wait_for_state("fine", "RUNNING", tasks=2)
    FAULTS.release_all()
