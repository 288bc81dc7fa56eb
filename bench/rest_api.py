"""REST benchmark: status reads per second with 1,000 connectors, create->RUNNING and DELETE latency.

Baseline, measured in the same run on the same HTTP stack (aiohttp server and client, one
process, loopback): a minimal handler answering a fixed ConnectorStateInfo-sized JSON body.
Targets: status reads >= 0.5x the minimal handler's rate; DELETE p99 <= 20 ms (no-op callbacks).

    python bench/rest_api.py [--connectors 1000] [--append BENCHMARKS.md]   (`make bench` appends)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import aiohttp
from aiohttp import web

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench.report import append_to
from engine import Engine
from engine.rest.app import make_app

CONNECTOR = {"connector.class": "noop.NoopConnector", "tasks.max": "2"}
READS = 20_000
CONCURRENCY = 32
LATENCY_SAMPLES = 200


async def _serve(app: web.Application) -> tuple[web.AppRunner, str]:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, f"http://127.0.0.1:{port}"


async def _reads_per_second(session: aiohttp.ClientSession, urls: Callable[[int], str]) -> float:
    counter = iter(range(READS))

    async def worker() -> None:
        for i in counter:
            async with session.get(urls(i)) as response:
                assert response.status == 200
                await response.read()

    began = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
    return READS / (time.perf_counter() - began)


def _percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


async def _timed(action: Callable[[], Awaitable[None]]) -> float:
    began = time.perf_counter()
    await action()
    return (time.perf_counter() - began) * 1000


async def run(connectors: int) -> dict[str, float]:
    logging.disable(logging.CRITICAL)
    body = {
        "name": "c0",
        "connector": {"state": "RUNNING", "worker_id": "127.0.0.1:8083"},
        "tasks": [
            {"id": 0, "state": "RUNNING", "worker_id": "127.0.0.1:8083"},
            {"id": 1, "state": "RUNNING", "worker_id": "127.0.0.1:8083"},
        ],
        "type": "source",
    }

    async def minimal(request: web.Request) -> web.Response:
        return web.json_response(body)

    baseline_app = web.Application()
    baseline_app.router.add_get("/connectors/{connector}/status", minimal)
    result: dict[str, float] = {}
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=CONCURRENCY)) as session:
        runner, url = await _serve(baseline_app)
        result["baseline_reads_per_s"] = await _reads_per_second(
            session, lambda i: f"{url}/connectors/c{i}/status"
        )
        await runner.cleanup()

        async with Engine({"task.shutdown.graceful.timeout.ms": "1000"}) as engine:
            runner, url = await _serve(make_app(engine))
            for n in range(connectors):
                await engine.create_connector(f"c{n}", CONNECTOR)
            for n in range(connectors):
                await engine.wait_for_state(f"c{n}", "RUNNING", tasks=2)
            result["engine_reads_per_s"] = await _reads_per_second(
                session, lambda i: f"{url}/connectors/c{i % connectors}/status"
            )

            async def create_running(name: str) -> None:
                async with session.post(f"{url}/connectors", json={"name": name, "config": CONNECTOR}) as r:
                    assert r.status == 201
                while True:
                    async with session.get(f"{url}/connectors/{name}/status") as r:
                        if r.status == 200:
                            status = await r.json()
                            if status["connector"]["state"] == "RUNNING" and len(status["tasks"]) == 2:
                                return
                    await asyncio.sleep(0)

            async def delete(name: str) -> None:
                async with session.delete(f"{url}/connectors/{name}") as r:
                    assert r.status == 204

            creates = [await _timed(lambda n=n: create_running(f"x{n}")) for n in range(LATENCY_SAMPLES)]
            deletes = [await _timed(lambda n=n: delete(f"x{n}")) for n in range(LATENCY_SAMPLES)]
            result["create_p50_ms"], result["create_p99_ms"] = _percentiles(creates)
            result["delete_p50_ms"], result["delete_p99_ms"] = _percentiles(deletes)
            await runner.cleanup()
    result["ratio"] = result["engine_reads_per_s"] / result["baseline_reads_per_s"]
    result["connectors"] = connectors
    return result


def _markdown(r: dict[str, float]) -> str:
    return (
        "\n## REST API (`python bench/rest_api.py`)\n\n"
        f"Status reads (`GET /connectors/{{c}}/status`, {READS} requests, {CONCURRENCY} concurrent, "
        f"{int(r['connectors'])} connectors x 2 tasks) against a minimal aiohttp handler returning a "
        "same-sized body, same process and client, same run. Latencies over HTTP with the connectors "
        f"present, {LATENCY_SAMPLES} samples each; create->RUNNING polls the status endpoint.\n\n"
        "| engine reads/s | minimal handler reads/s | ratio (target >= 0.5) | create->RUNNING p50 / p99 ms | "
        "DELETE p50 / p99 ms (target p99 <= 20) |\n|---|---|---|---|---|\n"
        f"| {r['engine_reads_per_s']:.0f} | {r['baseline_reads_per_s']:.0f} | {r['ratio']:.2f} | "
        f"{r['create_p50_ms']:.2f} / {r['create_p99_ms']:.2f} | {r['delete_p50_ms']:.2f} / {r['delete_p99_ms']:.2f} |\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--connectors", type=int, default=1000)
    parser.add_argument("--append", help="append a markdown section to this file")
    args = parser.parse_args()
    result = asyncio.run(run(args.connectors))
    print(json.dumps({k: round(v, 3) for k, v in result.items()}))
    append_to(args.append, _markdown(result))


if __name__ == "__main__":
    main()
