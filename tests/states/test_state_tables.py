"""Every row of the connector and task transition tables (``states.connector``, ``states.task``), and
every non-row."""

from __future__ import annotations

import ast
import asyncio
import itertools
import logging
from pathlib import Path

import pytest

from states import ConnectorLifecycle, ConnectorState, IllegalTransition, TaskLifecycle, TaskState
from states.lifecycle import Lifecycle

C = ConnectorState
T = TaskState
LIVE_C = [s for s in C if s is not C.DESTROYED]
LIVE_T = [s for s in T if s is not T.DESTROYED]

# Written out from the spec, not copied from states/: a wrong table fails here.
CONNECTOR_EDGES = {
    **{(s, "start"): C.RUNNING for s in (C.UNASSIGNED, C.RESTARTING)},
    **{(s, "pause"): C.PAUSED for s in (C.RUNNING, C.UNASSIGNED, C.RESTARTING, C.STOPPED)},
    **{(s, "resume"): C.RUNNING for s in (C.PAUSED, C.STOPPED)},
    **{(s, "stop"): C.STOPPED for s in (C.RUNNING, C.PAUSED, C.FAILED, C.UNASSIGNED, C.RESTARTING)},
    **{(s, "fail"): C.FAILED for s in (C.UNASSIGNED, C.RUNNING, C.PAUSED, C.STOPPED, C.RESTARTING)},
    **{(s, "restart"): C.RESTARTING for s in LIVE_C},
    **{(s, "unassign"): C.UNASSIGNED for s in (C.RUNNING, C.PAUSED, C.STOPPED, C.FAILED, C.RESTARTING)},
    **{(s, "destroy"): C.DESTROYED for s in LIVE_C},
}
TASK_EDGES = {
    **{(s, "start"): T.RUNNING for s in (T.UNASSIGNED, T.RESTARTING)},
    **{(s, "pause"): T.PAUSED for s in (T.RUNNING, T.UNASSIGNED, T.RESTARTING)},
    (T.PAUSED, "resume"): T.RUNNING,
    **{(s, "fail"): T.FAILED for s in (T.UNASSIGNED, T.RUNNING, T.PAUSED, T.RESTARTING)},
    **{(s, "restart"): T.RESTARTING for s in LIVE_T},
    **{(s, "unassign"): T.UNASSIGNED for s in (T.RUNNING, T.PAUSED, T.FAILED, T.RESTARTING)},
    **{(s, "destroy"): T.DESTROYED for s in LIVE_T},
}
CONNECTOR_TRIGGERS = ["start", "pause", "resume", "stop", "fail", "restart", "unassign", "destroy"]
TASK_TRIGGERS = ["start", "pause", "resume", "stop", "fail", "restart", "unassign", "destroy"]


def _connector_in(state: ConnectorState) -> ConnectorLifecycle:
    lifecycle = ConnectorLifecycle("c")
    ConnectorLifecycle._machine.set_state(state, model=lifecycle)
    return lifecycle


def _task_in(state: TaskState) -> TaskLifecycle:
    lifecycle = TaskLifecycle("c", 0)
    TaskLifecycle._machine.set_state(state, model=lifecycle)
    return lifecycle


def state_of(lifecycle: Lifecycle[ConnectorState] | Lifecycle[TaskState]) -> str:
    return str(lifecycle.state)


@pytest.mark.parametrize(("source", "trigger"), list(itertools.product(LIVE_C, CONNECTOR_TRIGGERS)))
async def test_connector_table_row(source: ConnectorState, trigger: str) -> None:
    lifecycle = _connector_in(source)
    expected = CONNECTOR_EDGES.get((source, trigger))
    if expected is None:
        with pytest.raises(IllegalTransition) as info:
            await lifecycle.fire(trigger)
        assert (info.value.state, info.value.trigger) == (source.value, trigger)
        assert state_of(lifecycle) == source
    else:
        record = await lifecycle.fire(trigger)
        assert (record.from_state, record.to_state) == (source.value, expected.value)
        assert state_of(lifecycle) == expected


@pytest.mark.parametrize(("source", "trigger"), list(itertools.product(LIVE_T, TASK_TRIGGERS)))
async def test_task_table_row(source: TaskState, trigger: str) -> None:
    lifecycle = _task_in(source)
    expected = TASK_EDGES.get((source, trigger))
    if expected is None:
        with pytest.raises(IllegalTransition):
            await lifecycle.fire(trigger)
        assert state_of(lifecycle) == source
    else:
        record = await lifecycle.fire(trigger)
        assert (record.task, record.to_state) == (0, expected.value)


def test_tasks_have_no_stopped_state() -> None:
    assert "STOPPED" not in {s.value for s in TaskState}


@pytest.mark.parametrize("trigger", CONNECTOR_TRIGGERS)
async def test_destroyed_connector_accepts_no_trigger(trigger: str) -> None:
    lifecycle = ConnectorLifecycle("c")
    await lifecycle.fire("destroy")
    with pytest.raises(IllegalTransition):
        await lifecycle.fire(trigger)


async def test_entering_destroyed_runs_the_hook_once_and_releases_the_model() -> None:
    calls: list[str] = []

    async def hook() -> None:
        calls.append("deleted")

    lifecycle = ConnectorLifecycle("c", hook)
    machine = ConnectorLifecycle._machine
    assert lifecycle in machine.models
    await lifecycle.fire("destroy")
    with pytest.raises(IllegalTransition):
        await lifecycle.fire("destroy")  # a second tombstone must not re-run deletion
    assert calls == ["deleted"]
    assert lifecycle not in machine.models


async def test_a_destroy_cancelled_in_its_hook_raises_the_cancellation_and_logs_no_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An abort cancels an actor inside ``deleted()``: the cancellation comes back out of ``fire``, and
    transitions does not log it as an error raised while processing the trigger."""
    entered = asyncio.Event()

    async def hook() -> None:
        entered.set()
        await asyncio.Event().wait()

    lifecycle = ConnectorLifecycle("c", hook)
    firing = asyncio.ensure_future(lifecycle.fire("destroy"))
    await entered.wait()
    firing.cancel()
    with pytest.raises(asyncio.CancelledError):
        await firing
    assert lifecycle not in ConnectorLifecycle._machine.models
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []


async def test_illegal_transition_names_unit_state_and_trigger() -> None:
    lifecycle = TaskLifecycle("orders", 3)
    with pytest.raises(IllegalTransition, match="'resume' is not allowed from UNASSIGNED for orders-3"):
        await lifecycle.fire("resume")


def test_states_package_never_imports_engine() -> None:
    root = Path(__file__).resolve().parents[2] / "states"
    offenders = []
    for path in root.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{path.name}: {n}" for n in names if n == "engine" or n.startswith("engine.")]
    assert offenders == []
