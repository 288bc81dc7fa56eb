"""Three workers as separate processes share connectors and tasks through the broker."""

from __future__ import annotations

import json
import time
from collections import Counter, defaultdict
from functools import partial
from typing import Any

import pytest

from engine.testing.cluster import WorkerCluster, WorkerProcess, poll_until, request

SOURCE = "engine.testing.recording.RecordingSourceConnector"


pytestmark = pytest.mark.timeout(240)  # separate worker processes and real rebalances


def source_config(cluster: WorkerCluster, tasks: int, **extra: str) -> dict[str, str]:
    return {"connector.class": SOURCE, "tasks.max": str(tasks), "topic": "dist-out",
            "test.record.file": str(cluster.record_file), **extra}


async def status(worker: WorkerProcess, name: str) -> dict[str, Any] | None:
    code, body = await request(worker, "GET", f"/connectors/{name}/status")
    return body if code == 200 else None


async def running(worker: WorkerProcess, name: str, tasks: int) -> dict[str, Any] | None:
    body = await status(worker, name)
    if body is None or body["connector"]["state"] != "RUNNING":
        return None
    states = [t["state"] for t in body["tasks"]]
    return body if states == ["RUNNING"] * tasks else None


def task_owners(body: dict[str, Any]) -> Counter[str]:
    return Counter(t["worker_id"] for t in body["tasks"])


async def owners_of(worker: WorkerProcess, names: tuple[str, ...], tasks: int) -> Counter[str] | None:
    """Tasks per worker id over these connectors, once all of them run; None before."""
    owners: Counter[str] = Counter()
    for name in names:
        body = await running(worker, name, tasks)
        if body is None:
            return None
        owners.update(task_owners(body))
    return owners


def no_overlap(calls: list[dict[str, Any]], killed: dict[int, float] | None = None) -> None:
    """No task or connector instance ever ran in two processes at once (start..stop intervals;
    in a process killed at ``killed[pid]`` everything stopped then)."""
    killed = killed or {}
    by_unit: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for call in calls:
        if call["method"] in ("start", "stop"):
            by_unit[(call["connector"], call["unit"])].append(call)
    for unit, events in by_unit.items():
        running_in: int | None = None
        for event in sorted(events, key=lambda e: e["at"]):
            if event["method"] == "start":
                if running_in in killed and killed[running_in] <= event["at"]:
                    running_in = None
                assert running_in in (None, event["pid"]), f"{unit} started in {event['pid']} while running in {running_in}"
                running_in = event["pid"]
            elif event["pid"] == running_in:
                running_in = None


async def test_three_workers_share_tasks_evenly_and_answer_alike(cluster: WorkerCluster) -> None:
    workers = [cluster.start_worker() for _ in range(3)]
    await cluster.started(*workers)
    code, info = await request(workers[1], "POST", "/connectors",
                               {"name": "spread", "config": source_config(cluster, 6)})
    assert code == 201, info
    body = await poll_until(lambda: running(workers[0], "spread", 6), what="spread RUNNING with 6 tasks")
    assert sorted(task_owners(body).values()) == [2, 2, 2]
    assert set(task_owners(body)) == {w.worker_id for w in workers}
    for worker in workers:  # statuses come from the status topic: every worker sees the same
        assert await poll_until(partial(running, worker, "spread", 6)) == body
    no_overlap(cluster.calls())


async def test_adding_and_removing_workers_moves_only_what_must_move(cluster: WorkerCluster) -> None:
    first, second = cluster.start_worker(), cluster.start_worker()
    await cluster.started(first, second)
    for name in ("a", "b"):
        code, _ = await request(first, "POST", "/connectors", {"name": name, "config": source_config(cluster, 3)})
        assert code == 201
    await poll_until(lambda: running(first, "a", 3))
    await poll_until(lambda: running(first, "b", 3))
    starts_before = Counter((c["connector"], c["unit"]) for c in cluster.calls() if c["method"] == "start")

    third = cluster.start_worker()
    await cluster.started(third)

    async def balanced() -> Counter[str] | None:
        owners = await owners_of(third, ("a", "b"), 3)
        return owners if owners is not None and sorted(owners.values()) == [2, 2, 2] else None

    await poll_until(balanced, what="6 tasks spread 2/2/2 over three workers")
    starts_after = Counter((c["connector"], c["unit"]) for c in cluster.calls() if c["method"] == "start")
    restarted = [unit for unit, n in starts_after.items() if unit[1].startswith("task") and n > starts_before[unit]]
    assert len(restarted) == 2, f"only the two tasks handed to the new worker restart, not {restarted}"

    assert second.stop() == 0  # leaves the group: its work goes to the two others

    async def on_two() -> bool:
        owners = await owners_of(first, ("a", "b"), 3)
        return owners is not None and set(owners) == {first.worker_id, third.worker_id}

    await poll_until(on_two, what="the stopped worker's tasks running on the others")
    calls = cluster.calls()
    assert not [c for c in calls if c["method"] == "deleted"], "moving work never deletes it"
    assert all(not c["args"].get("connector_deleted") for c in calls if c["method"] == "stop")
    no_overlap(calls)


