"""The durable file log: connectors and target states survive a restart, and so does a deletion
that a killed process left half done."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from pathlib import Path

from engine import Engine
from engine.testing import CALLS
from tests.lifecycle.conftest import FAST, source

KILLED_EXIT_CODE = 9  # what test.exit.<callback> exits with


def durable(tmp_path: Path) -> dict[str, str]:
    return {**FAST, "config.storage.file.filename": str(tmp_path / "configs.log"),
            "offset.storage.file.filename": str(tmp_path / "offsets.log")}


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


# Runs in a child process so that os._exit inside deleted() kills a whole worker, not the test.
KILLED_DURING_DELETION = textwrap.dedent("""
    import asyncio, json, sys
    from engine import Engine

    async def main(worker, config):
        async with Engine(worker) as engine:
            await engine.create_connector("doomed", config)
            await engine.wait_for_state("doomed", "RUNNING", tasks=2)
            await engine.delete_connector("doomed")  # deleted() exits the process

    asyncio.run(main(json.loads(sys.argv[1]), json.loads(sys.argv[2])))
    sys.exit("deletion returned: the process should have been killed in deleted()")
""")


def calls_in(record: Path) -> list[tuple[str, str]]:
    lines = record.read_text().splitlines() if record.exists() else []
    return [(call["unit"], call["method"]) for call in map(json.loads, lines)]


async def test_a_worker_killed_inside_deleted_runs_it_again_after_restart(tmp_path: Path) -> None:
    worker = durable(tmp_path)
    record = tmp_path / "calls.jsonl"
    config = source(2, **{"test.exit.deleted": "true", "test.exit.once.file": str(tmp_path / "exited"),
                          "test.record.file": str(record)})
    child = await asyncio.to_thread(
        subprocess.run, [sys.executable, "-c", KILLED_DURING_DELETION, json.dumps(worker), json.dumps(config)],
        capture_output=True, text=True, timeout=60, check=False)
    assert child.returncode == KILLED_EXIT_CODE, child.stderr
    before = calls_in(record)
    assert before[-1] == ("connector", "deleted")
    assert sorted(before[-4:-2]) == [("task-0", "stop"), ("task-1", "stop")]
    assert before[-2] == ("connector", "stop")

    async with Engine(worker) as engine:
        # the pending-cleanup record was never cleared: the recovered worker runs deleted() itself
        await engine.wait_for_state("doomed", "DESTROYED", timeout=10)
        assert await engine.connectors() == []
    assert calls_in(record)[len(before):] == [("connector", "initialize"), ("connector", "deleted")]

    async with Engine(worker) as engine:
        assert await engine.connectors() == []
    assert len(calls_in(record)) == len(before) + 2  # the cleanup ran once more, then never again
