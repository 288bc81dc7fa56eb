"""restart.policy=on-failure: FAILED connectors and tasks restarted after a backoff on an injectable clock."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from engine import Engine
from engine.herder.messages import Reconcile
from engine.herder.ownership import StandaloneOwnership
from engine.storage.status import Status
from engine.testing import FAULTS, VirtualTimers
from tests.herder.conftest import FAST, source

POLICY = {
    "restart.policy": "on-failure",
    "restart.backoff.initial.ms": "1000",
    "restart.backoff.max.ms": "8000",
    "restart.max.attempts": "3",
    "restart.reset.after.ms": "60000",
}


@pytest.fixture
def timers() -> VirtualTimers:
    return VirtualTimers()


@pytest.fixture
async def engine(timers: VirtualTimers) -> AsyncIterator[Engine]:
    FAULTS.reset()
    try:
        async with Engine(FAST, timers=timers) as running:
            yield running
    finally:
        FAULTS.reset()


async def _advance(engine: Engine, timers: VirtualTimers, seconds: float) -> None:
    await engine.settled()
    timers.advance(seconds)
    await engine.settled()


async def _status(engine: Engine) -> dict[str, Any]:
    return await engine.connector_status("c")


def _restarts(engine: Engine) -> dict[tuple[str, ...], float]:
    return dict(engine.metrics.auto_restarts.values)


async def test_a_failed_task_restarts_only_after_its_backoff(engine: Engine, timers: VirtualTimers) -> None:
    FAULTS.inject("c", "task.start", "raise", task=1)
    await engine.create_connector("c", source(2, **POLICY))
    await engine.settled()
    status = await _status(engine)
    failed = status["tasks"][1]
    assert failed["state"] == "FAILED"
    assert failed["restart_attempts"] == 0
    assert 800 <= failed["next_restart_ms"] <= 1200  # 1 s, jittered by 20% either way
    assert status["tasks"][0]["restart_attempts"] == 0
    assert status["tasks"][0]["next_restart_ms"] is None
    assert status["connector"]["restart_attempts"] == 0
    assert engine.metrics.scheduled_restarts() == 1
    assert "connect_engine_auto_restarts_scheduled 1" in engine.metrics.render()

    await _advance(engine, timers, 0.75)  # before the earliest the backoff may end
    assert (await _status(engine))["tasks"][1]["state"] == "FAILED"
    FAULTS.clear("c", "task.start")
    await _advance(engine, timers, 0.5)  # past the latest
    task = (await _status(engine))["tasks"][1]
    assert task["state"] == "RUNNING"
    assert task["restart_attempts"] == 1
    assert task["next_restart_ms"] is None
    assert _restarts(engine) == {("task",): 1.0}
    assert engine.metrics.scheduled_restarts() == 0
    assert 'connect_engine_auto_restarts_total{kind="task"} 1' in engine.metrics.render()


async def test_the_restart_goes_failed_restarting_running(engine: Engine, timers: VirtualTimers) -> None:
    feed = engine.transitions()
    FAULTS.inject("c", "start", "raise")
    await engine.create_connector("c", source(1, **POLICY), wait_started=False)
    await engine.settled()
    assert (await _status(engine))["connector"]["state"] == "FAILED"
    FAULTS.clear("c", "start")
    await _advance(engine, timers, 1.25)
    seen = [f"{e.from_state}->{e.to_state}" for e in feed.drain() if e.task is None]
    await feed.aclose()
    assert seen[-3:] == ["UNASSIGNED->FAILED", "FAILED->RESTARTING", "RESTARTING->RUNNING"]
    assert (await _status(engine))["connector"]["restart_attempts"] == 1
    assert _restarts(engine) == {("connector",): 1.0}


async def test_backoff_grows_then_gives_up_keeping_the_last_trace(
    engine: Engine, timers: VirtualTimers
) -> None:
    FAULTS.inject("c", "task.start", "raise")
    await engine.create_connector("c", source(1, **POLICY))
    for attempt, backoff in enumerate([1.0, 2.0, 4.0], start=1):
        before = timers.time()
        due = (await _status(engine))["tasks"][0]["next_restart_ms"]
        assert backoff * 0.8 <= due / 1000 - before <= backoff * 1.2
        await _advance(engine, timers, backoff * 1.25)
        assert (await _status(engine))["tasks"][0]["restart_attempts"] == attempt
    task = (await _status(engine))["tasks"][0]
    assert task["state"] == "FAILED"
    assert task["next_restart_ms"] is None  # gave up after restart.max.attempts
    assert "injected failure in task-0.start" in task["trace"]
    await _advance(engine, timers, 3600)
    assert (await _status(engine))["tasks"][0]["restart_attempts"] == 3
    assert _restarts(engine) == {("task",): 3.0}


async def test_attempts_reset_after_a_healthy_period(engine: Engine, timers: VirtualTimers) -> None:
    FAULTS.inject("c", "task.start", "raise")
    await engine.create_connector("c", source(1, **POLICY))
    FAULTS.clear("c", "task.start")
    await _advance(engine, timers, 1.25)
    assert (await _status(engine))["tasks"][0]["restart_attempts"] == 1
    await _advance(engine, timers, 59)
    assert (await _status(engine))["tasks"][0]["restart_attempts"] == 1
    await _advance(engine, timers, 1)
    task = (await _status(engine))["tasks"][0]
    assert task["state"] == "RUNNING"
    assert task["restart_attempts"] == 0


async def test_no_restart_while_paused_and_resume_schedules_again(
    engine: Engine, timers: VirtualTimers
) -> None:
    FAULTS.inject("c", "task.start", "raise")
    await engine.create_connector("c", source(1, **POLICY))
    await engine.pause_connector("c")
    await engine.settled()
    assert (await _status(engine))["tasks"][0]["next_restart_ms"] is None
    FAULTS.clear("c", "task.start")
    await _advance(engine, timers, 30)
    status = await _status(engine)
    assert status["tasks"][0]["state"] == "FAILED"
    assert status["tasks"][0]["restart_attempts"] == 0
    assert _restarts(engine) == {}
    await engine.resume_connector("c")
    await engine.settled()
    assert (await _status(engine))["tasks"][0]["next_restart_ms"] is not None
    await _advance(engine, timers, 1.25)
    assert (await _status(engine))["tasks"][0]["state"] == "RUNNING"


async def test_stop_and_delete_cancel_the_scheduled_restart(engine: Engine, timers: VirtualTimers) -> None:
    FAULTS.inject("c", "start", "raise")
    await engine.create_connector("c", source(1, **POLICY), wait_started=False)
    await engine.settled()
    assert timers.pending
    outcome = await engine.delete_connector("c")
    assert outcome.succeeded
    assert timers.pending == []
    await _advance(engine, timers, 10)
    assert await engine.connectors() == []
    assert engine.herder.live_actors == []
    assert _restarts(engine) == {}


async def test_settled_does_not_wait_for_a_scheduled_restart(engine: Engine) -> None:
    FAULTS.inject("c", "task.start", "raise")
    await engine.create_connector("c", source(1, **POLICY))
    await engine.settled(timeout=2)  # the restart is a timer, not work in flight
    assert engine.metrics.scheduled_restarts() == 1


async def test_policy_never_keeps_connects_status_shape(engine: Engine, timers: VirtualTimers) -> None:
    FAULTS.inject("c", "task.start", "raise")
    await engine.create_connector("c", source(1))
    await _advance(engine, timers, 3600)
    status = await _status(engine)
    assert status["tasks"][0]["state"] == "FAILED"
    assert "restart_attempts" not in status["tasks"][0]
    assert "next_restart_ms" not in status["connector"]
    assert timers.pending == []


async def test_a_config_update_starts_the_counts_afresh(engine: Engine, timers: VirtualTimers) -> None:
    FAULTS.inject("c", "task.start", "raise")
    await engine.create_connector("c", source(1, **POLICY))
    await _advance(engine, timers, 1.25)
    assert (await _status(engine))["tasks"][0]["restart_attempts"] == 1
    FAULTS.clear("c", "task.start")
    await engine.put_connector_config("c", source(1, **{**POLICY, "restart.max.attempts": "5"}))
    await engine.settled()
    task = (await _status(engine))["tasks"][0]
    assert task["state"] == "RUNNING"
    assert task["restart_attempts"] == 0


async def test_real_timers_restart_by_themselves() -> None:
    FAULTS.reset()
    try:
        async with Engine(FAST) as engine:
            FAULTS.inject("c", "task.start", "raise")
            await engine.create_connector("c", source(1, **{**POLICY, "restart.backoff.initial.ms": "50"}))
            FAULTS.clear("c", "task.start")
            await engine.wait_for_state("c", "RUNNING", tasks=["RUNNING"], timeout=5)
            assert (await engine.connector_status("c"))["tasks"][0]["restart_attempts"] == 1
    finally:
        FAULTS.reset()


class _Owner(StandaloneOwnership):
    """Standalone, except for which tasks this worker owns (as a cluster's assignment would say)."""

    def __init__(self) -> None:
        self.tasks = {0, 1}

    def owns_task(self, name: str, task: int) -> bool:
        return task in self.tasks


async def test_only_the_owner_restarts_and_lost_work_keeps_no_timer(
    engine: Engine, timers: VirtualTimers
) -> None:
    owner = _Owner()
    engine.herder.ownership = owner
    FAULTS.inject("c", "task.start", "raise")
    await engine.create_connector("c", source(2, **POLICY))
    await engine.settled()
    assert engine.metrics.scheduled_restarts() == 2
    owner.tasks = {0}  # the group moved task 1 to another worker
    done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    engine.herder.post("c", Reconcile(done))
    await done
    assert engine.metrics.scheduled_restarts() == 1
    FAULTS.clear("c", "task.start")
    await _advance(engine, timers, 1.25)
    assert _restarts(engine) == {("task",): 1.0}
    assert [t["state"] for t in (await _status(engine))["tasks"]] == ["RUNNING", "UNASSIGNED"]


def test_the_restart_fields_survive_the_status_stores_json() -> None:
    status = Status("FAILED", "w1", 3, "boom", restart_attempts=2, next_restart_ms=1234)
    assert Status.from_json(status.to_json()) == status
    plain = Status("RUNNING", "w1")
    assert "restart_attempts" not in plain.to_json()  # Connect's shape without the policy
    assert Status.from_json(plain.to_json()) == plain
