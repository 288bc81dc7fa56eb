"""The durable file log: connectors and target states survive a restart, and so does a deletion
that a killed process left half done."""

from __future__ import annotations

from pathlib import Path

from engine import Engine
from engine.testing import CALLS
from tests.herder.conftest import FAST, source
from tests.killed_worker import calls_in, delete_in_a_worker_killed_inside_deleted


def durable(tmp_path: Path) -> dict[str, str]:
    return {
        **FAST,
        "config.storage.file.filename": str(tmp_path / "configs.log"),
        "offset.storage.file.filename": str(tmp_path / "offsets.log"),
    }


async def test_connectors_target_states_and_task_configs_survive_a_restart(tmp_path: Path) -> None:
    worker = durable(tmp_path)
    async with Engine(worker) as engine:
        await engine.create_connector("running", source(2))
        await engine.create_connector("paused", source(1))
        await engine.create_connector("stopped", source(1), initial_state="STOPPED")
        await engine.wait_for_state("paused", "RUNNING", tasks=1)
        await engine.pause_connector("paused")
        await engine.wait_for_state("paused", "PAUSED", tasks=1)
        await engine.wait_for_state("running", "RUNNING", tasks=2)
        task_configs = await engine.task_configs("running")
    CALLS.clear()

    async with Engine(worker) as engine:
        assert sorted(await engine.connectors()) == ["paused", "running", "stopped"]
        await engine.wait_for_state("running", "RUNNING", tasks=2)
        await engine.wait_for_state("paused", "PAUSED", tasks=1)
        await engine.wait_for_state("stopped", "STOPPED", tasks=0)
        assert await engine.task_configs("running") == task_configs
        assert (await engine.connector_config("paused"))["tasks.max"] == "1"
        # a paused connector comes back initialized but not started, as in Connect
        assert CALLS.methods("paused", "connector") == ["initialize"]
        assert "start" not in CALLS.methods("stopped")
        await engine.delete_connector("running")

    async with Engine(worker) as engine:
        assert sorted(await engine.connectors()) == ["paused", "stopped"]
        await engine.resume_connector("paused")
        await engine.wait_for_state("paused", "RUNNING", tasks=1)


async def test_changes_after_a_restart_are_durable_too(tmp_path: Path) -> None:
    worker = durable(tmp_path)
    async with Engine(worker) as engine:
        await engine.create_connector("c", source(1))
        await engine.wait_for_state("c", "RUNNING", tasks=1)
    async with Engine(worker) as engine:
        await engine.put_connector_config("c", source(2))
        await engine.wait_for_state("c", "RUNNING", tasks=2)
        await engine.stop_connector("c")
        await engine.wait_for_state("c", "STOPPED", tasks=0)
    async with Engine(worker) as engine:
        await engine.wait_for_state("c", "STOPPED", tasks=0)
        await engine.resume_connector("c")
        await engine.wait_for_state("c", "RUNNING", tasks=2)


async def test_a_worker_killed_inside_deleted_runs_it_again_after_restart(tmp_path: Path) -> None:
    worker = durable(tmp_path)
    record = tmp_path / "calls.jsonl"
    config = source(
        2,
        **{
            "test.exit.deleted": "true",
            "test.exit.once.file": str(tmp_path / "exited"),
            "test.record.file": str(record),
        },
    )
    await delete_in_a_worker_killed_inside_deleted(worker, config)
    before = calls_in(record)
    assert before[-1] == ("connector", "deleted")
    assert sorted(before[-4:-2]) == [("task-0", "stop"), ("task-1", "stop")]
    assert before[-2] == ("connector", "stop")

    async with Engine(worker) as engine:
        # the pending-cleanup record was never cleared: the recovered worker runs deleted() itself
        await engine.wait_for_state("doomed", "DESTROYED", timeout=10)
        assert await engine.connectors() == []
    assert calls_in(record)[len(before) :] == [("connector", "initialize"), ("connector", "deleted")]

    async with Engine(worker) as engine:
        assert await engine.connectors() == []
    assert len(calls_in(record)) == len(before) + 2  # the cleanup ran once more, then never again
