"""Deletion across the cluster: deleted() once, on the owner; tasks told wherever they run;
pending cleanup survives the owner's crash."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.testing.cluster import WorkerCluster, poll_until, request, worker_cluster
from tests.distributed.test_cluster import no_overlap, running, source_config, task_owners
from tests.integration.brokers import Broker

pytestmark = pytest.mark.timeout(240)  # separate worker processes and real rebalances


def deletion_calls(cluster: WorkerCluster, name: str) -> tuple[list[int], Counter[str]]:
    """Pids that ran ``deleted()``, and per task unit how often it got ``stop(connector_deleted=True)``."""
    calls = [c for c in cluster.calls() if c["connector"] == name]
    deleted = [c["pid"] for c in calls if c["method"] == "deleted"]
    flagged = Counter(c["unit"] for c in calls if c["method"] == "stop" and c["args"].get("connector_deleted"))
    return deleted, flagged


async def test_deleted_runs_once_on_the_owner_and_every_task_learns_it(cluster: WorkerCluster) -> None:
    workers = [cluster.start_worker() for _ in range(3)]
    await cluster.started(*workers)
    code, _ = await request(workers[2], "POST", "/connectors", {"name": "d", "config": source_config(cluster, 3)})
    assert code == 201
    body = await poll_until(lambda: running(workers[0], "d", 3))
    assert len(task_owners(body)) == 3  # one task per worker: the flag must reach three processes
    code, _ = await request(workers[1], "DELETE", "/connectors/d")
    assert code == 204

    async def done() -> tuple[list[int], Counter[str]] | None:
        deleted, flagged = deletion_calls(cluster, "d")
        return (deleted, flagged) if deleted and len(flagged) == 3 else None

    deleted, flagged = await poll_until(done, what="deleted() and three flagged task stops")
    await asyncio.sleep(2)  # any second run would show up by now
    deleted, flagged = deletion_calls(cluster, "d")
    assert len(deleted) == 1
    assert flagged == Counter({"task-0": 1, "task-1": 1, "task-2": 1})
    for worker in workers:
        code, _ = await request(worker, "GET", "/connectors/d/status")
        assert code == 404


async def test_delete_during_a_rebalance_still_runs_deleted_once(cluster: WorkerCluster) -> None:
    first, second = cluster.start_worker(), cluster.start_worker()
    await cluster.started(first, second)
    code, _ = await request(first, "POST", "/connectors", {"name": "mid", "config": source_config(cluster, 4)})
    assert code == 201
    await poll_until(lambda: running(first, "mid", 4))
    third = cluster.start_worker()  # the group rebalances as it joins...
    code, _ = await request(first, "DELETE", "/connectors/mid")  # ...and the delete lands in between
    assert code == 204
    await cluster.started(third)
    await poll_until(lambda: _count_deleted(cluster, "mid"), what="deleted() of mid")
    await asyncio.sleep(3)
    assert len(deletion_calls(cluster, "mid")[0]) == 1
    no_overlap(cluster.calls())


async def _count_deleted(cluster: WorkerCluster, name: str) -> int:
    return len(deletion_calls(cluster, name)[0])


async def test_cleanup_survives_the_owner_dying_inside_deleted(killable_cluster: WorkerCluster) -> None:
    cluster = killable_cluster
    workers = [cluster.start_worker() for _ in range(2)]
    await cluster.started(*workers)
    once = cluster.directory / "exit-once"
    config = source_config(cluster, 2, **{"test.exit.deleted": "true", "test.exit.once.file": str(once)})
    code, _ = await request(workers[0], "POST", "/connectors", {"name": "crash", "config": config})
    assert code == 201
    body = await poll_until(lambda: running(workers[0], "crash", 2))
    owner_id = body["connector"]["worker_id"]
    owner = next(w for w in workers if w.worker_id == owner_id)
    survivor = next(w for w in workers if w is not owner)
    code, _ = await request(survivor, "DELETE", "/connectors/crash")
    assert code == 204
    await poll_until(lambda: _exited(owner), what="the owner dying inside deleted()")
    assert owner.process.returncode == 9

    async def ran_twice() -> list[int] | None:
        deleted, _ = deletion_calls(cluster, "crash")
        return deleted if len(deleted) >= 2 else None

    deleted = await poll_until(ran_twice, timeout=60, what="the survivor re-running deleted()")
    assert deleted[0] == owner.process.pid
    assert deleted[1] != owner.process.pid
    await asyncio.sleep(2)
    assert len(deletion_calls(cluster, "crash")[0]) == 2  # cleared after success: never a third time


async def _exited(worker: object) -> bool:
    return not worker.alive  # type: ignore[attr-defined]


@pytest.fixture
def retrying_cluster(kafka: Broker, tmp_path: Path) -> Iterator[WorkerCluster]:
    """Cleanups that fail are retried every 1.5 s, five times; creation waits 1 s for them."""
    extra = {"connector.deleted.timeout.ms": "1000", "connector.deleted.retry.backoff.ms": "1500",
             "connector.deleted.max.retries": "5"}
    with worker_cluster(kafka.bootstrap, tmp_path, extra=extra) as made:
        yield made


async def test_the_leader_refuses_a_name_whose_cleanup_is_pending_on_another_worker(
        retrying_cluster: WorkerCluster) -> None:
    cluster = retrying_cluster
    first, second = cluster.start_worker(), cluster.start_worker()
    await cluster.started(first, second)
    config = source_config(cluster, 1, **{"test.fail.deleted": "true"})  # every attempt fails
    code, _ = await request(first, "POST", "/connectors", {"name": "leaky", "config": config})
    assert code == 201
    await poll_until(lambda: running(first, "leaky", 1))
    code, _ = await request(second, "DELETE", "/connectors/leaky")
    assert code == 204  # in a cluster DELETE answers once the deletion is written (the owner runs it)

    async def listed_everywhere() -> bool:
        answers = [await request(w, "GET", "/connector-cleanups") for w in (first, second)]
        return all(any(c["connector"] == "leaky" for c in body) for _, body in answers)

    await poll_until(listed_everywhere, what="the pending cleanup listed on both workers")

    async def refused() -> str | None:
        code, body = await request(second, "POST", "/connectors", {"name": "leaky", "config": source_config(cluster, 1)},
                                   retry_conflicts=False)
        assert code in (409, 500), body  # 409: refused, or a rebalance still settling
        return body["message"] if code == 409 and "still being cleaned up" in body["message"] else None

    message = await poll_until(refused, what="creation refused while the cleanup is pending")
    assert message.startswith("Connector leaky cannot be created yet")

    # after the last retry the cleanup is given up, the name is free again
    async def created() -> bool:
        code, _ = await request(second, "POST", "/connectors", {"name": "leaky", "config": source_config(cluster, 1)})
        return code == 201

    await poll_until(created, timeout=60, what="the name usable once the cleanup gave up")
    deleted_pids = deletion_calls(cluster, "leaky")[0]
    assert len(deleted_pids) == 6  # the deletion and its five retries, all on the cleanup's owner
    assert len(set(deleted_pids)) == 1
