"""A ``PUT .../config`` racing a ``DELETE`` of the same connector, over REST: the engine serialises
both per connector as Connect's herder does, so each round ends one of two ways, and the answers say
which: the update came first (200, then 204, the connector is gone) or the deletion came first (204,
then 201 for the creation, the connector exists). Never a 404, never a creation answered 200."""

from __future__ import annotations

import asyncio

from aiohttp import web
from aiohttp.test_utils import TestClient

from tests.rest.conftest import SOURCE

Client = TestClient[web.Request, web.Application]
ROUNDS = 60


async def test_racing_put_and_delete_answer_consistently_with_the_final_state(client: Client) -> None:
    outcomes: dict[tuple[int, int, bool], int] = {}
    for round_ in range(ROUNDS):
        if (await client.get("/connectors/race")).status == 404:
            assert (await client.put("/connectors/race/config", json=SOURCE)).status == 201
        config = {**SOURCE, "round": str(round_)}
        put, delete = await asyncio.gather(client.put("/connectors/race/config", json=config),
                                           client.delete("/connectors/race"))
        exists = (await client.get("/connectors/race")).status == 200
        key = (put.status, delete.status, exists)
        assert key in ((200, 204, False), (201, 204, True)), (round_, key, await put.text(), await delete.text())
        if exists:  # the PUT created it after the deletion: it runs the PUT's config
            assert (await (await client.get("/connectors/race/config")).json())["round"] == str(round_)
            status = await (await client.get("/connectors/race/status")).json()
            assert status["connector"]["state"] == "RUNNING"
        outcomes[key] = outcomes.get(key, 0) + 1
    assert sum(outcomes.values()) == ROUNDS
