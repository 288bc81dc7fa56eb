"""The connector and task transition tables (``states/``) as the running engine walks them."""

from __future__ import annotations

import pytest
from structlog.testing import capture_logs

from engine import ConfigError, ConnectorAlreadyExists, ConnectorNotFound, Engine, TaskNotFound
from engine.testing import CALLS, eventually
from tests.herder.conftest import SINK, source


async def test_create_starts_connector_then_its_tasks(engine: Engine) -> None:
    info = await engine.create_connector("c", source(2))
    assert info["type"] == "source"
    status = await engine.wait_for_state("c", "RUNNING", tasks=2)
    assert status is not None
    assert [t["id"] for t in status["tasks"]] == [0, 1]
    assert CALLS.methods("c", "connector") == ["initialize", "start", "task_configs"]
    assert CALLS.methods("c", "task-0") == ["initialize", "start"]
    assert (await engine.connector_info("c"))["tasks"] == [
        {"connector": "c", "task": 0},
        {"connector": "c", "task": 1},
    ]


async def test_sink_connector_tasks_get_topics_and_task_class(engine: Engine) -> None:
    await engine.create_connector("s", {"connector.class": SINK, "topics": "orders"})
    await engine.wait_for_state("s", "RUNNING", tasks=1)
    [task] = await engine.task_configs("s")
    assert task["config"]["topics"] == "orders"
    assert task["config"]["task.class"] == "engine.testing.recording.RecordingSinkTask"
    assert (await engine.connector_status("s"))["type"] == "sink"


@pytest.mark.parametrize("initial", ["PAUSED", "paused"])
async def test_create_paused_initializes_only_and_has_no_tasks(engine: Engine, initial: str) -> None:
    await engine.create_connector("c", source(2), initial_state=initial)
    await engine.wait_for_state("c", "PAUSED", tasks=0)
    assert CALLS.methods("c", "connector") == ["initialize"]
    assert await engine.task_configs("c") == []


async def test_create_stopped_then_resume_generates_tasks(engine: Engine) -> None:
    await engine.create_connector("c", source(2), initial_state="STOPPED")
    await engine.wait_for_state("c", "STOPPED", tasks=0)
    await engine.resume_connector("c")
    await engine.wait_for_state("c", "RUNNING", tasks=2)


async def test_initialize_failure_is_failed_and_never_started(engine: Engine) -> None:
    await engine.create_connector("c", {**source(), "test.fail.initialize": "true"})
    status = await engine.wait_for_state("c", "FAILED", tasks=0)
    assert status is not None
    assert "injected failure in connector.initialize" in status["connector"]["trace"]
    assert CALLS.methods("c") == ["initialize"]


async def test_start_failure_is_failed_with_trace_no_tasks_and_no_stop(engine: Engine) -> None:
    await engine.create_connector("c", {**source(), "test.fail.start": "true"})
    status = await engine.wait_for_state("c", "FAILED", tasks=0)
    assert status is not None
    assert "ConnectException" in status["connector"]["trace"]
    await engine.stop_connector("c")
    await engine.wait_for_state("c", "STOPPED")
    assert CALLS.methods("c") == ["initialize", "start"]


async def test_pause_stops_connector_and_pauses_tasks_without_task_callbacks(engine: Engine) -> None:
    await engine.create_connector("c", source(2))
    await engine.wait_for_state("c", "RUNNING", tasks=2)
    await engine.pause_connector("c")
    await engine.wait_for_state("c", "PAUSED", tasks=2)
    assert CALLS.methods("c", "connector")[-1] == "stop"
    assert CALLS.methods("c", "task-0") == ["initialize", "start"]


async def test_resume_restarts_the_same_instance_without_initialize(engine: Engine) -> None:
    await engine.create_connector("c", source(1))
    await engine.wait_for_state("c", "RUNNING", tasks=1)
    await engine.pause_connector("c")
    await engine.wait_for_state("c", "PAUSED", tasks=1)
    await engine.resume_connector("c")
    await engine.wait_for_state("c", "RUNNING", tasks=1)
    await eventually(lambda: CALLS.methods("c", "connector").count("task_configs") == 2)
    assert CALLS.methods("c", "connector") == [
        "initialize",
        "start",
        "task_configs",
        "stop",
        "start",
        "task_configs",
    ]
    assert CALLS.methods("c", "task-0") == ["initialize", "start"]  # same configs: tasks kept


async def test_stop_removes_tasks_with_plain_stop_and_resume_regenerates_them(engine: Engine) -> None:
    await engine.create_connector("c", source(2))
    await engine.wait_for_state("c", "RUNNING", tasks=2)
    await engine.stop_connector("c")
    await engine.wait_for_state("c", "STOPPED", tasks=0)
    assert await engine.task_configs("c") == []
    assert [c.args for c in CALLS.of("c", "task-0") if c.method == "stop"] == [{"connector_deleted": False}]
    await engine.pause_connector("c")
    await engine.wait_for_state("c", "PAUSED", tasks=0)
    await engine.resume_connector("c")
    await engine.wait_for_state("c", "RUNNING", tasks=2)


