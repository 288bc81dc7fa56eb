"""Buffers records in ``put``, publishes them exactly once in ``pre_commit``, rewinds in ``open``.

The manifests (``commit_log``) are the source of truth for what is written, not the consumer
group: ``pre_commit`` returns only offsets a manifest covers, and ``open`` seeks each partition
to just after its last manifest, after removing whatever a crash left half-done. So a record is
in Parquet exactly when its offset is below the partition's last manifest's ``next_offset``.
Every file operation is a supervised Spark job (``context.spark``), done through ``store``.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Collection, Mapping
from typing import Any

import structlog

from engine.api import SinkRecord, SinkTask, TopicIdentity, TopicPartition
from engine.connectors.spark_sink import commit_log
from engine.connectors.spark_sink.config import SparkSinkConfig
from engine.connectors.spark_sink.rows import schema_of, to_row
from engine.connectors.spark_sink.spark_runner import run_spark
from engine.connectors.spark_sink.store import OutputStore, is_connect, store_for
from engine.spark import SparkJobCancelled

log = structlog.get_logger(component="spark_sink")

VERSION = "2.0.0"
# where ``test.crash.at`` may kill the process, in the order a commit reaches them
CRASH_POINTS = ("put", "written", "manifested_one", "manifested")
CRASH_EXIT_CODE = 86

Entries = list[tuple[int, dict[str, Any]]]
Plan = list[tuple[TopicPartition, Entries, int]]


def _write_batch(
    spark: Any, target: str, rows: list[dict[str, Any]], by_partition: bool, partition_by: str | None
) -> None:
    """One Spark job writes the batch into its own directory; the writer's commit protocol publishes it.

    ``by_partition``: rows of several topic-partitions, split into ``__connect_tp=...`` directories by
    the writer (a batch of one partition is written straight into its directory: no sort, no extra
    column). ``overwrite``: the directory is this batch's alone, and a retried job (errors.retry.*)
    replaces a failed attempt's partial output. The schema is what Spark would infer (``schema_of``), found
    faster; the rows then need no second check against it (a classic session's ``verifySchema``: the
    Connect client has none, and warns when given one).
    """
    schema = schema_of(spark, rows)
    df = (
        spark.createDataFrame(rows, schema)
        if is_connect(spark)
        else spark.createDataFrame(rows, schema, verifySchema=False)
    )
    columns = [commit_log.TP_COLUMN] if by_partition else []
    if partition_by:
        if partition_by not in df.columns:  # no row of the batch has the field: all go to the null folder
            # a SQL string, not functions.lit: the same on classic and Connect sessions in any process
            df = df.selectExpr("*", f"CAST(NULL AS STRING) AS `{partition_by.replace('`', '``')}`")
        columns.append(partition_by)
    writer = df.write.mode("overwrite")
    if columns:
        writer = writer.partitionBy(*columns)
    writer.parquet(target)


def _name(tp: TopicPartition) -> str:
    return f"{tp.topic}-{tp.partition}"


class SparkParquetSinkTask(SinkTask):
    def version(self) -> str:
        return VERSION

    async def start(self, props: dict[str, str]) -> None:
        self._config = SparkSinkConfig.parse(props)
        self._store: OutputStore | None = None
        self._store_session: Any = None
        self._buffers: dict[TopicPartition, Entries] = {}
        self._seen: dict[TopicPartition, int] = {}  # next offset after the last record put since open/rewind
        self._durable: dict[TopicPartition, int] = {}  # next offset after the last manifest
        self._identities: dict[TopicPartition, TopicIdentity] = {}  # of the partitions' logs, for manifests
        self._buffered = 0
        self._crash_counts: dict[str, int] = {}
        self._log = log.bind(connector=self._config.connector, task=self._config.task_id)

    def _store_of(self, spark: Any) -> OutputStore:
        """The store on this session, made once per session (it may be rebuilt after a restart)."""
        if self._store is None or self._store_session is not spark:
            self._store, self._store_session = store_for(spark, self._config.path), spark
        return self._store

    async def open(self, partitions: Collection[TopicPartition]) -> None:
        """Recover the partitions (through Spark), then rewind the consumer to just after their manifests."""
        tps = sorted(partitions)
        if not tps:
            return

        identities = {
            (tp.topic, tp.partition): identity
            for tp in tps
            if (identity := self.context.identity(tp)) is not None
        }

        def recover(spark: Any) -> dict[tuple[str, int], commit_log.Recovered]:
            return commit_log.recover(
                self._store_of(spark), [(tp.topic, tp.partition) for tp in tps], identities
            )

        found = await run_spark(self.context, recover)
        for tp in tps:
            recovered = found.get((tp.topic, tp.partition))
            if recovered is not None and recovered.mismatch is not None:
                # the output's offsets are another log's (another cluster, an older topic of this
                # name): the engine warns, or fails the task (offsets.identity.mismatch=fail)
                self.context.identity_mismatch(tp, recovered.mismatched_offset or 0, recovered.mismatch)
        rewinds = {
            tp: offset
            for tp in tps
            if (recovered := found.get((tp.topic, tp.partition))) is not None
            and (offset := recovered.next_offset) is not None
        }
        for tp in tps:
            self._drop(tp)
        self._durable.update(rewinds)
        self._identities.update({tp: i for tp in tps if (i := self.context.identity(tp)) is not None})
        if rewinds:
            self.context.offset(rewinds)
        self._log.info(
            "spark_sink.opened",
            partitions=[_name(tp) for tp in tps],
            rewinds={_name(tp): o for tp, o in rewinds.items()},
        )

    async def put(self, records: Collection[SinkRecord]) -> None:
        """Only buffer, with the original offsets; redelivered records already covered are skipped."""
        if self.context.resets:
            self._forget_refused_positions()
        for record in records:
            tp = TopicPartition(
                record.original_topic or record.topic,
                record.original_kafka_partition
                if record.original_kafka_partition is not None
                else record.kafka_partition or 0,
            )
            offset = (
                record.original_kafka_offset
                if record.original_kafka_offset is not None
                else record.kafka_offset
            )
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
        plan: Plan = []
        for tp, current in sorted(current_offsets.items()):
            entries = [entry for entry in self._buffers.get(tp, []) if entry[0] < current]
            if tp not in self._seen or (current <= self._durable.get(tp, 0) and not entries):
                continue
            plan.append((tp, entries, current))
        if plan:
            try:
                await self._commit(plan)
            except SparkJobCancelled:
                # Pause or stop cancelled the commit: what it published is booked (``_manifested``), the
                # rest stays buffered, so a stop's final commit writes it (redelivery after a pause's
                # rewind is skipped as already seen). A cancel that came after the last manifest cut
                # nothing short: the batch is committed, and said so.
                if not all(self._durable.get(tp, -1) >= next_offset for tp, _entries, next_offset in plan):
                    raise
                self._log.info(
                    "spark_sink.batch_committed", rows=sum(len(e) for _tp, e, _n in plan), late_cancel=True
                )
            except BaseException:
                # the sink loop seeks back to the consumer's committed offsets: start buffering afresh
                for tp in current_offsets:
                    self._drop(tp)
                raise
        return {
            tp: self._durable[tp]
            for tp, current in current_offsets.items()
            if tp in self._durable and self._durable[tp] <= current
        }

    async def _commit(self, plan: Plan) -> None:
        """One supervised job: write the batch, then publish one manifest per partition."""
        batch_id = uuid.uuid4().hex[:16]
        batch = commit_log.batch_dir(self._config.connector, self._config.task_id, batch_id)
        with_rows = [(tp, entries) for tp, entries, _next in plan if entries]
        await run_spark(self.context, self._commit_job, plan, batch, batch_id, len(with_rows) > 1)
        self._log.info(
            "spark_sink.batch_committed",
            batch=batch_id,
            rows=sum(len(e) for _tp, e, _n in plan),
            offsets={_name(tp): next_offset for tp, _entries, next_offset in plan},
        )

    def _commit_job(self, spark: Any, plan: Plan, batch: str, batch_id: str, by_partition: bool) -> None:
        """In the job's thread: the data (one Spark write), then the manifests, each booked as it lands."""
        store = self._store_of(spark)
        rows: list[dict[str, Any]] = []
        for tp, entries, _next in plan:
            if by_partition:
                value = commit_log.tp_value(tp.topic, tp.partition)
                rows.extend({**row, commit_log.TP_COLUMN: value} for _offset, row in entries)
            else:
                rows.extend(row for _offset, row in entries)
        if rows:
            only = next(tp for tp, entries, _next in plan if entries)
            target = (
                batch if by_partition else f"{batch}/{commit_log.tp_dir_name(only.topic, only.partition)}"
            )
            _write_batch(spark, store.absolute(target), rows, by_partition, self._config.partition_by)
        self._crash("written")
        for tp, entries, next_offset in plan:
            first = entries[0][0] if entries else self._durable.get(tp, next_offset)
            paths = (f"{batch}/{commit_log.tp_dir_name(tp.topic, tp.partition)}",) if entries else ()
            manifest = commit_log.Manifest(
                topic=tp.topic,
                partition=tp.partition,
                first_offset=first,
                next_offset=next_offset,
                batch_id=batch_id,
                paths=paths,
                rows=len(entries),
                connector=self._config.connector,
                task=self._config.task_id,
                cluster_id=identity.cluster_id if (identity := self._identities.get(tp)) else "",
                topic_id=identity.topic_id if identity else "",
            )
            commit_log.write_manifest(store, manifest)
            self._manifested(tp, next_offset, len(entries))
            self._crash("manifested_one")
        self._crash("manifested")

    def _manifested(self, tp: TopicPartition, next_offset: int, written: int) -> None:
        """Book a published partition at once: a cancel later in the same job must not make it look unwritten."""
        self._durable[tp] = next_offset
        self._buffers[tp] = [entry for entry in self._buffers.get(tp, []) if entry[0] >= next_offset]
        self._buffered -= written

    def _forget_refused_positions(self) -> None:
        """The consumer was moved off a position this task rewound to (out of range on the broker, or
        another log's): what the manifests cover is no floor for what is read now."""
        for tp in list(self._durable):
            moved = self.context.reset_position(tp)
            if moved is not None:
                self._drop(tp)
                self._durable.pop(tp, None)
                self._log.warning("spark_sink.position_reset", partition=_name(tp), reads_from=moved)

    def _drop(self, tp: TopicPartition) -> None:
        self._buffered -= len(self._buffers.pop(tp, []))
        self._seen.pop(tp, None)

    async def close(self, partitions: Collection[TopicPartition]) -> None:
        """The loop has already committed what it could; what is left is uncommitted and re-read later."""
        for tp in partitions:
            self._drop(tp)
            self._durable.pop(tp, None)
            self._identities.pop(tp, None)

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
