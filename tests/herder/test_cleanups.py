"""Deletion that cannot hurt the living: incarnations, tracked late callbacks, retried failures.

Each creation of a name is an incarnation with an id every reader of the log agrees on. A
``deleted()`` that fails or passes its timeout is reported, retried with backoff and listed; one
still running keeps the name from being created again, so an old incarnation's cleanup never runs
beside a new incarnation's ``start()``.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine import Engine
from engine.errors import CleanupPending
from engine.storage.offsets import MemoryOffsetStore
from engine.testing import eventually
from tests.herder.cleanup_probes import STEERING, Steering, probe
from tests.herder.conftest import FAST

RETRYING = {**FAST, "connector.deleted.retry.backoff.ms": "100", "connector.deleted.max.retries": "3"}


@pytest.fixture(autouse=True)
def _steering() -> Iterator[Steering]:
    STEERING.__init__()  # type: ignore[misc]  # a fresh steering per test, same object for the probes
    yield STEERING
    STEERING.release.set()  # no thread left waiting after the test


def _cleanup_of(engine: Engine, name: str) -> dict[str, object] | None:
    return next((c for c in engine.connector_cleanups() if c["connector"] == name), None)


async def test_each_creation_is_a_new_incarnation_that_restarts_keep(tmp_path: Path) -> None:
    worker = {**FAST, "config.storage.file.filename": str(tmp_path / "configs.log")}
    async with Engine(worker) as engine:
        await engine.create_connector("orders", probe())
        await engine.wait_for_state("orders", "RUNNING", tasks=1)
        await engine.put_connector_config(
            "orders", probe(**{"some.setting": "2"})
        )  # an update: same incarnation
        await engine.wait_for_state("orders", "RUNNING", tasks=1)
        first = engine.herder.snapshot.incarnations["orders"]
    async with Engine(worker) as engine:  # a restart reads the same id back from the log
        await engine.wait_for_state("orders", "RUNNING", tasks=1)
        assert engine.herder.snapshot.incarnations["orders"] == first
        assert (await engine.delete_connector("orders")).incarnation == first
        await engine.create_connector("orders", probe())
        await engine.wait_for_state("orders", "RUNNING", tasks=1)
        second = engine.herder.snapshot.incarnations["orders"]
    assert second != first
    assert int(second) > int(first)  # log offsets only grow
    # the connector, its task and its deleted() saw their own incarnation through their contexts
    assert STEERING.seen("start") == [first, first, first, second]
    assert set(STEERING.seen("task.start")) == {first, second}
    assert STEERING.seen("deleted.begin") == [first]


async def test_a_failing_deleted_is_reported_retried_with_backoff_and_then_succeeds() -> None:
    STEERING.failures_left = 2
    async with Engine(RETRYING) as engine:
        await engine.create_connector("leaky", probe())
        await engine.wait_for_state("leaky", "RUNNING", tasks=1)
        outcome = await engine.delete_connector("leaky")
        assert (outcome.succeeded, outcome.will_retry, outcome.attempt) == (False, True, 1)
        assert "the database said no" in (outcome.error or "")
        assert await engine.connectors() == []  # gone from the API at once
        listed = _cleanup_of(engine, "leaky")
        assert listed is not None
        assert listed["incarnation"] == outcome.incarnation
        assert listed["attempts"] == 1
        assert "the database said no" in str(listed["last_error"])
        await eventually(lambda: _cleanup_of(engine, "leaky") is None, timeout=10, message="cleanup done")
        assert "leaky" not in engine.herder.snapshot.pending_cleanups  # the record is cleared in the log
        assert STEERING.seen("deleted.begin") == [outcome.incarnation] * 3
        text = engine.metrics.render()
        assert 'connect_engine_connector_cleanup_attempts_total{outcome="failed"} 2.0' in text
        assert 'connect_engine_connector_cleanup_attempts_total{outcome="succeeded"} 1.0' in text
        assert "connect_engine_connector_cleanups_pending 0.0" in text


async def test_a_cleanup_that_keeps_failing_gives_up_and_frees_the_name() -> None:
    STEERING.failures_left = 100
    async with Engine({**RETRYING, "connector.deleted.max.retries": "1"}) as engine:
        await engine.create_connector("leaky", probe())
        await engine.wait_for_state("leaky", "RUNNING", tasks=1)
        await engine.delete_connector("leaky")
        await eventually(
            lambda: (_cleanup_of(engine, "leaky") or {}).get("state") == "GAVE_UP",
            timeout=10,
            message="given up",
        )
        assert _cleanup_of(engine, "leaky") is not None
        assert _cleanup_of(engine, "leaky")["attempts"] == 2  # type: ignore[index]
        await eventually(
            lambda: "leaky" not in engine.herder.snapshot.pending_cleanups,
            timeout=5,
            message="record cleared",
        )
        STEERING.failures_left = 0
        await engine.create_connector("leaky", probe())  # the name is free again
        await engine.wait_for_state("leaky", "RUNNING", tasks=1)
        assert "connect_engine_connector_cleanups_given_up_total 1.0" in engine.metrics.render()


async def test_a_deleted_past_its_timeout_keeps_the_name_until_its_thread_returns() -> None:
    """The thread variant of the lock-held cleanup: nothing new of the name starts beside it."""
    STEERING.block = True
    async with Engine({**FAST, "connector.deleted.timeout.ms": "300"}) as engine:
        await engine.create_connector("z", probe())
        await engine.wait_for_state("z", "RUNNING", tasks=1)
        outcome = await engine.delete_connector("z")
        assert (outcome.succeeded, outcome.timed_out) == (False, True)
        assert _cleanup_of(engine, "z")["state"] == "LINGERING"  # type: ignore[index]
        with pytest.raises(CleanupPending, match="still being cleaned up"):
            await engine.create_connector("z", probe())  # waits connector.deleted.timeout.ms, then 409
        recreate = asyncio.ensure_future(engine.create_connector("z", probe()))
        await asyncio.sleep(0.1)
        assert not recreate.done()  # still waiting for the old cleanup
        STEERING.release.set()  # the old deleted() returns: late, but it did clean up
        await recreate
        await engine.wait_for_state("z", "RUNNING", tasks=1)
        assert _cleanup_of(engine, "z") is None
        assert 'outcome="succeeded_late"} 1' in engine.metrics.render()
    ended = next(
        t for what, _, inc, t in STEERING.events if what == "deleted.end" and inc == outcome.incarnation
    )
    new_start = next(
        t for what, _, inc, t in STEERING.events if what == "start" and inc != outcome.incarnation
    )
    assert ended < new_start


async def test_recreating_while_the_first_attempt_runs_waits_then_proceeds() -> None:
    STEERING.block = True
    async with Engine({**FAST, "connector.deleted.timeout.ms": "5000"}) as engine:
        await engine.create_connector("z", probe())
        await engine.wait_for_state("z", "RUNNING", tasks=1)
        deleting = asyncio.ensure_future(engine.delete_connector("z"))
        await eventually(lambda: STEERING.seen("deleted.begin"), message="deleted() running")
        recreate = asyncio.ensure_future(engine.create_connector("z", probe()))
        await asyncio.sleep(0.2)
        assert not recreate.done()
        STEERING.release.set()
        assert (await deleting).succeeded
        await recreate
        await engine.wait_for_state("z", "RUNNING", tasks=1)
    assert [what for what, *_ in STEERING.events] == [
        "start",
        "task.start",
        "deleted.begin",
        "deleted.end",
        "start",
        "task.start",
    ]


KILLED_BETWEEN_RETRIES = textwrap.dedent("""
    import asyncio, json, sys
    from engine import Engine
    from tests.herder.cleanup_probes import probe

    async def main(worker, marker):
        async with Engine(worker) as engine:
            await engine.create_connector("leaky", probe(**{"probe.fail.while.exists": marker}))
            await engine.wait_for_state("leaky", "RUNNING", tasks=1)
            outcome = await engine.delete_connector("leaky")
            print("OUTCOME", json.dumps({"succeeded": outcome.succeeded, "will_retry": outcome.will_retry,
                              "incarnation": outcome.incarnation}), flush=True)
            await asyncio.sleep(3600)  # waiting for the retry: killed here

    asyncio.run(main(json.loads(sys.argv[1]), sys.argv[2]))