async def test_failed_connector_ignores_pause_and_resume(engine: Engine) -> None:
    await engine.create_connector("c", {**source(), "test.fail.start": "true"})
    await engine.wait_for_state("c", "FAILED")
    await engine.pause_connector("c")
    await engine.resume_connector("c")
    assert (await engine.connector_status("c"))["connector"]["state"] == "FAILED"


async def test_config_update_replaces_the_instance_and_restarts_tasks(engine: Engine) -> None:
    await engine.create_connector("c", source(1))
    await engine.wait_for_state("c", "RUNNING", tasks=1)
    await engine.put_connector_config("c", source(1, extra="1"))
    await eventually(lambda: CALLS.methods("c", "task-0").count("start") == 2)
    await engine.wait_for_state("c", "RUNNING", tasks=1)
    assert CALLS.methods("c", "connector") == [
        "initialize",
        "start",
        "task_configs",
        "stop",
        "initialize",
        "start",
        "task_configs",
    ]
    assert CALLS.methods("c", "task-0") == ["initialize", "start", "stop", "initialize", "start"]
    assert (await engine.connector_config("c"))["extra"] == "1"


async def test_task_count_change_destroys_removed_task_statuses(engine: Engine) -> None:
    await engine.create_connector("c", source(3))
    await engine.wait_for_state("c", "RUNNING", tasks=3)
    await engine.put_connector_config("c", source(1))
    await engine.wait_for_state("c", "RUNNING", tasks=1)


async def test_plain_restart_restarts_only_the_connector(engine: Engine) -> None:
    await engine.create_connector("c", source(1))
    await engine.wait_for_state("c", "RUNNING", tasks=1)
    assert await engine.restart_connector("c") is None
    await engine.wait_for_state("c", "RUNNING", tasks=1)
    assert CALLS.methods("c", "connector").count("initialize") == 2
    assert CALLS.methods("c", "task-0") == ["initialize", "start"]


async def test_restart_plan_restarts_only_failed_tasks(engine: Engine) -> None:
    await engine.create_connector("c", source(2, **{"test.fail.task.start": "true"}))
    await engine.wait_for_state("c", "RUNNING")
    await _wait_tasks(engine, "c", ["FAILED", "FAILED"])
    plan = await engine.restart_connector("c", include_tasks=True, only_failed=True)
    assert plan is not None
    assert plan["connector"]["state"] == "RUNNING"
    assert [t["state"] for t in plan["tasks"]] == ["RESTARTING", "RESTARTING"]
    await _wait_tasks(engine, "c", ["FAILED", "FAILED"])
    assert CALLS.methods("c", "task-0").count("start") == 2
    assert CALLS.methods("c", "connector").count("initialize") == 1


async def test_restart_plan_with_everything_goes_through_restarting(engine: Engine) -> None:
    await engine.create_connector("c", source(1))
    await engine.wait_for_state("c", "RUNNING", tasks=1)
    seen = engine.transitions()
    await engine.restart_connector("c", include_tasks=True)
    await engine.wait_for_state("c", "RUNNING", tasks=1)
    states: list[tuple[int | None, str]] = []
    while len(states) < 4:
        event = await anext(seen)
        states.append((event.task, event.to_state))
    assert states == [(None, "RESTARTING"), (0, "RESTARTING"), (None, "RUNNING"), (0, "RUNNING")]
    await seen.aclose()


async def test_task_start_failure_fails_the_task_alone_after_stop(engine: Engine) -> None:
    await engine.create_connector("c", source(1, **{"test.fail.task.start": "true"}))
    await _wait_tasks(engine, "c", ["FAILED"])
    status = await engine.task_status("c", 0)
    assert "injected failure in task-0.start" in status["trace"]
    assert CALLS.methods("c", "task-0") == ["initialize", "start", "stop"]
    assert (await engine.connector_status("c"))["connector"]["state"] == "RUNNING"


async def test_restart_task_gives_a_failed_task_a_new_instance(engine: Engine) -> None:
    await engine.create_connector("c", source(1, **{"test.block.task.start.ms": "0"}))
    await engine.wait_for_state("c", "RUNNING", tasks=1)
    await engine.restart_task("c", 0)
    await engine.wait_for_state("c", "RUNNING", tasks=1)
    assert CALLS.methods("c", "task-0") == ["initialize", "start", "stop", "initialize", "start"]
    with pytest.raises(TaskNotFound, match="Task c-5 not found"):  # Connect standalone's words
        await engine.restart_task("c", 5)


