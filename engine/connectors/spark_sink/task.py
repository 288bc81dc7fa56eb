"""Buffers records in ``put``, publishes them exactly once in ``pre_commit``, rewinds in ``open``.

The manifests (``commit_log``) are the source of truth for what is written, not the consumer
group: ``pre_commit`` returns only offsets a manifest covers, and ``open`` seeks each partition
to just after its last manifest, after deleting whatever a crash left half-done. So a record is
in Parquet exactly when its offset is below the partition's last manifest's ``next_offset``.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import uuid
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

import structlog

from engine.api import SinkRecord, SinkTask, TopicPartition
from engine.connectors.spark_sink import commit_log
from engine.connectors.spark_sink.config import SparkSinkConfig
from engine.connectors.spark_sink.rows import to_row
from engine.connectors.spark_sink.spark_runner import run_spark
from engine.spark import SparkJobCancelled

log = structlog.get_logger(component="spark_sink")

VERSION = "1.0.0"
# where ``test.crash.at`` may kill the process, in the order a commit reaches them
CRASH_POINTS = ("put", "staged", "moved_one", "moved", "manifested_one", "manifested")
CRASH_EXIT_CODE = 86
_PART_COLUMN = "__connect_batch_part"  # Spark partitions the staging output by it: one folder per topic-partition


def _write_staging(spark: Any, rows: list[dict[str, Any]], target: str, partition_by: str | None) -> None:
    """Runs in Spark's worker thread: one job writes every partition's rows, split into folders.

    ``overwrite``: the folder is this batch's alone, and a retried job (errors.retry.*) must be able
    to replace a failed attempt's partial output.
    """
    df = spark.createDataFrame(rows)
    columns = [_PART_COLUMN]
    if partition_by:
        if partition_by not in df.columns:  # no row of the batch has the field: all go to the null folder
            from pyspark.sql.functions import lit

            df = df.withColumn(partition_by, lit(None).cast("string"))
        columns.append(partition_by)
    df.write.mode("overwrite").partitionBy(*columns).parquet(target)


def _name(tp: TopicPartition) -> str:
    return f"{tp.topic}-{tp.partition}"


class SparkParquetSinkTask(SinkTask):
    def version(self) -> str:
        return VERSION

    async def start(self, props: dict[str, str]) -> None:
        self._config = SparkSinkConfig.parse(props)
        self._root = Path(self._config.path)
        self._staging = commit_log.staging_dir(self._root, self._config.connector, self._config.task_id)
        self._buffers: dict[TopicPartition, list[tuple[int, dict[str, Any]]]] = {}
        self._seen: dict[TopicPartition, int] = {}  # next offset after the last record put since open/rewind
        self._durable: dict[TopicPartition, int] = {}  # next offset after the last manifest
        self._buffered = 0
        self._crash_counts: dict[str, int] = {}
        self._log = log.bind(connector=self._config.connector, task=self._config.task_id)

    async def open(self, partitions: Collection[TopicPartition]) -> None:
        """Recover the partitions on disk, then rewind the consumer to just after their manifests."""
        tps = sorted(partitions)
        if not tps:
            return

        def recover() -> tuple[dict[str, int], dict[TopicPartition, int | None]]:
            removed = commit_log.recover(self._root, [(tp.topic, tp.partition) for tp in tps], self._staging)
            return removed, {tp: commit_log.next_offset(self._root, tp.topic, tp.partition) for tp in tps}

        removed, found = await asyncio.to_thread(recover)
        rewinds = {tp: offset for tp, offset in found.items() if offset is not None}
        for tp in tps:
            self._drop(tp)
        self._durable.update(rewinds)
        if rewinds:
            self.context.offset(rewinds)
        self._log.info("spark_sink.opened", partitions=[_name(tp) for tp in tps],
                       rewinds={_name(tp): o for tp, o in rewinds.items()}, removed=removed)

    async def put(self, records: Collection[SinkRecord]) -> None:
        """Only buffer, with the original offsets; redelivered records already covered are skipped."""
        for record in records:
            tp = TopicPartition(record.original_topic or record.topic,
                                record.original_kafka_partition if record.original_kafka_partition is not None
                                else record.kafka_partition or 0)
            offset = record.original_kafka_offset if record.original_kafka_offset is not None else record.kafka_offset
            floor = self._seen.get(tp, self._durable.get(tp, 0))
            if offset < floor:
                continue
            self._seen[tp] = offset + 1
            row = to_row(record.value)
            if row is None:
                continue  # a tombstone: nothing to write, but its offset is covered by the next manifest
            self._buffers.setdefault(tp, []).append((offset, row))
            self._buffered += 1
        self._crash("put")
        if self._buffered >= self._config.flush_records:
            self.context.request_commit()

    async def pre_commit(self, current_offsets: Mapping[TopicPartition, int]) -> dict[TopicPartition, int]:
        """Publish the buffered rows of these partitions, then return the offsets manifests cover."""
        plan: list[tuple[TopicPartition, list[tuple[int, dict[str, Any]]], int]] = []
        for tp, current in sorted(current_offsets.items()):
            entries = [entry for entry in self._buffers.get(tp, []) if entry[0] < current]
            if tp not in self._seen or (current <= self._durable.get(tp, 0) and not entries):
                continue
            plan.append((tp, entries, current))
        if plan:
            try:
                await self._commit(plan)
            except SparkJobCancelled:
                # Pause or stop cancelled the write, and only the write can be: nothing was published.
                # The buffers stay, so a stop's final commit writes them (redelivery after a pause's
                # rewind is skipped as already seen).
                raise
            except BaseException:
                # the sink loop seeks back to the consumer's committed offsets: start buffering afresh
                for tp in current_offsets:
                    self._drop(tp)
                raise
        return {tp: self._durable[tp] for tp, current in current_offsets.items()
                if tp in self._durable and self._durable[tp] <= current}

    async def _commit(self, plan: list[tuple[TopicPartition, list[tuple[int, dict[str, Any]]], int]]) -> None:
        batch_id = uuid.uuid4().hex[:16]
        staged = self._staging / batch_id
        rows = [{**row, _PART_COLUMN: index} for index, (_tp, entries, _next) in enumerate(plan)
                for _offset, row in entries]
        try:
            if rows:
                await run_spark(self.context, _write_staging, rows, str(staged), self._config.partition_by)
            self._crash("staged")
            publishing = asyncio.ensure_future(asyncio.to_thread(self._publish, plan, staged, batch_id))
            try:
                await asyncio.shield(publishing)
            except asyncio.CancelledError:  # the thread cannot stop: let its short file steps finish first
                await asyncio.wait((publishing,))
                raise
        finally:
            await asyncio.to_thread(shutil.rmtree, staged, True)
        self._log.info("spark_sink.batch_committed", batch=batch_id, rows=len(rows),
                       offsets={_name(tp): next_offset for tp, _entries, next_offset in plan})

    def _publish(self, plan: list[tuple[TopicPartition, list[tuple[int, dict[str, Any]]], int]], staged: Path,
                 batch_id: str) -> None:
        """Per partition: move its staged files into place, then append its manifest (the commit)."""
        for index, (tp, entries, next_offset) in enumerate(plan):
            first = entries[0][0] if entries else self._durable.get(tp, next_offset)
            files: list[str] = []
            if entries:
                folder = staged / f"{_PART_COLUMN}={index}"
                files = commit_log.publish(self._root, folder, tp.topic, tp.partition, first, batch_id,
                                           on_moved=lambda: self._crash("moved_one"))
                self._crash("moved")
            manifest = commit_log.Manifest(topic=tp.topic, partition=tp.partition, first_offset=first,
                                           next_offset=next_offset, batch_id=batch_id, files=tuple(files),
                                           rows=len(entries), connector=self._config.connector,
                                           task=self._config.task_id)
            commit_log.write_manifest(self._root, manifest)
            self._durable[tp] = next_offset
            written = len(entries)
            self._buffers[tp] = [entry for entry in self._buffers.get(tp, []) if entry[0] >= next_offset]
            self._buffered -= written
            self._crash("manifested_one")
        self._crash("manifested")

    def _drop(self, tp: TopicPartition) -> None:
        self._buffered -= len(self._buffers.pop(tp, []))
        self._seen.pop(tp, None)

    async def close(self, partitions: Collection[TopicPartition]) -> None:
        """The loop has already committed what it could; what is left is uncommitted and re-read later."""
        for tp in partitions:
            self._drop(tp)
            self._durable.pop(tp, None)

    async def stop(self, connector_deleted: bool = False) -> None:
        self._buffers.clear()
        self._seen.clear()
        self._buffered = 0

    def _crash(self, point: str) -> None:
        """TEST HOOK: ``test.crash.at=<point>[:<n>]`` exits the process at the n-th visit of ``point``."""
        spec = self._config.crash_at
        if not spec:
            return
        name, _, nth = spec.partition(":")
        if name != point:
            return
        self._crash_counts[point] = self._crash_counts.get(point, 0) + 1
        if self._crash_counts[point] >= int(nth or 1):
            self._log.warning("spark_sink.test_crash", point=point)
            os._exit(CRASH_EXIT_CODE)
