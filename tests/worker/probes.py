"""Connectors the data-plane tests steer from outside: a source fed through a queue, a sink that
keeps what it is given and can be told to fail, rewind or hold back commits."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.api import (
    RecordMetadata,
    RetriableException,
    SinkConnector,
    SinkRecord,
    SourceConnector,
    SourceRecord,
    SourceTask,
    Task,
    TopicPartition,
)
from engine.api.task import SinkTask


@dataclass
class SourceProbe:
    """What one probe source connector's tasks were fed and did."""

    feed: asyncio.Queue[list[SourceRecord] | BaseException] = field(default_factory=asyncio.Queue)
    committed_records: list[tuple[Any, RecordMetadata | None]] = field(default_factory=list)
    commits: int = 0
    polls: int = 0
    starts: list[dict[str, Any] | None] = field(default_factory=list)


SOURCES: dict[str, SourceProbe] = defaultdict(SourceProbe)


def records(topic: str, values: list[Any], *, partition: str = "p0", start: int = 0) -> list[SourceRecord]:
    return [SourceRecord(topic=topic, value=v, source_partition={"part": partition},
                         source_offset={"n": start + i + 1}) for i, v in enumerate(values)]


class ProbeSourceTask(SourceTask):
    async def start(self, props: dict[str, str]) -> None:
        self.name = props["name"]
        self.probe = SOURCES[self.name]
        self.probe.starts.append(self.context.offset_storage_reader().offset({"part": "p0"}))

    async def poll(self) -> list[SourceRecord] | None:
        item = await self.probe.feed.get()
        self.probe.polls += 1
        if isinstance(item, BaseException):
            raise item
        return item

    async def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        self.probe.committed_records.append((record.value, metadata))

    async def commit(self) -> None:
        self.probe.commits += 1

    async def stop(self, connector_deleted: bool = False) -> None:
        return None


class ProbeSourceConnector(SourceConnector):
    async def start(self, props: dict[str, str]) -> None:
        self.props = props

    async def stop(self) -> None:
        return None

    async def task_class(self) -> type[Task]:  # type: ignore[override]  # user code may be async (docs/ARCHITECTURE.md, decision 7)
        return ProbeSourceTask

    async def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props)]


@dataclass
class SinkProbe:
    received: list[SinkRecord] = field(default_factory=list)
    puts: int = 0
    retriable_failures: int = 0  # raise RetriableException this many more times
    fail_with: BaseException | None = None
    fail_on_empty: bool = False
    opened: list[list[TopicPartition]] = field(default_factory=list)
    closed: list[list[TopicPartition]] = field(default_factory=list)
    flushed: list[dict[TopicPartition, int]] = field(default_factory=list)
    rewind: dict[TopicPartition, int] = field(default_factory=dict)
    hold_commits: bool = False
    request_commit: bool = False
    report_errant: bool = False
    errant_results: list[Any] = field(default_factory=list)
    retry_timeout_ms: int = 50
    tasks: list[ProbeSinkTask] = field(default_factory=list)


SINKS: dict[str, SinkProbe] = defaultdict(SinkProbe)


class ProbeSinkTask(SinkTask):
    async def start(self, props: dict[str, str]) -> None:
        self.probe = SINKS[props["name"]]
        self.probe.tasks.append(self)

    async def open(self, partitions: Collection[TopicPartition]) -> None:
        self.probe.opened.append(sorted(partitions))

    async def close(self, partitions: Collection[TopicPartition]) -> None:
        self.probe.closed.append(sorted(partitions))

    async def put(self, records: Collection[SinkRecord]) -> None:
        probe = self.probe
        probe.puts += 1
        if probe.fail_with is not None and (records or probe.fail_on_empty):
            raise probe.fail_with
        if probe.retriable_failures and records:
            probe.retriable_failures -= 1
            self.context.timeout(probe.retry_timeout_ms)
            raise RetriableException("not now")
        if probe.report_errant:
            reporter = self.context.errant_record_reporter()
            for record in records:
                if record.value == "bad":
                    probe.errant_results.append(reporter.report(record, ValueError("bad value")))
                    continue
                probe.received.append(record)
        else:
            probe.received.extend(records)
        if probe.request_commit and records:
            self.context.request_commit()
        if probe.rewind:
            self.context.offset(dict(probe.rewind))
            probe.rewind = {}

    async def flush(self, current_offsets: Mapping[TopicPartition, int]) -> None:
        self.probe.flushed.append(dict(current_offsets))

    async def pre_commit(self, current_offsets: Mapping[TopicPartition, int]) -> Mapping[TopicPartition, int]:
        if self.probe.hold_commits:
            return {}
        return await super().pre_commit(current_offsets)

    async def stop(self, connector_deleted: bool = False) -> None:
        return None


class ProbeSinkConnector(SinkConnector):
    async def start(self, props: dict[str, str]) -> None:
        self.props = props

    async def stop(self) -> None:
        return None

    async def task_class(self) -> type[Task]:  # type: ignore[override]  # user code may be async (docs/ARCHITECTURE.md, decision 7)
        return ProbeSinkTask

    async def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props) for _ in range(max_tasks)]


SOURCE = f"{__name__}.ProbeSourceConnector"
SINK = f"{__name__}.ProbeSinkConnector"