async def test_tasks_max_is_enforced(engine: Engine) -> None:
    await engine.create_connector("c", source(1, **{"test.task.count": "3"}))
    status = await engine.wait_for_state("c", "FAILED", tasks=0)
    assert status is not None
    assert "has generated 3 tasks, which is greater than 1" in status["connector"]["trace"]


async def test_tasks_max_enforce_false_only_warns(engine: Engine) -> None:
    with capture_logs() as logs:
        await engine.create_connector(
            "c", source(1, **{"test.task.count": "2", "tasks.max.enforce": "false"})
        )
        await engine.wait_for_state("c", "RUNNING", tasks=2)
    assert "connector.too_many_tasks" in [e["event"] for e in logs]


async def test_every_transition_logs_one_canonical_line(engine: Engine) -> None:
    with capture_logs() as logs:
        await engine.create_connector("c", source(1))
        await engine.wait_for_state("c", "RUNNING", tasks=1)
        await engine.pause_connector("c")
        await engine.wait_for_state("c", "PAUSED", tasks=1)
    lines = [e for e in logs if e["event"] in ("connector.state_changed", "task.state_changed")]
    assert {(e["event"], e["task"], e["trigger"], e["from_state"], e["to_state"]) for e in lines} == {
        ("connector.state_changed", None, "start", "UNASSIGNED", "RUNNING"),
        ("task.state_changed", 0, "start", "UNASSIGNED", "RUNNING"),
        ("task.state_changed", 0, "pause", "RUNNING", "PAUSED"),
        ("connector.state_changed", None, "pause", "RUNNING", "PAUSED"),
    }
    assert len(lines) == 4
    assert all(e["connector"] == "c" and e["worker"] == "127.0.0.1:8083" for e in lines)


async def test_unknown_connector_operations_raise_not_found(engine: Engine) -> None:
    for call in (
        engine.pause_connector,
        engine.resume_connector,
        engine.stop_connector,
        engine.delete_connector,
        engine.connector_info,
        engine.connector_config,
    ):
        with pytest.raises(ConnectorNotFound, match="Connector nope not found"):
            await call("nope")
    with pytest.raises(ConnectorNotFound, match="No status found for connector nope"):
        await engine.connector_status("nope")


async def test_creating_twice_raises_already_exists(engine: Engine) -> None:
    await engine.create_connector("c", source())
    with pytest.raises(ConnectorAlreadyExists, match="Connector c already exists"):
        await engine.create_connector("c", source())


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"tasks.max": "1"}, "contains no connector type"),
        ({"connector.class": "no.such.Connector"}, "Failed to find any class"),
        ({"connector.class": "builtins.dict"}, "Failed to find any class"),
        (source(0), "Value must be at least 1"),
        (source(1, **{"tasks.max.enforce": "maybe"}), "Expected value to be either true or false"),
        ({**source(1), "name": "other"}, "doesn't match connector name"),
    ],
)
async def test_bad_configs_are_rejected_before_anything_is_written(
    engine: Engine, config: dict[str, str], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        await engine.create_connector("c", config)
    assert await engine.connectors() == []


async def test_bad_initial_state_is_a_config_error(engine: Engine) -> None:
    with pytest.raises(ConfigError, match="Invalid initial state"):
        await engine.create_connector("c", source(), initial_state="SLEEPING")


async def test_malformed_records_are_skipped_counted_and_the_engine_keeps_going(engine: Engine) -> None:
    with capture_logs() as logs:
        await engine.append_record("connector-x", b"{not json")
        await engine.append_record("bogus-key", {"a": 1})
        await engine.append_record("commit-x", {"tasks": "many"})
        await engine.create_connector("c", source(1))
        await engine.wait_for_state("c", "RUNNING", tasks=1)
    assert engine.skipped_records == 3
    assert [e["key"] for e in logs if e["event"] == "configlog.record_skipped"] == [
        "connector-x",
        "bogus-key",
        "commit-x",
    ]


async def _wait_tasks(engine: Engine, name: str, states: list[str]) -> None:
    await engine.wait_for_state(name, "RUNNING", tasks=states)


@pytest.mark.parametrize(
    ("failing", "event"),
    [("test.fail.start", "connector.start_failed"), ("test.fail.task.start", "task.failed")],
)
async def test_a_start_failure_is_logged_at_error_level(engine: Engine, failing: str, event: str) -> None:
    """Connect logs a connector's and a task's start failure at ERROR: alerts on error lines see them."""
    with capture_logs() as logged:
        await engine.create_connector("c", source(1, **{failing: "true"}))
        await engine.wait_for_state("c", "FAILED" if event.startswith("connector") else "RUNNING")
        if not event.startswith("connector"):
            await _wait_tasks(engine, "c", ["FAILED"])
    (found,) = [e for e in logged if e["event"] == event]
    assert found["log_level"] == "error"
    assert found["connector"] == "c"
    assert "injected failure" in found["error"]