""")


async def test_a_worker_killed_between_retries_retries_after_it_restarts(tmp_path: Path) -> None:
    worker = {
        **RETRYING,
        "connector.deleted.retry.backoff.ms": "600000",  # no retry before the kill
        "config.storage.file.filename": str(tmp_path / "configs.log"),
        "status.storage.file.filename": str(tmp_path / "status.log"),
    }
    marker = tmp_path / "database-is-locked"
    marker.touch()
    child = subprocess.Popen(
        [sys.executable, "-c", KILLED_BETWEEN_RETRIES, json.dumps(worker), str(marker)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    try:
        assert child.stdout is not None
        line = ""
        while not line.startswith("OUTCOME "):  # the child's log lines come first
            line = await asyncio.to_thread(child.stdout.readline)
            assert line, "the child worker ended before its deletion answered"
        first = json.loads(line.removeprefix("OUTCOME "))
        assert (first["succeeded"], first["will_retry"]) == (False, True)
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        if child.stdout is not None:
            child.stdout.close()
    marker.unlink()  # the database would let the cleanup through now
    async with Engine({**worker, "connector.deleted.retry.backoff.ms": "100"}) as engine:
        # the restarted worker runs the pending cleanup of that incarnation at boot
        await eventually(
            lambda: "leaky" not in engine.herder.snapshot.pending_cleanups,
            timeout=10,
            message="the pending cleanup ran and was cleared",
        )
        assert engine.connector_cleanups() == []
        await engine.create_connector("leaky", probe())
        await engine.wait_for_state("leaky", "RUNNING", tasks=1)
        assert engine.herder.snapshot.incarnations["leaky"] != first["incarnation"]


@pytest.mark.parametrize("late", [False, True])
async def test_a_cleanup_that_succeeds_late_removes_the_offsets_as_one_on_time_does(late: bool) -> None:
    """``offsets.reset.on.delete=true``: the source's offsets go with a successful cleanup, also when
    ``deleted()`` passed its timeout and then returned cleanly (before, they stayed behind)."""
    store = MemoryOffsetStore()
    STEERING.block = late
    async with Engine({**FAST, "connector.deleted.timeout.ms": "300"}, offset_store=store) as engine:
        await engine.create_connector("z", probe(**{"offsets.reset.on.delete": "true"}))
        await engine.wait_for_state("z", "RUNNING", tasks=1)
        store.write("z", [({"table": "orders"}, {"id": 41})])
        assert store.partitions("z") == [{"table": "orders"}]
        outcome = await engine.delete_connector("z")
        assert (outcome.succeeded, outcome.timed_out) == (not late, late)
        if late:
            assert store.partitions("z") == [{"table": "orders"}]  # not yet: deleted() still runs
            STEERING.release.set()  # it returns: late, but it did clean up
            await eventually(lambda: _cleanup_of(engine, "z") is None, timeout=10, message="cleanup done")
            await eventually(
                lambda: "z" not in engine.herder.snapshot.pending_cleanups,
                timeout=5,
                message="pending record cleared",
            )
        assert store.partitions("z") == []
        await engine.create_connector("z", probe())  # a re-created connector starts with no offsets
        await engine.wait_for_state("z", "RUNNING", tasks=1)
        assert (await engine.connector_offsets("z")) == {"offsets": []}


async def test_a_cleanup_that_succeeds_on_a_retry_removes_the_offsets() -> None:
    store = MemoryOffsetStore()
    STEERING.failures_left = 1
    async with Engine(RETRYING, offset_store=store) as engine:
        await engine.create_connector("r", probe(**{"offsets.reset.on.delete": "true"}))
        await engine.wait_for_state("r", "RUNNING", tasks=1)
        store.write("r", [({"table": "orders"}, {"id": 7})])
        outcome = await engine.delete_connector("r")
        assert (outcome.succeeded, outcome.will_retry) == (False, True)
        assert store.partitions("r") == [{"table": "orders"}]  # a failed attempt keeps them
        await eventually(lambda: _cleanup_of(engine, "r") is None, timeout=10, message="the retry succeeded")
        assert store.partitions("r") == []
