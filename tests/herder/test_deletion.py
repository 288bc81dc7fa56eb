"""The deletion contract (``docs/ARCHITECTURE.md``, "Deletion contract"): order, flag, always-runs,
bounded, exactly once."""

from __future__ import annotations

import asyncio
import contextlib
import gc
from typing import Any

import pytest
from structlog.testing import capture_logs

from engine import ConnectorNotFound, Engine
from engine.herder.deletion import run_deleted
from engine.storage.offsets import MemoryOffsetStore
from engine.testing import CALLS, SimulatedCrash
from tests.herder.conftest import source
from tests.herder.probes import AsyncProbeConnector

PROBE = "tests.herder.probes.AsyncProbeConnector"


def stops(connector: str, unit: str) -> list[dict[str, object]]:
    return [c.args for c in CALLS.of(connector, unit) if c.method == "stop"]


async def test_delete_runs_task_stops_then_connector_stop_then_deleted_and_returns_after(
    engine: Engine,
) -> None:
    await engine.create_connector("c", source(2))
    await engine.wait_for_state("c", "RUNNING", tasks=2)
    outcome = await engine.delete_connector("c")
    assert outcome.succeeded
    assert not outcome.fresh_instance
    order = [(c.unit, c.method) for c in CALLS.of("c") if c.method in ("stop", "deleted")]
    assert sorted(order[:2]) == [("task-0", "stop"), ("task-1", "stop")]
    assert order[2:] == [("connector", "stop"), ("connector", "deleted")]
    assert stops("c", "task-0") == [{"connector_deleted": True}]
    assert await engine.connectors() == []
    await engine.wait_for_state("c", "DESTROYED", timeout=0.1)


async def test_statuses_are_removed_only_after_deleted_returned(engine: Engine) -> None:
    seen: list[object] = []
    AsyncProbeConnector.PROBE = lambda name: seen.append(engine.herder.status.connector(name))
    try:
        await engine.create_connector("c", {"connector.class": PROBE})
        await engine.wait_for_state("c", "RUNNING", tasks=1)
        await engine.delete_connector("c")
    finally:
        AsyncProbeConnector.PROBE = None
    assert len(seen) == 1
    assert seen[0] is not None
    with pytest.raises(Exception, match="No status found"):
        await engine.connector_status("c")


async def test_only_deletion_sets_the_flag_or_calls_deleted(engine: Engine) -> None:
    await engine.create_connector("c", source(1))
    await engine.wait_for_state("c", "RUNNING", tasks=1)
    await engine.pause_connector("c")
    await engine.wait_for_state("c", "PAUSED", tasks=1)
    await engine.resume_connector("c")
    await engine.wait_for_state("c", "RUNNING", tasks=1)
    await engine.restart_connector("c", include_tasks=True)
    await engine.wait_for_state("c", "RUNNING", tasks=1)
    await engine.restart_task("c", 0)
    await engine.wait_for_state("c", "RUNNING", tasks=1)
    await engine.put_connector_config("c", source(1, changed="yes"))
    await engine.wait_for_state("c", "RUNNING", tasks=1)
    await engine.stop_connector("c")
    await engine.wait_for_state("c", "STOPPED", tasks=0)
    assert "deleted" not in CALLS.methods("c")
    assert stops("c", "task-0")
    assert all(s == {"connector_deleted": False} for s in stops("c", "task-0"))


async def test_worker_shutdown_stops_plainly_and_never_deletes() -> None:
    async with Engine() as engine:
        await engine.create_connector("c", source(1))
        await engine.wait_for_state("c", "RUNNING", tasks=1)
    assert stops("c", "task-0") == [{"connector_deleted": False}]
    assert CALLS.methods("c", "connector")[-1] == "stop"
    assert "deleted" not in CALLS.methods("c")


@pytest.mark.parametrize("initial", ["PAUSED", "STOPPED"])
async def test_deleting_a_never_started_connector_still_runs_deleted(engine: Engine, initial: str) -> None:
    await engine.create_connector("c", source(1), initial_state=initial)
    await engine.wait_for_state("c", initial, tasks=0)
    outcome = await engine.delete_connector("c")
    assert outcome.succeeded
    assert CALLS.methods("c") == ["initialize", "deleted"]


async def test_deleting_a_connector_whose_start_failed_runs_deleted_without_stop(engine: Engine) -> None:
    await engine.create_connector("c", source(1, **{"test.fail.start": "true"}))
    await engine.wait_for_state("c", "FAILED")
    await engine.delete_connector("c")
    assert CALLS.methods("c") == ["initialize", "start", "deleted"]


async def test_a_connector_that_failed_to_initialize_gets_a_fresh_instance_knowing_its_config(
    engine: Engine,
) -> None:
    await engine.create_connector("c", source(1, **{"test.fail.initialize": "true"}))
    await engine.wait_for_state("c", "FAILED")
    outcome = await engine.delete_connector("c")
    # the fresh instance's initialize fails too (same config): deleted() cannot run, and it is reported
    assert outcome.fresh_instance
    assert not outcome.succeeded
    assert "injected failure" in (outcome.error or "")
    assert await engine.connectors() == []


async def test_deleting_a_still_starting_connector_runs_deleted_on_a_fresh_instance(engine: Engine) -> None:
    # create answers once the connector started: the delete comes in while it still starts
    creating = asyncio.ensure_future(
        engine.create_connector("c", source(1, **{"test.block.start.ms": "1500"}))
    )
    await asyncio.sleep(0.2)
    outcome = await engine.delete_connector("c")
    with pytest.raises(ConnectorNotFound):
        await creating
    assert outcome.succeeded
    assert outcome.fresh_instance
    assert CALLS.methods("c")[-2:] == ["initialize", "deleted"]
    assert await engine.connectors() == []


