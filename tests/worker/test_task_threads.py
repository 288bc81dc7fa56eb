"""Synchronous tasks' ``poll()`` runs on the engine's task threads (``task.threads.max``), apart from
the threads that run connectors' lifecycle calls.

Before, every sync call shared the loop's default executor (min(32, cores + 4) threads): as many
tasks blocked in ``poll()`` as it had threads, and no connector could start, stop or be deleted.
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any, ClassVar

import pytest

from engine import Engine
from engine.api import SourceConnector, SourceRecord, SourceTask, Task
from engine.errors import ConfigError
from engine.testing import eventually

FAST = {"task.shutdown.graceful.timeout.ms": "1000"}


class BlockingTask(SourceTask):
    """A sync task whose ``poll()`` blocks until the test opens ``GATE`` (a read with no timeout)."""

    GATE = threading.Event()
    POLLS: ClassVar[Counter[str]] = Counter()  # connector -> poll() calls that got a thread

    def start(self, props: dict[str, str]) -> None:
        self.connector = props["connector"]

    def poll(self) -> list[SourceRecord] | None:
        BlockingTask.POLLS[self.connector] += 1
        BlockingTask.GATE.wait()
        return None

    def stop(self, connector_deleted: bool = False) -> None:
        return None


class BlockingConnector(SourceConnector):
    """Sync throughout, as most connectors are written: every call runs on a thread."""

    def start(self, props: dict[str, str]) -> None:
        self.name = props["name"]

    def stop(self) -> None:
        return None

    def task_class(self) -> type[Task]:
        return BlockingTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{"connector": self.name}]


BLOCKING = f"{__name__}.BlockingConnector"


@pytest.fixture(autouse=True)
def _closed_gate() -> Any:
    BlockingTask.GATE.clear()
    BlockingTask.POLLS.clear()
    yield
    BlockingTask.GATE.set()  # no thread is left blocked past the test


async def test_connectors_start_and_stop_while_more_tasks_block_in_poll_than_the_default_executor_has_threads() -> (
    None
):
    blocked = 40  # more than the default executor's most (32) on any machine
    async with Engine(FAST) as engine:
        for n in range(blocked):
            await engine.create_connector(f"blocked-{n}", {"connector.class": BLOCKING})
        await eventually(lambda: len(BlockingTask.POLLS) == blocked, timeout=60, message="every task polling")
        # every poll() holds a thread; a new connector's sync start()/task_configs() still get theirs
        await engine.create_connector("late", {"connector.class": BLOCKING})
        await engine.wait_for_state("late", "RUNNING", tasks=1, timeout=60)
        await engine.delete_connector("blocked-0")  # stop() and deleted() also run on threads
        assert "blocked-0" not in await engine.connectors()
        BlockingTask.GATE.set()


async def test_a_poll_still_waiting_for_a_task_thread_is_dropped_on_pause() -> None:
    async with Engine({**FAST, "task.threads.max": "2"}) as engine:
        for n in range(5):
            await engine.create_connector(f"c{n}", {"connector.class": BLOCKING})
            await engine.wait_for_state(f"c{n}", "RUNNING", tasks=1)
        # two polls hold the two task threads; the other three wait for one
        await eventually(lambda: sum(BlockingTask.POLLS.values()) == 2, message="two polls running")
        waiting = [f"c{n}" for n in range(5) if BlockingTask.POLLS[f"c{n}"] == 0]
        assert len(waiting) == 3
        for name in waiting:  # a queued poll is dropped: the pause does not wait for a thread
            await engine.pause_connector(name)
            await engine.wait_for_state(name, "PAUSED", tasks=1)
        BlockingTask.GATE.set()
        for n in range(5):
            await engine.pause_connector(f"c{n}")
            await engine.wait_for_state(f"c{n}", "PAUSED", tasks=1)
        # the dropped polls never ran, not even once the threads came free
        assert [BlockingTask.POLLS[name] for name in waiting] == [0, 0, 0]


@pytest.mark.parametrize("value", ["0", "-1", "many"])
def test_task_threads_max_must_be_a_positive_whole_number(value: str) -> None:
    with pytest.raises(ConfigError, match=r"Invalid value .* for configuration task\.threads\.max"):
        Engine({"task.threads.max": value})
