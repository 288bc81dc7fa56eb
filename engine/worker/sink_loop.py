"""The sink task loop (Connect's ``WorkerSinkTask``).

Each iteration: commit if due or requested, apply the task's rewinds, read a batch (waiting at
most until the next commit), convert and transform it, and ``put`` it, even when empty, as
Connect does. ``put`` raising ``RetriableException`` pauses every partition and redelivers the
same batch after ``context.timeout(ms)`` (else at the next commit time). Pausing the connector
pauses the consumer but keeps the assignment; rebalances call ``close`` then ``open``.

The consumer group is ``connect-<connector>`` (``consumer.override.group.id`` changes it).
Offsets given to ``pre_commit``/``flush`` and committed are original (pre-SMT) coordinates.
"""

from __future__ import annotations

import asyncio
import inspect
import re
import time
from collections.abc import Callable, Mapping
from functools import partial, wraps
from typing import Any

import structlog

from engine.api._invoke import invoke_task_call
from engine.api.context import SinkTaskContext
from engine.api.errors import ConnectException, RetriableException
from engine.api.identity import TopicIdentity
from engine.api.records import Header, SinkRecord
from engine.api.records import TopicPartition as ApiTopicPartition
from engine.api.task import SinkTask
from engine.converters.bytearray import ByteArrayConverter
from engine.data.schema import Schema, SchemaAndValue
from engine.spark import SparkJobCancelled
from engine.tolerance import (
    DeadLetterQueueReporter,
    ProcessingContext,
    Stage,
    make_errant_reporter,
    open_dead_letter_queue,
)
from engine.topics.base import (
    IDENTITY_MISMATCH,
    ConsumedRecord,
    Consumer,
    OffsetReset,
    OwnProducer,
    TopicPartition,
)
from engine.topics.errors import TopicsError
from engine.worker.offset_identity import FAIL, OFFSETS_IDENTITY_MISMATCH, mismatch_policy
from engine.worker.task_loop import TaskLoop
from states import TargetState

log = structlog.get_logger(component="worker")

_REBALANCE_POLL_S = 0.005


class _Withheld(Exception):
    """``put`` was not called: this worker was cut off from its group (``TaskLoop.withheld``)."""


def _api(tp: TopicPartition) -> ApiTopicPartition:
    return ApiTopicPartition(tp.topic, tp.partition)


def _own(tp: ApiTopicPartition | tuple[str, int]) -> TopicPartition:
    if isinstance(tp, ApiTopicPartition):
        return TopicPartition(tp.topic, tp.partition)
    return TopicPartition(*tp)


_SINK_FIELDS = (
    "topic",
    "kafka_partition",
    "key_schema",
    "key",
    "value_schema",
    "value",
    "timestamp",
    "headers",
    "kafka_offset",
    "timestamp_type",
    "original_topic",
    "original_kafka_partition",
    "original_kafka_offset",
)
_SETTERS = tuple(getattr(SinkRecord, name).__set__ for name in _SINK_FIELDS)
assert set(_SINK_FIELDS) == set(SinkRecord.__dataclass_fields__)  # a new field needs a setter here


def _sink_record(
    topic: str,
    partition: int,
    key_schema: Any,
    key: Any,
    value_schema: Any,
    value: Any,
    timestamp: int,
    headers: tuple[Header, ...],
    offset: int,
) -> SinkRecord:
    """``SinkRecord(...)`` for a consumed record, as the constructor builds it (original coordinates
    too), by its slots: a frozen dataclass's ``__init__`` costs about three times as much, once
    per record read."""
    record = _new(SinkRecord)
    (
        s_topic,
        s_partition,
        s_key_schema,
        s_key,
        s_value_schema,
        s_value,
        s_timestamp,
        s_headers,
        s_offset,
        s_timestamp_type,
        s_original_topic,
        s_original_partition,
        s_original_offset,
    ) = _SETTERS
    s_topic(record, topic)
    s_partition(record, partition)
    s_key_schema(record, key_schema)
    s_key(record, key)
    s_value_schema(record, value_schema)
    s_value(record, value)
    s_timestamp(record, timestamp)
    s_headers(record, headers)
    s_offset(record, offset)
    s_timestamp_type(record, "CreateTime")
    s_original_topic(record, topic)
    s_original_partition(record, partition)
    s_original_offset(record, offset)
    return record


