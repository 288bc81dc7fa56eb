"""Connectors for the scale-out benchmark (bench/scale_out.py), run inside worker processes.

They talk to the benchmark through files in ``bench.dir``: the source tasks make their records as
they go (a batch of 1,000 per ``poll``) and send nothing until the file ``go`` exists; each sink task keeps ``assigned-<task>``
(its partitions) and ``count-<task>`` (records received, and when the last of them arrived)
current. Records are schema-less JSON-ready dicts; ``bench.records`` is the total over all tasks.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Collection
from pathlib import Path

from bench.data_connectors import FanOutConnector
from engine.api import (
    SinkConnector,
    SinkRecord,
    SinkTask,
    SourceConnector,
    SourceRecord,
    SourceTask,
    TopicPartition,
)

BATCH = 1000


def _write(path: Path, text: str) -> None:
    """Whole or not at all for a reader polling the file: write aside, then rename."""
    partial = path.with_suffix(".tmp")
    partial.write_text(text)
    os.replace(partial, path)


class GenSourceTask(SourceTask):
    """Makes its share of the records batch by batch, as a real source reads them."""

    async def start(self, props: dict[str, str]) -> None:
        self.go = Path(props["bench.dir"]) / "go"
        self.task, self.tasks = int(props["bench.task"]), int(props["bench.tasks"])
        self.total = int(props["bench.records"])
        self.partition = {"task": self.task}
        self.topic = props["bench.topic"]
        self.next = self.task  # record ids task, task + tasks, ...

    async def poll(self) -> list[SourceRecord] | None:
        if self.next >= self.total or not self.go.exists():
            await asyncio.sleep(0.02)
            return None
        ids = range(self.next, min(self.total, self.next + BATCH * self.tasks), self.tasks)
        self.next = ids[-1] + self.tasks
        topic, partition = self.topic, self.partition
        return [
            SourceRecord(
                topic=topic,
                value={"id": i, "name": f"customer-{i}", "amount": i * 1.25, "active": i % 2 == 0},
                source_partition=partition,
                source_offset={"i": i},
            )
            for i in ids
        ]

    async def stop(self, connector_deleted: bool = False) -> None:
        return None


class CountSinkTask(SinkTask):
    async def start(self, props: dict[str, str]) -> None:
        directory = Path(props["bench.dir"])
        task = props["bench.task"]
        self.assigned_file = directory / f"assigned-{task}"
        self.count_file = directory / f"count-{task}"
        self.assigned: set[TopicPartition] = set()
        self.count = 0

    async def open(self, partitions: Collection[TopicPartition]) -> None:
        self.assigned.update(partitions)
        _write(self.assigned_file, str(len(self.assigned)))

    async def close(self, partitions: Collection[TopicPartition]) -> None:
        self.assigned.difference_update(partitions)
        _write(self.assigned_file, str(len(self.assigned)))

    async def put(self, records: Collection[SinkRecord]) -> None:
        if records:
            self.count += len(records)
            _write(self.count_file, f"{self.count} {time.time()}")

    async def stop(self, connector_deleted: bool = False) -> None:
        return None


class GenSourceConnector(FanOutConnector, SourceConnector):
    task = GenSourceTask


class CountSinkConnector(FanOutConnector, SinkConnector):
    task = CountSinkTask


SOURCE = f"{__name__}.GenSourceConnector"
SINK = f"{__name__}.CountSinkConnector"
