"""An idle source's empty polls repeat where they ran, without a turn of its task loop each time.

An async ``poll`` that returns nothing is polled again in the same asyncio task; a sync one in its
thread while no other call waits for the task threads. What must not change: offsets and ``commit()``
on time while the polls return nothing, a pause or a stop that ends the polling (an async poll
cancelled, a sync one waited for), a failing poll, and task threads shared when they are short.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any, ClassVar

import pytest

from engine import Engine
from engine.api import ConnectException, RetriableException, SourceConnector, SourceRecord, SourceTask, Task
from engine.storage.offsets import MemoryOffsetStore
from engine.testing import eventually
from engine.topics.memory import MemoryTopics
from engine.worker.task_runner import TaskRunner

FAST = {"task.shutdown.graceful.timeout.ms": "2000", "offset.flush.interval.ms": "60000"}
IDLE_S = 0.002


class Idle:
    """What the idle tasks did, per connector (sync polls count from their threads)."""

    lock = threading.Lock()
    polls: ClassVar[Counter[str]] = Counter()
    commits: ClassVar[Counter[str]] = Counter()
    cancelled: ClassVar[Counter[str]] = Counter()
    threads: ClassVar[dict[str, set[int]]] = {}

    @classmethod
    def polled(cls, name: str) -> int:
        with cls.lock:
            cls.polls[name] += 1
            cls.threads.setdefault(name, set()).add(threading.get_ident())
            return cls.polls[name]

    @classmethod
    def clear(cls) -> None:
        for counter in (cls.polls, cls.commits, cls.cancelled):
            counter.clear()
        cls.threads.clear()


def first_batch(name: str, props: dict[str, str]) -> list[SourceRecord] | None:
    """One record on the first poll with ``first.record``; a failure from the poll ``fail.at`` names."""
    n = Idle.polled(name)
    if props.get("fail.at") == str(n):
        raise ConnectException(f"poll {n} failed")
    if props.get("retriable.at") == str(n):
        raise RetriableException(f"poll {n} may be retried")
    if n == 1 and props.get("first.record") == "true":
        return [SourceRecord(topic="idle", value="x", source_partition={"p": 0}, source_offset={"n": 1})]
    return None


class AsyncIdleTask(SourceTask):
    async def start(self, props: dict[str, str]) -> None:
        self.props = props
        self.begun = 0

    async def poll(self) -> list[SourceRecord] | None:
        self.begun += 1
        long = self.begun > int(self.props.get("long.after", "1000000000"))  # then a poll that waits long
        if self.props.get("busy") == "true":  # returns without ever giving the event loop a turn
            return first_batch(self.props["name"], self.props)
        try:
            await asyncio.sleep(60 if long else IDLE_S)
        except asyncio.CancelledError:
            Idle.cancelled[self.props["name"]] += 1
            raise
        return first_batch(self.props["name"], self.props)

    async def commit(self) -> None:
        Idle.commits[self.props["name"]] += 1

    async def stop(self, connector_deleted: bool = False) -> None:
        return None


class SyncIdleTask(SourceTask):
    def start(self, props: dict[str, str]) -> None:
        self.props = props

    def poll(self) -> list[SourceRecord] | None:
        time.sleep(IDLE_S)
        return first_batch(self.props["name"], self.props)

    def commit(self) -> None:
        with Idle.lock:
            Idle.commits[self.props["name"]] += 1

    def stop(self, connector_deleted: bool = False) -> None:
        return None


class IdleConnector(SourceConnector):
    def start(self, props: dict[str, str]) -> None:
        self.props = props

    def stop(self) -> None:
        return None

    def task_class(self) -> type[Task]:
        return SyncIdleTask if self.props.get("sync") == "true" else AsyncIdleTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props)]


IDLE = f"{__name__}.IdleConnector"
KINDS = pytest.mark.parametrize("sync", ["false", "true"], ids=["async", "sync"])


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    Idle.clear()
    yield
    Idle.clear()


@pytest.fixture
def parks(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How often each task's loop parked (once per turn of the loop while it waits in ``poll``)."""
    counted: Counter[str] = Counter()
    park_on = TaskRunner.park_on

    async def counting(self: TaskRunner, work: asyncio.Future[Any], timeout: float | None = None) -> str:
        counted[self.connector] += 1
        return await park_on(self, work, timeout)

    monkeypatch.setattr(TaskRunner, "park_on", counting)
    return counted


@KINDS
async def test_empty_polls_repeat_without_a_turn_of_the_task_loop(sync: str, parks: Counter[str]) -> None:
    async with Engine(FAST, topics=MemoryTopics()) as engine:
        await engine.create_connector("idle", {"connector.class": IDLE, "sync": sync})
        await engine.wait_for_state("idle", "RUNNING", tasks=1)
        await eventually(lambda: Idle.polls["idle"] >= 50)
        # before: one park (an asyncio.wait, a timer, a future) and a new asyncio task or thread hop per poll
        assert parks["idle"] <= 3, (parks["idle"], Idle.polls["idle"])


