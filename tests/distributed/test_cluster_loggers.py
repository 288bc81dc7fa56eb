"""KIP-976: ``PUT /admin/loggers/<namespace>?scope=cluster`` changes the level on every worker of the
cluster, read back from each worker's own ``GET /admin/loggers``, a worker that joins later included;
``scope=worker`` (and an unknown scope, as in Connect) changes only the worker asked."""

from __future__ import annotations

from functools import partial
from typing import Any

from engine.testing.cluster import WorkerCluster, WorkerProcess, poll_until, request


async def _level(worker: WorkerProcess, namespace: str) -> str | None:
    status, body = await request(worker, "GET", f"/admin/loggers/{namespace}")
    return body["level"] if status == 200 and isinstance(body, dict) else None


async def _at(worker: WorkerProcess, namespace: str, level: str) -> dict[str, Any] | None:
    return {"level": level} if await _level(worker, namespace) == level else None


async def test_a_cluster_scope_level_reaches_every_worker_and_one_that_joins_later(cluster: WorkerCluster) -> None:
    first, second = cluster.start_worker(), cluster.start_worker()
    await cluster.started(first, second)
    status, body = await request(second, "PUT", "/admin/loggers/engine.herder?scope=cluster", {"level": "DEBUG"})
    assert (status, body) == (204, None)
    assert await _level(second, "engine.herder") == "DEBUG"  # the worker asked has applied it when it answers
    await poll_until(lambda: _at(first, "engine.herder", "DEBUG"), timeout=30, what="the level on the other worker")

    third = cluster.start_worker()
    await cluster.started(third)
    await poll_until(lambda: _at(third, "engine.herder", "DEBUG"), timeout=30, what="the level on a late joiner")

    status, _ = await request(first, "PUT", "/admin/loggers/engine.herder?scope=cluster", {"level": "WARN"})
    assert status == 204
    for worker in (first, second, third):
        await poll_until(partial(_at, worker, "engine.herder", "WARN"), timeout=30, what=f"WARN on {worker.name}")


async def test_worker_scope_and_an_unknown_scope_change_only_the_worker_asked(cluster: WorkerCluster) -> None:
    first, second = cluster.start_worker(), cluster.start_worker()
    await cluster.started(first, second)
    for scope in ("worker", "galaxy"):
        namespace = f"engine.rest.{scope}"
        status, body = await request(first, "PUT", f"/admin/loggers/{namespace}?scope={scope}", {"level": "ERROR"})
        assert status == 200
        assert namespace in body
        assert await _level(first, namespace) == "ERROR"
        assert await _level(second, namespace) != "ERROR"


async def test_a_bad_level_is_refused_before_anything_is_written(cluster: WorkerCluster) -> None:
    first = cluster.start_worker()
    await cluster.started(first)
    status, body = await request(first, "PUT", "/admin/loggers/engine?scope=cluster", {"level": "LOUD"})
    assert status == 404
    assert body["message"] == "invalid log level 'LOUD'."
