"""Connectors for the data-plane benchmark (bench/data_plane.py).

The source task hands out pre-built ``SourceRecord`` batches (or, ``BuildingSourceConnector``, builds
each batch of 1,000 in ``poll()`` as a real connector does), then parks; the sink task counts
what ``put`` receives and marks the moment the last expected record arrived. Both are async, so
the measure is the engine's loops, not thread hops. Each run is keyed by ``bench.run`` in the
connector config, looked up in ``RUNS``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Collection
from dataclasses import dataclass, field

from engine.api import (
    SinkConnector,
    SinkRecord,
    SinkTask,
    SourceConnector,
    SourceRecord,
    SourceTask,
    Task,
    TopicPartition,
)

BATCH = 1000  # records a building source task makes per poll


@dataclass
class Run:
    """One measurement: what the source emits, and when the flow started and ended."""

    batches: list[list[SourceRecord]]
    expected: int
    partitions: int = 1  # the sink's topic partitions: the clock starts once all are assigned
    received: int = 0
    started: float = 0.0
    finished: float = 0.0
    assigned: asyncio.Event = field(default_factory=asyncio.Event)
    done: asyncio.Event = field(default_factory=asyncio.Event)
    opened: set[TopicPartition] = field(default_factory=set)
    build_topic: str | None = None  # set: the source builds its records in poll() (100-byte values)

    @property
    def seconds(self) -> float:
        return self.finished - self.started


RUNS: dict[str, Run] = {}


class BenchSourceTask(SourceTask):
    """Task ``i`` of ``n`` hands out batches ``i``, ``i + n``, ... of the run."""

    async def start(self, props: dict[str, str]) -> None:
        self.run = RUNS[props["bench.run"]]
        self.batches = self.run.batches[
            int(props.get("bench.task", "0")) :: int(props.get("bench.tasks", "1"))
        ]
        self.next = 0

    async def poll(self) -> list[SourceRecord] | None:
        run = self.run
        if self.next >= len(self.batches):
            await asyncio.get_running_loop().create_future()  # all handed out: park until stop cancels
        if not run.started:
            run.started = time.perf_counter()
        batch = self.batches[self.next]
        self.next += 1
        return batch

    async def stop(self, connector_deleted: bool = False) -> None:
        return None


class BuildingSourceTask(SourceTask):
    """Builds each batch of 100-byte records in ``poll()``, as a real connector does; task ``i`` of
    ``n`` builds batches ``i``, ``i + n``, ... of the run's ``expected`` records."""

    async def start(self, props: dict[str, str]) -> None:
        self.run = RUNS[props["bench.run"]]
        self.batch = int(props.get("bench.task", "0"))
        self.step = int(props.get("bench.tasks", "1"))
        self.partition = {"bench": "data-plane"}
        assert self.run.build_topic is not None
        self.topic: str = self.run.build_topic

    async def poll(self) -> list[SourceRecord] | None:
        run = self.run
        first = self.batch * BATCH
        if first >= run.expected:
            await asyncio.get_running_loop().create_future()  # all built: park until stop cancels
        if not run.started:
            run.started = time.perf_counter()
        self.batch += self.step
        topic, partition = self.topic, self.partition
        return [
            SourceRecord(
                topic=topic, value=(b"%010d" % i) * 10, source_partition=partition, source_offset={"i": i}
            )
            for i in range(first, min(first + BATCH, run.expected))
        ]

    async def stop(self, connector_deleted: bool = False) -> None:
        return None


class BenchSinkTask(SinkTask):
    async def start(self, props: dict[str, str]) -> None:
        self.run = RUNS[props["bench.run"]]

    async def open(self, partitions: Collection[TopicPartition]) -> None:
        self.run.opened.update(partitions)
        if len(self.run.opened) >= self.run.partitions:
            self.run.assigned.set()

    async def put(self, records: Collection[SinkRecord]) -> None:
        run = self.run
        run.received += len(records)
        if run.received >= run.expected and not run.done.is_set():
            run.finished = time.perf_counter()
            run.done.set()

    async def stop(self, connector_deleted: bool = False) -> None:
        return None


class FanOutConnector:
    """A connector whose ``max_tasks`` tasks each get its props plus its index and the task count."""

    task: type[Task]

    async def start(self, props: dict[str, str]) -> None:
        self.props = props

    async def stop(self) -> None:
        return None

    async def task_class(self) -> type[Task]:
        return self.task

    async def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{**self.props, "bench.task": str(i), "bench.tasks": str(max_tasks)} for i in range(max_tasks)]


class BenchSourceConnector(FanOutConnector, SourceConnector):
    task = BenchSourceTask


class BenchSinkConnector(FanOutConnector, SinkConnector):
    task = BenchSinkTask


class BuildingSourceConnector(FanOutConnector, SourceConnector):
    task = BuildingSourceTask


SOURCE = f"{__name__}.BenchSourceConnector"
SINK = f"{__name__}.BenchSinkConnector"
BUILDING_SOURCE = f"{__name__}.BuildingSourceConnector"