_new = object.__new__


def _refusal(reset: OffsetReset, policy: str) -> str:
    """Why a task fails on a stored position it may not apply."""
    where = f"{reset.tp.topic}-{reset.tp.partition}"
    if reset.reason == IDENTITY_MISMATCH and reset.stored is not None and reset.live is not None:
        what = (
            f"The stored offset {reset.position} of {where} was stored for {reset.stored}, "
            f"but the topic read now is {reset.live}"
        )
    else:
        what = f"The stored offset {reset.position} of {where} is out of range on the broker"
    if policy == FAIL:
        how = (
            f"{OFFSETS_IDENTITY_MISMATCH}=fail leaves it untouched: alter or reset the connector's offsets "
            f"(PATCH or DELETE /connectors/<name>/offsets), or set {OFFSETS_IDENTITY_MISMATCH}=reset"
        )
    else:
        how = f"auto.offset.reset={reset.reset} does not move it: set it to earliest or latest"
    return f"{what}. {how}"


def group_id(connector: str, config: Mapping[str, str]) -> str:
    return config.get("consumer.override.group.id") or f"connect-{connector}"


class SinkLoop(TaskLoop):
    task: SinkTask
    kind = "sink"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._dlq: DeadLetterQueueReporter | None = None
        super().__init__(*args, **kwargs)
        self._put = self._put_while_it_runs_here()
        assert isinstance(self.task_context, SinkTaskContext)
        self.context: SinkTaskContext = self.task_context
        self.consumer: Consumer | None = None
        # consumer.override.* (and producer./admin.override.* for the DLQ): clients of the connector's own
        self._client = self.plane.connector_clients("consumer", self.config)
        self._dlq_clients = (
            (
                self.plane.connector_clients("producer", self.config),
                self.plane.connector_clients("admin", self.config),
            )
            if self.policy.dlq_topic
            else (None, None)
        )
        self._dlq_producer: OwnProducer | None = None
        self._current: dict[TopicPartition, int] = {}  # next offset to read, after delivery
        self._committed: dict[TopicPartition, int] = {}
        self._batch: list[SinkRecord] = []
        self._batch_offsets: dict[TopicPartition, int] = {}
        self._redelivering = False
        self._paused = False
        self._listener_error: BaseException | None = None
        self._in_rebalance = False
        # put, commits and rebalance callbacks never interleave: aiokafka runs callbacks on its own
        # task, while Connect runs them on the task thread, between calls
        self._task_lock = asyncio.Lock()
        self._interval = self.plane.settings.offset_flush_interval_s
        self._next_commit = time.monotonic() + self._interval
        self._max_records = (
            int(self._client.get("max_poll_records", self.plane.settings.max_poll_records))
            if self._client is not None
            else self.plane.settings.max_poll_records
        )
        self._consumed: dict[tuple[str, int, int], ConsumedRecord] = {}
        self.errant = None  # only with somewhere to report to (and then the DLQ topic is made at open)
        if self.policy.dlq_topic.strip() or self.policy.log_enable:
            self.errant = make_errant_reporter(
                self.policy, self.operator, lookup=self._lookup, task_class=type(self.task)
            )
        self.context.set_errant_record_reporter(self.errant)
        self._mismatch = mismatch_policy(self.config)  # offsets.identity.mismatch
        self.context.set_identity_mismatch_handler(self._task_identity_mismatch)

    def _reporters(self) -> list[Any]:
        reporters = super()._reporters()
        if self.policy.dlq_topic:
            self._dlq = DeadLetterQueueReporter(
                self.plane.producer(), self.policy, self.connector, self.task_id
            )
            reporters.append(self._dlq)
        return reporters

    def _lookup(self, record: SinkRecord) -> ConsumedRecord | None:
        return self._consumed.get(
            (
                record.original_topic or record.topic,
                record.original_kafka_partition or 0,
                record.original_kafka_offset or 0,
            )
        )

    # ---- start and stop -----------------------------------------------------------------------

    async def open(self) -> None:
        topics = await self._subscription()
        if self._dlq is not None:
            producer_client, admin_client = self._dlq_clients
            if producer_client is None:  # the worker's shared producer: started now, its failure this task's
                await self.plane.open_producer(self.config)
            try:
                self._dlq_producer = await open_dead_letter_queue(
                    self.plane.topics, self.policy, self._dlq, producer_client, admin_client
                )
            except TopicsError as exc:
                raise self.plane.client_failure("producer", self.config, exc) from exc
        try:
            self.consumer = await self.plane.topics.consumer(
                group_id(self.connector, self.config),
                topics,
                on_assign=self._on_assign,
                on_revoke=self._on_revoke,
                client_config=self._client,
            )
        except TopicsError as exc:
            raise self.plane.client_failure("consumer", self.config, exc) from exc

    async def _subscription(self) -> list[str]:
        """``topics``, or the existing topics ``topics.regex`` matches in full (Java's ``matches``).

        A regex is resolved when the task starts: topics created later are picked up at the next
        restart of the task, not while it runs, unlike Kafka's pattern subscription.
        """
        topics = [t.strip() for t in self.config.get("topics", "").split(",") if t.strip()]
        regex = self.config.get("topics.regex", "").strip()
        if topics or not regex:
            if not topics:
                raise ConnectException("Sink tasks need one of 'topics' or 'topics.regex'")
            return topics
        try:
            pattern = re.compile(regex)
        except re.error as exc:
            raise ConnectException(f"Invalid topics.regex '{regex}': {exc}") from exc
        matched = [t for t in await self.plane.topics.list_topics() if pattern.fullmatch(t)]
        if not matched:
            raise ConnectException(
                f"No existing topic matches topics.regex '{regex}'; create the topics, then restart the task"
            )
        return matched

    async def close(self, failed: bool) -> None:
        """Commit and close every owned partition, then leave the group."""
        consumer = self.consumer
        if consumer is None:
            if self._dlq_producer is not None:
                await self._dlq_producer.close()
            return
        try:
            async with self._task_lock:
                owned = consumer.assignment()
                if owned:  # after a failure too: only what put() accepted is in the committed offsets
                    await self._commit(closing=True)
                    await self._close_partitions(owned)
        finally:
            await consumer.close()
            if self._dlq_producer is not None:
                await self._dlq_producer.close()

    # ---- rebalance listener -------------------------------------------------------------------

    async def _on_assign(self, tps: frozenset[TopicPartition]) -> None:
        self._in_rebalance = True
        try:
            async with self._task_lock:
                await self._assigned(tps)
        except Exception as exc:  # rethrown from the next read, as Connect's listener does
            self._listener_error = exc
        finally:
            self._in_rebalance = False

    async def _assigned(self, tps: frozenset[TopicPartition]) -> None:
        """Record positions, re-apply pauses, then ``open`` and the pending rewinds (Connect's order)."""
        consumer = self.consumer
        if consumer is None:
            return
        for tp in tps:
            position = await consumer.position(tp)
            self._current[tp] = position
            self._committed[tp] = position
            identity = await consumer.identity(tp.topic)
            if identity is not None:
                self.context.identities[_api(tp)] = identity
        self.context.assigned = {_api(tp) for tp in tps}
        self.context.paused &= self.context.assigned
        if self._paused or self._redelivering:
            consumer.pause(tps)
        elif self.context.paused:
            consumer.pause([_own(tp) for tp in self.context.paused])
        if tps:
            await invoke_task_call(self.task.open, sorted(self.context.assigned))
        self._apply_rewinds()

    async def _on_revoke(self, tps: frozenset[TopicPartition]) -> None:
        self._in_rebalance = True
        try:
            async with self._task_lock:
                await self._commit(closing=True, only=tps)
                await self._close_partitions(tps)
        except Exception as exc:
            self._listener_error = exc
        finally:
            self._in_rebalance = False

    async def _close_partitions(self, tps: frozenset[TopicPartition]) -> None:
        try:
            await invoke_task_call(self.task.close, sorted(_api(tp) for tp in tps))
        finally:
            for tp in tps:
                self._current.pop(tp, None)
                self._committed.pop(tp, None)
            gone = {(tp.topic, tp.partition) for tp in tps}
            self._batch = [
                r for r in self._batch if (r.original_topic, r.original_kafka_partition) not in gone
            ]
            self._batch_offsets = {tp: o for tp, o in self._batch_offsets.items() if tp not in tps}
            self.context.assigned -= {_api(tp) for tp in tps}
            self.context.paused -= {_api(tp) for tp in tps}
            for tp in tps:
                self.context.identities.pop(_api(tp), None)
                self.context.resets.pop(_api(tp), None)

    # ---- the loop -----------------------------------------------------------------------------

    async def execute(self) -> None:
        control = self.control
        while not control.stopping():
            await self._iteration()

    async def _iteration(self) -> None:
        consumer = self.consumer
        assert consumer is not None
        if self.context.commit_requested or time.monotonic() >= self._next_commit:
            async with self._task_lock:
                await self._commit(closing=False)
        self._apply_target(consumer)
        self._apply_rewinds()
        if self.pacer is not None and not self._paused:
            await self.pace(lambda: self._next_commit - time.monotonic(), self._timed_commit)
            if self.control.stopping():
                return
        timeout = max(0.0, self._next_commit - time.monotonic())
        if self.context.timeout_ms is not None and self.context.timeout_ms > 0:
            timeout = min(timeout, self.context.timeout_ms / 1000)
            self.context.timeout_ms = None
        records = await self._read(consumer, timeout)
        self._truncated(consumer)
        self._moved_out_of_range(consumer)
        if records:
            self.counters.sink_record_read += len(records)
            if self.pacer is not None:  # what was read is what put() gets (filtered records count too)
                self.pacer.spend(
                    len(records),
                    sum(len(r.key or b"") + len(r.value or b"") for r in records)
                    if self.pacer.counts_bytes
                    else 0,
                )
        if self._listener_error is not None:
            error, self._listener_error = self._listener_error, None
            raise ConnectException("Exiting WorkerSinkTask due to unrecoverable exception.") from error
        if self.control.stopping():
            return
        if not self._redelivering:
            await self._convert(records)
        if await self.withheld():
            return
        async with self._task_lock:
            await self._deliver(consumer)

    def _moved_out_of_range(self, consumer: Consumer) -> None:
        """Positions not applied, already moved by ``auto.offset.reset``: answered out of range by the
        log (and logged by the consumer, ``topics.offset_out_of_range``), or committed for another log
        (another cluster, an older topic of the same name: ``task.offsets_identity_mismatch``). The next
        commit starts from where it reads now, and the task learns it (``SinkTaskContext.reset_position``);
        with ``offsets.identity.mismatch=fail`` the task fails instead, its stored offsets left as they
        were. Only the log decides "out of range"; a log end seen last (which lags a leader change)
        never does."""
        refused: list[OffsetReset] = []
        for reset in consumer.offset_resets():
            tp = reset.tp
            if reset.reason == IDENTITY_MISMATCH and reset.stored is not None and reset.live is not None:
                self._log_identity_mismatch(tp, reset.position, reset.stored, reset.live, reset.reset)
            if self._mismatch == FAIL or reset.reset not in ("earliest", "latest"):
                refused.append(reset)
                continue
            if tp in self._current:
                if reset.reset_to >= 0:
                    self._current[tp] = reset.reset_to
                self.context.resets[_api(tp)] = self._current[tp]
        if refused:
            for reset in refused:  # the final commit leaves their stored offsets alone
                self._current.pop(reset.tp, None)
                self._committed.pop(reset.tp, None)
            raise ConnectException(_refusal(refused[0], self._mismatch))

    def _log_identity_mismatch(
        self, tp: TopicPartition, offset: int, stored: TopicIdentity, live: TopicIdentity, reset: str
    ) -> None:
        log.warning(
            "task.offsets_identity_mismatch",
            connector=self.connector,
            task=self.task_id,
            partition=f"{tp.topic}-{tp.partition}",
            offset=offset,
            stored_cluster_id=stored.cluster_id,
            stored_topic_id=stored.topic_id,
            cluster_id=live.cluster_id,
            topic_id=live.topic_id,
            action=FAIL if self._mismatch == FAIL else f"reset to {reset}",
        )

    def _task_identity_mismatch(
        self, api_tp: ApiTopicPartition, offset: int, stored: TopicIdentity, live: TopicIdentity
    ) -> None:
        """A position the task keeps itself (``SinkTaskContext.identity_mismatch``), not applied."""
        tp = _own(api_tp)
        reset = str((self._client or {}).get("auto_offset_reset", "earliest"))
        self._log_identity_mismatch(tp, offset, stored, live, reset)
        if self._mismatch == FAIL:
            raise ConnectException(
                _refusal(OffsetReset(tp, offset, reset, -1, IDENTITY_MISMATCH, stored, live), FAIL)
            )

    def _truncated(self, consumer: Consumer) -> None:
        """Partitions whose log diverged below the position (Kafka leader epochs, KIP-320): the
        consumer already reads again from the divergence point; what was delivered past it is
        delivered again, and the next commit goes back to it."""
        for found in consumer.truncations():
            tp = found.tp
            log.warning(
                "task.log_truncated",
                task=self.task_id,
                partition=f"{tp.topic}-{tp.partition}",
                position=found.position,
                diverged_at=found.diverged_at,
                redelivered=found.redelivered,
            )
            self.counters.log_truncations += 1
            self.counters.truncation_redelivered += found.redelivered
            if tp in self._current:
                self._current[tp] = min(self._current[tp], found.diverged_at)

    def _apply_target(self, consumer: Consumer) -> None:
        paused = self.control.target is not TargetState.STARTED
        if paused == self._paused:
            return
        self._paused = paused
        owned = consumer.assignment()
        if paused:
            consumer.pause(owned)
            self.context.request_commit()
        elif not self._redelivering:
            consumer.resume([tp for tp in owned if _api(tp) not in self.context.paused])
        self.control.set_paused(paused)

    def _apply_rewinds(self) -> None:
        consumer = self.consumer
        if consumer is None or not self.context.rewinds:
            return
        rewinds, self.context.rewinds = self.context.rewinds, {}
        for api_tp, offset in rewinds.items():
            tp = _own(api_tp)
            if tp not in self._current:
                log.warning(
                    "task.rewind_ignored", task=self.task_id, partition=str(tp), reason="not assigned"
                )
                continue
            consumer.seek(tp, offset)
            self._current[tp] = offset
            self._batch = [r for r in self._batch if (r.original_topic, r.original_kafka_partition) != tp]

    async def _timed_commit(self) -> None:
        async with self._task_lock:
            await self._commit(closing=False)

    async def _read(self, consumer: Consumer, timeout: float) -> list[ConsumedRecord]:
        """Records available now, else wait (parked) until some arrive, a wake, or ``timeout``."""
        most = self._max_records if self.pacer is None else self.pacer.records_cap(self._max_records)
        records = await consumer.getmany(0, most)
        if records or timeout <= 0:
            return records
        work = asyncio.ensure_future(consumer.getmany(int(timeout * 1000), most))
        control = self.control
        try:
            while not work.done():
                if await control.park_on(work) == "woken":
                    while self._in_rebalance and not work.done():  # noqa: ASYNC110 - never cut a rebalance short
                        await asyncio.sleep(_REBALANCE_POLL_S)
                    work.cancel()
                    await asyncio.wait((work,))
        except asyncio.CancelledError:
            work.cancel()
            raise
        if work.cancelled():
            return []
        return work.result()

    async def _convert(self, records: list[ConsumedRecord]) -> None:
        """Convert, build and transform each record; offsets and topic tracking once per batch.

        Fast paths: ``ByteArrayConverter`` needs no call per record, a chain without SMTs is skipped.
        """
        if not records:
            return
        converters = self.converters
        key_converter, value_converter = converters.key, converters.value
        header_converter = converters.header
        key_raw = type(key_converter) is ByteArrayConverter  # its to_connect_data is (OPTIONAL_BYTES, bytes)
        value_raw = type(value_converter) is ByteArrayConverter
        raw_schema = Schema.OPTIONAL_BYTES_SCHEMA
        chain = self.chain if self.chain else None
        keep_consumed = self.errant is not None or self._dlq is not None
        batch = self._batch
        ends: dict[tuple[str, int], int] = {}
        for consumed in records:
            topic, partition, offset, raw_key, raw_value, raw_headers, timestamp = consumed
            ends[(topic, partition)] = offset + 1
            if keep_consumed:
                self._consumed[(topic, partition, offset)] = consumed
            ctx: ProcessingContext | None = None
            converted: SchemaAndValue | None
            key_schema: Schema | None
            value_schema: Schema | None
            if key_raw:
                key_schema, key = raw_schema, raw_key
            else:
                try:
                    converted = key_converter.to_connect_data(topic, raw_key, raw_headers)
                except Exception as exc:
                    ctx = ProcessingContext(consumed=consumed)
                    converted = await self.operator.recover(
                        ctx,
                        Stage.KEY_CONVERTER,
                        type(key_converter),
                        partial(key_converter.to_connect_data, topic, raw_key, raw_headers),
                        exc,
                    )
                    if ctx.failed or converted is None:
                        continue
                key_schema, key = converted.schema, converted.value
            if value_raw:
                value_schema, value = raw_schema, raw_value
            else:
                try:
                    converted = value_converter.to_connect_data(topic, raw_value, raw_headers)
                except Exception as exc:
                    ctx = ProcessingContext(consumed=consumed)
                    converted = await self.operator.recover(
                        ctx,
                        Stage.VALUE_CONVERTER,
                        type(value_converter),
                        partial(value_converter.to_connect_data, topic, raw_value, raw_headers),
                        exc,
                    )
                    if ctx.failed or converted is None:
                        continue
                value_schema, value = converted.schema, converted.value
            headers: tuple[Header, ...] = ()
            if raw_headers:
                try:
                    headers = self._headers(consumed)
                except Exception as exc:
                    ctx = ProcessingContext(consumed=consumed)
                    recovered_headers = await self.operator.recover(
                        ctx,
                        Stage.HEADER_CONVERTER,
                        type(header_converter),
                        partial(self._headers, consumed),
                        exc,
                    )
                    if ctx.failed or recovered_headers is None:
                        continue
                    headers = recovered_headers
            record = _sink_record(
                topic, partition, key_schema, key, value_schema, value, timestamp, headers, offset
            )
            if chain is None:
                batch.append(record)
                continue
            try:
                out = chain.apply(record)
            except Exception as exc:
                ctx = ProcessingContext(consumed=consumed)
                out = await self.operator.recover(
                    ctx, Stage.TRANSFORMATION, type(chain), partial(chain.apply, record), exc
                )
            if out is not None:
                batch.append(out)
        track = self.plane.track_topic
        for topic, partition in ends:
            self._batch_offsets[TopicPartition(topic, partition)] = ends[(topic, partition)]
        for topic in {topic for topic, _ in ends}:
            track(self.connector, self.task_id, topic)

    def _headers(self, consumed: ConsumedRecord) -> tuple[Header, ...]:
        convert = self.converters.header.to_connect_header
        result = []
        for key, raw in consumed.headers:
            converted = convert(consumed.topic, key, raw)
            result.append(Header(key, converted.value, converted.schema))
        return tuple(result)

    def _put_while_it_runs_here(self) -> Callable[[list[SinkRecord]], Any]:
        """``put``, preceded by the worker's group check where it runs (the task thread for a sync
        ``put``): a worker paused (SIGSTOP) after the loop's check and cut off when it resumes hands
        nothing to ``put``. Only a call the pause interrupted inside ``put`` itself can still finish."""
        put, runs_here = self.task.put, self.runs_here
        if inspect.iscoroutinefunction(put):

            @wraps(put)  # its name times the call (``CALLBACK_TIMER``)
            async def put_async(records: list[SinkRecord]) -> Any:
                if not runs_here():
                    raise _Withheld
                return await put(records)

            return put_async

        @wraps(put)
        def put_sync(records: list[SinkRecord]) -> Any:
            if not runs_here():
                raise _Withheld
            return put(records)

        return put_sync

    async def _deliver(self, consumer: Consumer) -> None:
        batch = self._batch
        try:
            await invoke_task_call(self._put, list(batch))
        except _Withheld:
            await self.withheld()  # the batch stays: this task is stopping, or may write again
            return
        except RetriableException as exc:
            log.warning("task.put_retriable", task=self.task_id, error=repr(exc), records=len(batch))
            if not self._redelivering:
                self._redelivering = True
                consumer.pause(consumer.assignment())
            return
        except Exception as exc:  # user code: the task fails
            raise ConnectException("Exiting WorkerSinkTask due to unrecoverable exception.") from exc
        if self.errant is not None and self.errant.pending_failure is not None:
            raise self.errant.pending_failure
        if batch:
            counters = self.counters
            counters.sink_record_send += len(batch)
            counters.batch(len(batch))
        # a partition revoked meanwhile (Kafka rebalances between awaits) is no longer ours to commit
        self._current.update({tp: o for tp, o in self._batch_offsets.items() if tp in self._current})
        self._batch_offsets = {}
        self._batch = []
        if self._consumed and len(self._consumed) > 4 * self._max_records:
            self._consumed.clear()
        if self._redelivering:
            self._redelivering = False
            if not self._paused:
                consumer.resume([tp for tp in consumer.assignment() if _api(tp) not in self.context.paused])

    # ---- commits ------------------------------------------------------------------------------

    def _log_pre_commit_failure(self, exc: Exception) -> None:
        """A Spark write that pause or stop cancelled is expected, not an error."""
        if not isinstance(exc, SparkJobCancelled):
            log.error("task.pre_commit_failed", task=self.task_id, error=repr(exc))
        elif self.control.stopping() or self.control.target is not TargetState.STARTED:
            log.info("task.pre_commit_interrupted", task=self.task_id, error=repr(exc))
        else:
            log.warning("task.pre_commit_cancelled", task=self.task_id, error=repr(exc))

    async def _commit(self, *, closing: bool, only: frozenset[TopicPartition] | None = None) -> None:
        """``pre_commit`` with the delivered offsets, then commit what it returns (filtered)."""
        self._next_commit = time.monotonic() + self._interval
        self.context.commit_requested = False
        consumer = self.consumer
        if consumer is None:
            return
        owned = consumer.assignment()
        current = {tp: o for tp, o in self._current.items() if (only is None or tp in only) and tp in owned}
        if not current:
            return
        started = time.monotonic()
        if self.errant is not None:
            await self.errant.await_partitions([_api(tp) for tp in current])
        try:
            returned = await invoke_task_call(
                self.task.pre_commit, {_api(tp): o for tp, o in current.items()}
            )
        except Exception as exc:  # user code: rewind to what was committed, as Connect does
            self._log_pre_commit_failure(exc)
            self.counters.commit(False, time.monotonic() - started)
            if not closing and not self.control.stopping():  # a stopping task's final commit retries as is
                for tp, offset in self._committed.items():
                    if only is None or tp in only:
                        consumer.seek(tp, offset)
                        self._current[tp] = offset
                self._batch, self._batch_offsets = [], {}
            return
        to_commit: dict[TopicPartition, int] = {}
        for api_tp, offset in dict(returned or {}).items():
            tp = _own(api_tp)
            if tp in current and int(offset) <= current[tp]:
                to_commit[tp] = int(offset)
            else:
                log.warning(
                    "task.commit_ignored",
                    task=self.task_id,
                    partition=str(tp),
                    offset=offset,
                    reason="not assigned or beyond what was consumed",
                )
        if not to_commit:  # the task opted out: nothing to write, the attempt succeeded
            self.counters.commit(True, time.monotonic() - started)
            return
        if all(self._committed.get(tp) == offset for tp, offset in to_commit.items()):
            # Connect's "Skipping offset commit, no change since last commit": an idle or paused sink
            # does not write the same offsets to the broker every offset.flush.interval.ms
            self.counters.commit(True, time.monotonic() - started)
            return
        try:
            await consumer.commit(to_commit)
        except Exception as exc:  # a failed commit is retried at the next one, as in Connect
            log.warning("task.offset_commit_failed", task=self.task_id, error=repr(exc))
            self.counters.commit(False, time.monotonic() - started)
            return
        self._committed.update(to_commit)
        self.counters.commit(True, time.monotonic() - started)