async def test_a_killed_workers_tasks_wait_for_the_delay_then_move(killable_cluster: WorkerCluster) -> None:
    cluster = killable_cluster
    cluster.delay_ms = 10_000  # beyond the broker noticing the death (session.timeout.ms, 6 s)
    workers = [cluster.start_worker() for _ in range(3)]
    await cluster.started(*workers)
    code, _ = await request(workers[0], "POST", "/connectors", {"name": "k", "config": source_config(cluster, 3)})
    assert code == 201
    body = await poll_until(lambda: running(workers[0], "k", 3))
    victim = next(w for w in workers[1:] if w.worker_id in task_owners(body))
    victim.kill()
    killed = {victim.process.pid: time.time()}
    survivor = next(w for w in workers if w is not victim)

    async def moved() -> dict[str, Any] | None:
        found = await running(survivor, "k", 3)
        return found if found and victim.worker_id not in task_owners(found) else None

    await poll_until(moved, timeout=60, what="the killed worker's task running elsewhere")
    assert time.time() - killed[victim.process.pid] >= cluster.delay_ms / 1000, "moved before the delay"
    no_overlap(cluster.calls(), killed)


async def test_a_worker_that_returns_within_the_delay_gets_its_work_back(killable_cluster: WorkerCluster) -> None:
    cluster = killable_cluster
    cluster.delay_ms = 60_000  # far longer than the test: only a return can give the work back
    first, second = cluster.start_worker(), cluster.start_worker()
    await cluster.started(first, second)
    code, _ = await request(first, "POST", "/connectors", {"name": "back", "config": source_config(cluster, 2)})
    assert code == 201
    body = await poll_until(lambda: running(first, "back", 2))
    assert set(task_owners(body)) == {first.worker_id, second.worker_id}
    # the leader is the one to kill: the group must also elect a new one
    leader = leader_of(first)
    victim = first if leader == first.worker_id else second
    survivor = second if victim is first else first
    theirs = next(t["id"] for t in body["tasks"] if t["worker_id"] == victim.worker_id)
    victim.kill()
    again = cluster.start_worker(port=victim.port)  # same worker id
    await cluster.started(again)

    async def restarted_there() -> bool:
        return any(c["pid"] == again.process.pid and c["unit"] == f"task-{theirs}" and c["method"] == "start"
                   for c in cluster.calls())

    await poll_until(restarted_there, timeout=60, what="the returning worker starting its old task")
    await poll_until(lambda: running(survivor, "back", 2), timeout=30)
    starts = [c for c in cluster.calls() if c["method"] == "start" and c["unit"] == f"task-{1 - theirs}"]
    assert len(starts) == 1, "the survivor's own task never moved"


def leader_of(worker: WorkerProcess) -> str:
    applied = [json.loads(line) for line in worker.output().splitlines() if '"cluster.assignment_applied"' in line]
    return str(applied[-1]["leader"])


async def test_rest_works_on_any_worker_and_forwards_to_the_leader(cluster: WorkerCluster) -> None:
    workers = [cluster.start_worker() for _ in range(2)]
    await cluster.started(*workers)
    for worker in workers:
        code, _ = await request(worker, "PUT", f"/connectors/via-{worker.name}/config",
                                source_config(cluster, 1, name=f"via-{worker.name}"))
        assert code == 201
    for worker in workers:
        code, names = await request(worker, "GET", "/connectors")
        assert code == 200
        assert {"via-w1", "via-w2"} <= set(names) or await poll_until(
            partial(_lists, worker, {"via-w1", "via-w2"}))
    code, body = await request(workers[0], "PUT", "/connectors/via-w1/config",
                               source_config(cluster, 2, name="via-w1"))
    assert code == 200, body
    code, body = await request(workers[1], "POST", "/connectors",
                               {"name": "via-w1", "config": source_config(cluster, 1)})
    assert code == 409
    assert body["message"] == "Connector via-w1 already exists"
    # the tasks.max change rebalanced first: until then a follower answers Connect's other 409 (stale
    # configuration, a rebalance due) instead of the one checked below; Kafka takes up to a heartbeat
    await poll_until(lambda: running(workers[1], "via-w1", 2), what="via-w1 running its 2 tasks")
    answers = []
    leader = leader_of(workers[0])
    for worker in workers:  # one is the leader (200); the follower may not forward a third hop
        # the follower's 409 is final: retrying it would only wait out request()'s 60 s
        code, body = await request(worker, "PUT", "/connectors/via-w2/config?forward=false",
                                   source_config(cluster, 1, name="via-w2"),
                                   retry_conflicts=worker.worker_id == leader)
        answers.append((code, body.get("message") if code == 409 else None))
    assert sorted(answers, key=str) == sorted(
        [(200, None), (409, "Cannot complete request because of a conflicting operation (e.g. worker rebalance)")],
        key=str)
    sink = {"connector.class": "engine.testing.recording.RecordingSinkConnector", "topics": "t",
            "consumer.override.group.id": cluster.group}
    code, body = await request(workers[1], "POST", "/connectors", {"name": "greedy", "config": sink})
    assert code == 400
    assert body["message"] == f"Consumer group for sink connector named greedy conflicts with Connect worker group {cluster.group}"
    code, _ = await request(workers[1], "DELETE", "/connectors/via-w1")
    assert code == 204
    await poll_until(lambda: _gone(workers[0], "via-w1"))


async def _lists(worker: WorkerProcess, names: set[str]) -> bool:
    code, found = await request(worker, "GET", "/connectors")
    return code == 200 and names <= set(found)


async def _gone(worker: WorkerProcess, name: str) -> bool:
    code, _ = await request(worker, "GET", f"/connectors/{name}/status")
    return code == 404
