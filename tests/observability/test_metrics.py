"""``GET /metrics`` over real HTTP: the values move with the lifecycle and the requests made."""

from __future__ import annotations

import re

from aiohttp import web
from aiohttp.test_utils import TestClient

from engine import Engine
from engine.testing import FAULTS
from tests.rest.conftest import FAST, SOURCE

Client = TestClient[web.Request, web.Application]
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]

_SAMPLE = re.compile(r'^(?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(?P<labels>.*)\})? (?P<value>\S+)$')
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse(text: str) -> Samples:
    """A strict reading of the text format: every line a comment or a well-formed sample."""
    samples: Samples = {}
    typed: set[str] = set()
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            typed.add(line.split()[2])
            continue
        if line.startswith("# HELP "):
            continue
        match = _SAMPLE.match(line)
        assert match, line
        name = match["name"]
        assert name.startswith(("connect_engine_", "kafka_connect_", "kafka_producer_", "kafka_consumer_",
                                "kafka_admin_client_", "process_", "python_")), name
        assert re.sub(r"_(bucket|sum|count)$", "", name) in typed or name in typed, name
        labels = frozenset(_LABEL.findall(match["labels"] or ""))
        samples[(name, labels)] = float(match["value"])
    return samples


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((f"connect_engine_{name}", frozenset(labels.items())), 0.0)


async def scrape(client: Client) -> Samples:
    response = await client.get("/metrics")
    assert response.status == 200
    assert response.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
    return parse(await response.text())


async def test_state_gauges_and_transitions_follow_create_pause_delete(client: Client, engine: Engine) -> None:
    empty = await scrape(client)
    assert value(empty, "connectors", state="RUNNING") == 0
    assert value(empty, "deletion_callbacks_run_total") == 0

    assert (await client.post("/connectors", json={"name": "orders", "config": SOURCE})).status == 201
    await engine.wait_for_state("orders", "RUNNING", tasks=2)
    running = await scrape(client)
    assert value(running, "connectors", state="RUNNING") == 1
    assert value(running, "tasks", state="RUNNING") == 2
    assert value(running, "transitions_total", kind="connector", trigger="start", from_state="UNASSIGNED",
                 to_state="RUNNING") == 1
    assert value(running, "transitions_total", kind="task", trigger="start", from_state="UNASSIGNED",
                 to_state="RUNNING") == 2
    assert value(running, "callback_duration_seconds_count", callback="start") == 3  # connector + 2 tasks

    assert (await client.put("/connectors/orders/pause")).status == 202
    await engine.wait_for_state("orders", "PAUSED", tasks=2)
    paused = await scrape(client)
    assert value(paused, "connectors", state="RUNNING") == 0
    assert value(paused, "connectors", state="PAUSED") == 1
    assert value(paused, "tasks", state="PAUSED") == 2
    assert value(paused, "transitions_total", kind="task", trigger="pause", from_state="RUNNING",
                 to_state="PAUSED") == 2

    assert (await client.delete("/connectors/orders")).status == 204
    deleted = await scrape(client)
    assert value(deleted, "connectors", state="PAUSED") == 0
    assert value(deleted, "tasks", state="PAUSED") == 0
    assert value(deleted, "transitions_total", kind="connector", trigger="destroy", from_state="PAUSED",
                 to_state="DESTROYED") == 1
    assert value(deleted, "deletion_callbacks_run_total") == 1
    assert value(deleted, "deletion_callbacks_failed_total") == 0
    assert value(deleted, "callback_duration_seconds_count", callback="deleted") == 1


async def test_a_failed_deleted_is_counted(client: Client, engine: Engine) -> None:
    await client.post("/connectors", json={"name": "leaky", "config": SOURCE})
    await engine.wait_for_state("leaky", "RUNNING", tasks=2)
    FAULTS.inject("leaky", "deleted", "raise")
    answer = await client.delete("/connectors/leaky")
    assert answer.status == 500  # the connector is gone, but DELETE does not claim its cleanup ran
    body = await answer.json()
    assert body["message"].startswith("Connector leaky was deleted, but its cleanup failed: ")
    assert body["message"].endswith("it will be retried (GET /connector-cleanups)")
    assert (await client.get("/connectors/leaky")).status == 404
    listed = await (await client.get("/connector-cleanups")).json()
    assert [(c["connector"], c["state"], c["attempts"]) for c in listed] == [("leaky", "WAITING", 1)]
    assert "injected failure" in listed[0]["last_error"]
    assert listed[0]["next_attempt"] is not None
    samples = await scrape(client)
    assert value(samples, "deletion_callbacks_run_total") == 1
    assert value(samples, "deletion_callbacks_failed_total") == 1
    assert value(samples, "connector_cleanup_attempts_total", outcome="failed") == 1
    assert value(samples, "connector_cleanups_pending") == 1


async def test_requests_are_counted_by_route_template_and_status(client: Client, engine: Engine) -> None:
    await client.post("/connectors", json={"name": "orders", "config": SOURCE})
    await engine.wait_for_state("orders", "RUNNING", tasks=2)
    for _ in range(2):
        assert (await client.get("/connectors/orders/status")).status == 200
    assert (await client.get("/connectors/ghost/status")).status == 404
    assert (await client.get("/no/such/path")).status == 404
    response = await client.get("/metrics")
    text = await response.text()
    assert "/connectors/orders/status" not in text
    assert "ghost" not in text
    assert "/no/such" not in text
    samples = parse(text)
    route = "/connectors/{connector}/status"
    assert value(samples, "rest_requests_total", method="GET", route=route, status="200") == 2
    assert value(samples, "rest_requests_total", method="GET", route=route, status="404") == 1
    assert value(samples, "rest_requests_total", method="GET", route="unmatched", status="404") == 1
    assert value(samples, "rest_requests_total", method="POST", route="/connectors", status="201") == 1
    assert value(samples, "rest_request_duration_seconds_count", method="GET", route=route) == 3
    assert value(samples, "rest_request_duration_seconds_bucket", method="GET", route=route, le="+Inf") == 3
    assert value(samples, "rest_request_duration_seconds_sum", method="GET", route=route) > 0
    # the scrape itself is counted once it has been answered
    again = await scrape(client)
    assert value(again, "rest_requests_total", method="GET", route="/metrics", status="200") == 1


async def test_histogram_buckets_are_cumulative(client: Client, engine: Engine) -> None:
    await client.post("/connectors", json={"name": "orders", "config": SOURCE})
    await engine.wait_for_state("orders", "RUNNING", tasks=2)
    samples = await scrape(client)
    buckets = sorted(((float(dict(labels)["le"]), v) for (name, labels), v in samples.items()
                      if name == "connect_engine_callback_duration_seconds_bucket"
                      and dict(labels)["callback"] == "start"))
    counts = [v for _, v in buckets]
    assert counts == sorted(counts)
    assert buckets[-1] == (float("inf"), 3)


async def test_each_engine_has_its_own_registry(engine: Engine) -> None:
    async with Engine(FAST) as other:
        await other.create_connector("solo", SOURCE)
        await other.wait_for_state("solo", "RUNNING", tasks=2)
        assert other.metrics is not engine.metrics
        mine, theirs = parse(engine.metrics.render()), parse(other.metrics.render())
        assert value(theirs, "connectors", state="RUNNING") == 1
        assert value(mine, "connectors", state="RUNNING") == 0
        assert value(mine, "transitions_total", kind="connector", trigger="start", from_state="UNASSIGNED",
                     to_state="RUNNING") == 0