@KINDS
async def test_offsets_and_commit_stay_on_time_while_polls_return_nothing(sync: str) -> None:
    offsets = MemoryOffsetStore()
    worker = {**FAST, "offset.flush.interval.ms": "50"}
    async with Engine(worker, topics=MemoryTopics(), offset_store=offsets) as engine:
        config = {"connector.class": IDLE, "sync": sync, "first.record": "true"}
        await engine.create_connector("idle", config)
        await engine.wait_for_state("idle", "RUNNING", tasks=1)
        await eventually(lambda: offsets.get("idle", {"p": 0}) == {"n": 1})  # flushed while still running
        commits = Idle.commits["idle"]
        await eventually(lambda: Idle.commits["idle"] >= commits + 3)  # commit() every interval, nothing new
        assert Idle.polls["idle"] > 3


@KINDS
async def test_a_pause_ends_the_idle_polling_and_a_resume_starts_it_again(sync: str) -> None:
    async with Engine(FAST, topics=MemoryTopics()) as engine:
        await engine.create_connector("idle", {"connector.class": IDLE, "sync": sync})
        await engine.wait_for_state("idle", "RUNNING", tasks=1)
        await eventually(lambda: Idle.polls["idle"] >= 5)
        await engine.pause_connector("idle")
        await engine.wait_for_state("idle", "PAUSED", tasks=["PAUSED"])
        await engine.settled()
        paused_at = Idle.polls["idle"]
        await asyncio.sleep(20 * IDLE_S)
        assert Idle.polls["idle"] == paused_at  # no poll while paused (a sync one was waited for)
        await engine.resume_connector("idle")
        await engine.wait_for_state("idle", "RUNNING", tasks=1)
        await eventually(lambda: Idle.polls["idle"] >= paused_at + 5)


async def test_an_async_poll_that_waits_after_empty_ones_is_cancelled_by_a_pause() -> None:
    async with Engine(FAST, topics=MemoryTopics()) as engine:
        await engine.create_connector("idle", {"connector.class": IDLE, "long.after": "5"})
        await engine.wait_for_state("idle", "RUNNING", tasks=1)
        await eventually(lambda: Idle.polls["idle"] == 5)
        await engine.pause_connector("idle")
        await engine.wait_for_state("idle", "PAUSED", tasks=["PAUSED"])
        await eventually(lambda: Idle.cancelled["idle"] == 1)  # not waited for: its minute is not up


async def test_an_async_poll_that_returns_nothing_at_once_leaves_the_event_loop_its_turns() -> None:
    async with Engine(FAST, topics=MemoryTopics()) as engine:
        await engine.create_connector("busy", {"connector.class": IDLE, "busy": "true"})
        await engine.wait_for_state("busy", "RUNNING", tasks=1)
        await eventually(lambda: Idle.polls["busy"] >= 1000)
        await engine.create_connector("other", {"connector.class": IDLE})  # the engine still answers
        await engine.wait_for_state("other", "RUNNING", tasks=1)
        await engine.pause_connector("busy")
        await engine.wait_for_state("busy", "PAUSED", tasks=["PAUSED"])
        paused_at = Idle.polls["busy"]
        await asyncio.sleep(0.05)
        assert Idle.polls["busy"] == paused_at


@KINDS
async def test_a_stop_ends_the_idle_polling(sync: str) -> None:
    async with Engine(FAST, topics=MemoryTopics()) as engine:
        await engine.create_connector("idle", {"connector.class": IDLE, "sync": sync})
        await engine.wait_for_state("idle", "RUNNING", tasks=1)
        await eventually(lambda: Idle.polls["idle"] >= 5)
        outcome = await engine.delete_connector("idle")
        assert outcome.succeeded
        stopped_at = Idle.polls["idle"]
        await asyncio.sleep(20 * IDLE_S)
        assert Idle.polls["idle"] == stopped_at


@KINDS
async def test_a_failing_poll_after_empty_ones_fails_the_task_and_a_retriable_one_is_retried(
    sync: str,
) -> None:
    async with Engine(FAST, topics=MemoryTopics()) as engine:
        await engine.create_connector("retried", {"connector.class": IDLE, "sync": sync, "retriable.at": "5"})
        await engine.create_connector("failing", {"connector.class": IDLE, "sync": sync, "fail.at": "5"})
        await engine.wait_for_state("failing", "RUNNING", tasks=["FAILED"])
        status = await engine.connector_status("failing")
        assert "poll 5 failed" in status["tasks"][0]["trace"]
        await eventually(lambda: Idle.polls["retried"] >= 10)
        assert (await engine.connector_status("retried"))["tasks"][0]["state"] == "RUNNING"


async def test_idle_sync_tasks_share_the_task_threads_when_they_are_short() -> None:
    async with Engine({**FAST, "task.threads.max": "1"}, topics=MemoryTopics()) as engine:
        for name in ("one", "two"):
            await engine.create_connector(name, {"connector.class": IDLE, "sync": "true"})
        for name in ("one", "two"):
            await engine.wait_for_state(name, "RUNNING", tasks=1)
        # one thread: a task hands it back after each poll while the other waits for it
        await eventually(lambda: Idle.polls["one"] >= 10 and Idle.polls["two"] >= 10)