async def test_failed_tasks_still_learn_of_the_deletion(engine: Engine) -> None:
    await engine.create_connector("c", source(1, **{"test.fail.task.start": "true"}))
    await engine.wait_for_state("c", "RUNNING", tasks=["FAILED"])
    await engine.delete_connector("c")
    assert stops("c", "task-0") == [{"connector_deleted": False}, {"connector_deleted": True}]


async def test_a_failing_deleted_is_logged_reported_and_deletion_completes(engine: Engine) -> None:
    await engine.create_connector("c", source(1, **{"test.fail.deleted": "true"}))
    await engine.wait_for_state("c", "RUNNING", tasks=1)
    with capture_logs() as logs:
        outcome = await engine.delete_connector("c")
    assert not outcome.succeeded
    assert "injected failure in connector.deleted" in (outcome.error or "")
    assert "connector.deletion_failed" in [e["event"] for e in logs]
    assert await engine.connectors() == []
    assert "c" in engine.herder.snapshot.pending_cleanups  # kept, so a restart retries it


async def test_a_hanging_deleted_is_bounded(engine: Engine) -> None:
    await engine.create_connector("c", source(1, **{"test.block.deleted.ms": "3000"}))
    await engine.wait_for_state("c", "RUNNING", tasks=1)
    outcome = await engine.delete_connector("c")
    assert not outcome.succeeded
    assert "did not return within 1 s" in (outcome.error or "")
    assert await engine.connectors() == []


async def test_hanging_task_and_connector_stops_are_abandoned_and_deletion_completes(engine: Engine) -> None:
    await engine.create_connector(
        "c", source(1, **{"test.block.task.stop.ms": "3000", "test.block.stop.ms": "3000"})
    )
    await engine.wait_for_state("c", "RUNNING", tasks=1)
    with capture_logs() as logs:
        outcome = await engine.delete_connector("c")
    events = [e["event"] for e in logs]
    assert "task.shutdown_timed_out" in events
    assert outcome.succeeded
    assert outcome.fresh_instance
    assert await engine.connectors() == []


async def test_deleted_runs_exactly_once_even_with_a_second_tombstone(engine: Engine) -> None:
    await engine.create_connector("c", source(1))
    await engine.wait_for_state("c", "RUNNING", tasks=1)
    await engine.delete_connector("c")
    await engine.append_record("connector-c", None)
    await engine.create_connector("d", source(1))
    await engine.wait_for_state("d", "RUNNING", tasks=1)
    assert CALLS.methods("c").count("deleted") == 1


async def test_a_deleted_connector_leaves_no_unit_behind(engine: Engine) -> None:
    for name in ("a", "b"):
        await engine.create_connector(name, source(2))
        await engine.wait_for_state(name, "RUNNING", tasks=2)
    await engine.delete_connector("a")
    await engine.append_record("target-state-b", None)  # a record that changes nothing for b
    await engine.delete_connector("b")
    await asyncio.sleep(0)
    assert engine.herder.live_actors == []


async def test_recreating_under_the_same_name_starts_clean(engine: Engine) -> None:
    await engine.create_connector("c", source(3))
    await engine.wait_for_state("c", "RUNNING", tasks=3)
    await engine.pause_connector("c")
    await engine.wait_for_state("c", "PAUSED", tasks=3)
    await engine.delete_connector("c")
    await engine.create_connector("c", source(1))
    status = await engine.wait_for_state("c", "RUNNING", tasks=1)
    assert status is not None
    assert len(status["tasks"]) == 1
    assert len(await engine.task_configs("c")) == 1


async def test_async_connectors_and_flagless_task_stops_work(engine: Engine) -> None:
    await engine.create_connector("c", {"connector.class": PROBE, "tasks.max": "1"})
    await engine.wait_for_state("c", "RUNNING", tasks=1)
    await engine.delete_connector("c")
    assert CALLS.methods("c") == ["start", "stop-without-flag", "stop", "deleted"]


async def test_offsets_survive_deletion_unless_the_reset_option_is_set(engine: Engine) -> None:
    offsets = engine.herder.offsets
    for name, reset in (("keep", "false"), ("drop", "true")):
        offsets.write(name, [({"file": "a"}, {"pos": 5})])
        await engine.create_connector(name, source(1, **{"offsets.reset.on.delete": reset}))
        await engine.delete_connector(name)
    assert offsets.get("keep", {"file": "a"}) == {"pos": 5}
    assert offsets.get("drop", {"file": "a"}) is None


async def test_a_deleted_call_nobody_waits_for_any_more_leaves_no_unretrieved_exception() -> None:
    """An abort cancels the actor while ``deleted()`` still runs (a crash inside it): when the call
    then raises, asyncio must not report an exception that was never retrieved (an error line)."""
    reported: list[dict[str, Any]] = []
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(lambda _loop, context: reported.append(context))
    release = asyncio.Event()

    class CrashingConnector(AsyncProbeConnector):
        async def deleted(self) -> None:
            await release.wait()
            raise SimulatedCrash("the worker crashed in connector.deleted")

    waiting = asyncio.ensure_future(
        run_deleted("c", CrashingConnector, {}, CrashingConnector(), MemoryOffsetStore(), timeout=30)
    )
    await asyncio.sleep(0.01)  # deleted() is running
    waiting.cancel()  # the actor, cancelled by the abort
    with contextlib.suppress(asyncio.CancelledError):
        await waiting
    release.set()
    await asyncio.sleep(0.01)  # deleted() raises with nobody waiting
    gc.collect()
    await asyncio.sleep(0)
    loop.set_exception_handler(None)
    assert [context["message"] for context in reported] == []
