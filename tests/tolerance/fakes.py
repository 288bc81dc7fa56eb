"""Fakes for the operator's injected time and for reporters; named as fakes so no one mistakes them."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from engine.tolerance import ErrorMetrics, ProcessingContext
from engine.topics import MemoryTopics
from engine.topics.base import ConsumedRecord


class FakeClock:
    """Monotonic seconds that move only when FakeSleep sleeps."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class FakeSleep:
    """Records every requested delay and advances the fake clock by it; optional hook after each."""

    def __init__(self, clock: FakeClock, after: Callable[[int], None] | None = None) -> None:
        self.clock = clock
        self.delays_ms: list[float] = []
        self.after = after

    async def __call__(self, seconds: float) -> None:
        self.delays_ms.append(round(seconds * 1000, 6))
        self.clock.now += seconds
        if self.after is not None:
            self.after(len(self.delays_ms))


class FakeReporter:
    """Keeps what it was given; raises ``fail`` if set."""

    def __init__(self, fail: BaseException | None = None) -> None:
        self.seen: list[tuple[ProcessingContext, str | None, BaseException | None]] = []
        self.fail = fail

    async def report(self, ctx: ProcessingContext, metrics: ErrorMetrics | None = None) -> None:
        self.seen.append((ctx, ctx.stage, ctx.error))
        if self.fail is not None:
            raise self.fail


class FailingOperation:
    """Raises the given errors in turn, then returns ``result``; counts calls."""

    def __init__(self, *errors: Exception, result: object = "ok") -> None:
        self.errors = list(errors)
        self.result = result
        self.calls = 0

    def __call__(self) -> object:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return self.result


@asynccontextmanager
async def memory_topics() -> AsyncIterator[MemoryTopics]:
    topics = MemoryTopics()
    await topics.open()
    try:
        yield topics
    finally:
        await topics.close()


async def consume_one(
    topics: MemoryTopics, topic: str, key: bytes, value: bytes, headers: tuple[tuple[str, bytes], ...] = ()
) -> ConsumedRecord:
    """Write one record and read it back through a real consumer: what a sink loop would hold."""
    await topics.create_topic(topic, 1)
    await topics.producer().send(topic, key, value, headers)
    return (await read_all(topics, topic, 1))[0]


async def read_all(topics: MemoryTopics, topic: str, count: int) -> list[ConsumedRecord]:
    consumer = await topics.consumer(f"reader-{topic}-{id(topics)}-{count}", [topic])
    records: list[ConsumedRecord] = []
    try:
        async with asyncio.timeout(10):
            while len(records) < count:
                records += await consumer.getmany(timeout_ms=100)
    finally:
        await consumer.close()
    return records
