"""The source task loop (Connect's ``AbstractWorkerSourceTask``/``WorkerSourceTask``).

poll -> transformation chain -> converters -> producer, the whole ``poll()`` batch in one
``send_batch``; ``commit_record`` once the record is acknowledged (or with ``None`` when it was
dropped), only for a task that overrides it; source offsets of acknowledged records are
written every ``offset.flush.interval.ms``, on pause and on stop, each time followed by
``commit()``.

Departures from Connect, for asyncio: an ``async def poll`` is *cancelled* when the task is
paused or stopped while it waits (a sync ``poll`` runs in a thread and is waited for, as in
Connect), so an async poll must not take records from its source before its last ``await``.
``commit_record`` and ``commit`` run on the task's loop, between polls, not on a producer thread.

A ``poll`` that returns nothing is called again where it ran (``_poll``), without a turn of the
loop: an idle task costs its worker its poll and a few µs more (the test kit's idle source: 17-24 µs
of CPU per empty poll, against 63-92 µs when each poll had a new asyncio task, a wait and a timer;
``bench/idle_tasks.py``). The loop wakes for a batch, the offset commit, a pause, a stop or a
failed send.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

import structlog

from engine.api._invoke import TASK_THREADS, in_thread, invoke_task_call
from engine.api.errors import ConnectException, RetriableException
from engine.api.records import RecordMetadata, SourceRecord
from engine.api.task import SourceTask
from engine.tolerance import (
    DeadLetterQueueReporter,
    ProcessingContext,
    Stage,
    ensure_dlq_topic,
    render_source,
)
from engine.topics.base import BatchAck, OutgoingRecord, OwnProducer
from engine.topics.base import RecordMetadata as TopicsMetadata
from engine.topics.errors import TopicsError
from engine.worker.repeated_polls import YIELD, SyncPolls, Watched, empty
from engine.worker.submitted_records import SubmittedBatch, SubmittedRecords
from engine.worker.task_loop import TaskLoop
from engine.worker.topic_creation import TopicCreation
from states import TargetState

log = structlog.get_logger(component="worker")

MAX_IN_FLIGHT = 10_000  # sends awaiting acknowledgement before the loop waits for the producer


class _SentBatch:
    """One ``send_batch`` as the loop remembers it until ``commit_record`` ran for its records."""

    __slots__ = ("ack", "error", "positions", "records", "submitted")

    def __init__(
        self,
        records: list[SourceRecord],
        submitted: SubmittedBatch,
        positions: list[int] | None,
        acked: asyncio.Future[BatchAck],
    ) -> None:
        self.records = records
        self.submitted = submitted
        self.positions = positions  # each record's index in the submitted batch (None: the same)
        self.ack: BatchAck | None = None
        self.error: BaseException | None = None
        if acked.cancelled():
            self.error = asyncio.CancelledError()
        elif (error := acked.exception()) is not None:
            self.error = error
        else:
            self.ack = acked.result()


def _api_metadata(meta: TopicsMetadata) -> RecordMetadata:
    return RecordMetadata(meta.topic, meta.partition, meta.offset, meta.timestamp)


def _overrides(task: SourceTask, name: str) -> bool:
    return getattr(type(task), name) is not getattr(SourceTask, name)


class SourceLoop(TaskLoop):
    task: SourceTask

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._producer = self.plane.producer()
        self._own_producer: OwnProducer | None = None  # producer.override.*: a client of the connector's own
        self._admin_client = self.plane.connector_clients(
            "admin", self.config
        )  # admin.override.*: topic creation
        self._submitted = SubmittedRecords()
        self._acks: list[SourceRecord | _SentBatch] = []
        self._in_flight = 0
        self._send_error: BaseException | None = None
        self._commit_records = _overrides(self.task, "commit_record")
        self._async_poll = inspect.iscoroutinefunction(self.task.poll)
        self._interval = self.plane.settings.offset_flush_interval_s
        self._next_commit = time.monotonic() + self._interval
        self._creation = TopicCreation.from_config(self.config, self.plane.worker)
        self._created: set[str] = set()
        self._track = self.plane.track_topic
        self._paused = False
        self._drainer: asyncio.Task[None] | None = None
        self._room: asyncio.Event | None = None  # made the first time the producer falls behind
        self._dlq: DeadLetterQueueReporter | None = None
        if self.policy.dlq_topic.strip():  # our addition: Connect's dead letter queue is sink-only
            self._dlq = DeadLetterQueueReporter(
                self.plane.producer(),
                self.policy,
                self.connector,
                self.task_id,
                source_render=self._dead_letter_form,
            )

    def _reporters(self) -> list[Any]:
        return super()._reporters() + ([self._dlq] if self._dlq is not None else [])

    async def _dead_letter_form(self, record: SourceRecord) -> Any:
        converters = self.converters
        return await render_source(record, converters.key, converters.value, self._headers)

    async def open(self) -> None:
        if (client := self.plane.connector_clients("producer", self.config)) is None:
            self._producer = await self.plane.open_producer(self.config)
        else:
            try:
                self._producer = self._own_producer = await self.plane.topics.producer_with(client)
            except TopicsError as exc:
                raise self.plane.client_failure("producer", self.config, exc) from exc
        await self.open_dead_letter_queue()

    async def open_dead_letter_queue(self) -> None:
        """The DLQ topic made if missing (``admin.override.*``); its records go through the
        connector's own producer when it has one, else the worker's (never a transactional one)."""
        if self._dlq is None:
            return
        await ensure_dlq_topic(self.plane.topics, self.policy, self._admin_client)
        if self._own_producer is not None:
            self._dlq.producer = self._own_producer

    # ---- the loop -----------------------------------------------------------------------------

    async def execute(self) -> None:
        control = self.control
        while not control.stopping():
            self._check_send_error()
            await self._process_acks()
            if control.target is not TargetState.STARTED:
                if not self._paused:
                    self._paused = True
                    control.set_paused(True)
                    await self.commit_offsets()
                await control.park()
                continue
            if self._paused:
                self._paused = False
                control.set_paused(False)
            if time.monotonic() >= self._next_commit:
                await self.commit_offsets()
            if self.pacer is not None:
                await self.pace(lambda: self._next_commit - time.monotonic(), self.commit_offsets)
                if control.stopping() or control.target is not TargetState.STARTED:
                    continue
            records = await self._poll()
            if records and not await self.withheld():
                await self._send(records)

    async def _poll(self) -> list[SourceRecord] | None:
        """Poll until a batch comes, parked (idle for ``Engine.settled``); offsets commit on time meanwhile.

        Empty polls repeat where they ran, without a turn of this loop: an async ``poll`` in one task
        (``_async_polls``), a sync one in its thread while no other call waits for the task threads
        (``SyncPolls``). An idle task then costs its poll and little more; a pause, a stop or a
        failed send wakes this loop, which cancels the async poll or waits for the sync one to return.
        """
        polling: SyncPolls | None = None
        if self._async_poll:
            work: asyncio.Future[Any] = asyncio.ensure_future(self._async_polls())
        else:
            polling = SyncPolls(self.task, TASK_THREADS.get())
            work = polling.future
        control = self.control
        try:
            while not work.done():
                outcome = await control.park_on(work, max(0.0, self._next_commit - time.monotonic()))
                if outcome == "timeout":
                    await self.commit_offsets()
                elif outcome == "woken" and (
                    control.stopping()
                    or control.target is not TargetState.STARTED
                    or self._send_error is not None
                ):
                    if polling is None:
                        work.cancel()
                    elif polling.stop():  # still waiting for a thread: it never runs
                        return None
                    await asyncio.wait((work,))
        except asyncio.CancelledError:
            if polling is not None:
                polling.stop()
            work.cancel()
            raise
        if work.cancelled():
            return None
        exc = work.exception()
        if isinstance(exc, RetriableException):
            log.warning("task.poll_retriable", task=self.task_id, error=repr(exc))
            return None
        if exc is not None:
            raise exc
        return _batch(work.result())

    async def _async_polls(self) -> Any:
        """``poll()`` until it returns a batch (or something that is not a list, for ``_batch`` to refuse);
        a ``RetriableException`` is logged, and polling goes on, as the loop would after it."""
        poll = self.task.poll
        while True:
            polled = Watched(poll())
            try:
                result = await polled
            except RetriableException as exc:
                log.warning("task.poll_retriable", task=self.task_id, error=repr(exc))
                result = None
            if not empty(result):
                return result
            if not polled.suspended:  # a poll that returns at once must not keep the event loop to itself
                await YIELD

    # ---- sending ------------------------------------------------------------------------------

    async def _send(self, records: list[SourceRecord]) -> None:
        """Transform and convert each record, then hand the batch to the producer in one call."""
        counters = self.counters
        counters.source_record_poll += len(records)
        counters.batch(len(records))
        chain = self.chain if self.chain else None  # no SMTs: no call per record
        key_converter, value_converter = self.converters.key, self.converters.value
        outgoing: list[OutgoingRecord] = []
        sent: list[SourceRecord] = []
        # with a dropped record (filtered, skipped): sent and dropped records in poll order, every offset
        # committed, and the indices of the dropped ones; until one is dropped, ``sent`` is that list
        submit: list[SourceRecord] | None = None
        dropped: list[int] = []
        for record in records:
            if not isinstance(record, SourceRecord):
                raise ConnectException(
                    f"SourceTask.poll() returned {type(record).__name__}, not a SourceRecord"
                )
            out: SourceRecord = record
            if chain is not None:
                transformed: SourceRecord | None
                try:
                    transformed = chain.apply(record)
                except Exception as exc:
                    ctx = ProcessingContext(source_record=record)
                    transformed = await self.operator.recover(
                        ctx, Stage.TRANSFORMATION, type(chain), partial(chain.apply, record), exc
                    )
                    _check_dead_letter(ctx)
                if transformed is None:
                    self._acks.append(record)  # dropped: commit_record(record, None)
                    submit = submit if submit is not None else list(sent)
                    dropped.append(len(submit))
                    submit.append(record)
                    continue
                out = transformed
            topic = out.topic
            try:  # the fast path: no coroutine per record unless a converter fails
                key = key_converter.from_connect_data(topic, out.key_schema, out.key)
            except Exception as exc:
                key = await self._recover(
                    record,
                    Stage.KEY_CONVERTER,
                    key_converter,
                    partial(key_converter.from_connect_data, topic, out.key_schema, out.key),
                    exc,
                )
                if key is _FAILED:
                    submit = submit if submit is not None else list(sent)
                    dropped.append(len(submit))
                    submit.append(record)
                    continue
            try:
                value = value_converter.from_connect_data(topic, out.value_schema, out.value)
            except Exception as exc:
                value = await self._recover(
                    record,
                    Stage.VALUE_CONVERTER,
                    value_converter,
                    partial(value_converter.from_connect_data, topic, out.value_schema, out.value),
                    exc,
                )
                if value is _FAILED:
                    submit = submit if submit is not None else list(sent)
                    dropped.append(len(submit))
                    submit.append(record)
                    continue
            headers: Any = ()
            if out.headers:
                try:
                    headers = self._headers(out)
                except Exception as exc:
                    headers = await self._recover(
                        record,
                        Stage.HEADER_CONVERTER,
                        self.converters.header,
                        partial(self._headers, out),
                        exc,
                    )
                    if headers is _FAILED:
                        submit = submit if submit is not None else list(sent)
                        dropped.append(len(submit))
                        submit.append(record)
                        continue
            if self._creation is not None and topic not in self._created:
                await self._creation.ensure(self.plane.topics, topic, self._admin_client)
                self._created.add(topic)
            outgoing.append(OutgoingRecord(topic, key, value, headers, out.kafka_partition))
            sent.append(record)
            if submit is not None:
                submit.append(record)
        positions: list[int] | None = None
        if submit is not None:  # Connect's recordDropped: a dropped record's offset is committable at once,
            skipped = set(dropped)  # after the records polled before it (KAFKA-14079)
            positions = [i for i in range(len(submit)) if i not in skipped]
            if not outgoing:
                self._submitted.submit_batch(submit).ack()
        if self.pacer is not None:
            self.pacer.spend(
                len(records),
                sum(len(o.key or b"") + len(o.value or b"") for o in outgoing)
                if self.pacer.counts_bytes
                else 0,
            )
        if outgoing:
            submitted = self._submitted.submit_batch(sent if submit is None else submit)
            acked: asyncio.Future[BatchAck]
            try:
                acked = asyncio.ensure_future(self._producer.send_batch(outgoing))
            except Exception as exc:  # a send refused at once fails like one refused by the broker
                acked = asyncio.get_running_loop().create_future()
                acked.set_exception(exc)
            self._in_flight += len(sent)
            if acked.done():  # the in-process log acknowledges at once: no callback
                self._acked(sent, submitted, positions, acked)
            else:
                acked.add_done_callback(partial(self._acked, sent, submitted, positions))
        if self._in_flight > MAX_IN_FLIGHT:  # back-pressure: wait until half are acknowledged
            if self._room is None:
                self._room = asyncio.Event()
            self._room.clear()
            await self._room.wait()
        await self._process_acks()

    def _headers(self, record: SourceRecord) -> tuple[tuple[str, bytes | None], ...]:
        convert = self.converters.header.from_connect_header
        return tuple((h.key, convert(record.topic, h.key, h.schema, h.value)) for h in record.headers)

    async def _recover(
        self,
        record: SourceRecord,
        stage: Stage,
        converter: object,
        operation: Callable[[], Any],
        error: Exception,
    ) -> Any:
        """The error handler's verdict on a failed conversion: its retried result, or ``_FAILED``."""
        ctx = ProcessingContext(source_record=record)
        result = await self.operator.recover(ctx, stage, type(converter), operation, error)
        _check_dead_letter(ctx)
        if ctx.failed:
            self._acks.append(record)  # skipped: commit_record(record, None)
            return _FAILED
        return result

    def _acked(
        self,
        records: list[SourceRecord],
        submitted: SubmittedBatch,
        positions: list[int] | None,
        acked: asyncio.Future[BatchAck],
    ) -> None:
        """Producer callback: offsets of written records become committable now; ``commit_record``
        follows soon, off this callback, while the loop may be waiting in ``poll`` (as Connect's
        producer thread does)."""
        self._in_flight -= len(records)
        if self._in_flight <= MAX_IN_FLIGHT // 2 and self._room is not None:
            self._room.set()
        sent = _SentBatch(records, submitted, positions, acked)
        if sent.ack is not None:
            errors = sent.ack.errors
            submitted.ack(errors if positions is None or not errors else {positions[i] for i in errors})
            for topic in sent.ack.topics:
                self._track(self.connector, self.task_id, topic)
        else:  # nothing written: every record sent failed
            submitted.ack(range(len(records)) if positions is None else set(positions))
        self._acks.append(sent)
        if self._drainer is None or self._drainer.done():
            self._drainer = asyncio.ensure_future(self._drain())

    async def _drain(self) -> None:
        try:
            await self._process_acks()
        except Exception as exc:  # reporting failed: the loop sees it at its next check
            self._send_error = self._send_error or exc
        if self._send_error is not None:  # a poll that does not return soon must not keep the task RUNNING
            self.control.wake()

    def _check_send_error(self) -> None:
        if self._send_error is not None:
            raise ConnectException(
                "Unrecoverable exception from producer send callback"
            ) from self._send_error

    async def _process_acks(self) -> None:
        """``commit_record`` for every acknowledged, failed or dropped record since the last call."""
        if not self._acks:
            return
        acks, self._acks = self._acks, []
        calls: list[tuple[SourceRecord, RecordMetadata | None]] = []
        commit_records = self._commit_records
        written = 0
        for item in acks:
            if isinstance(item, SourceRecord):  # dropped or skipped before sending
                if commit_records:
                    calls.append((item, None))
                continue
            ack = item.ack
            if ack is not None and not ack.errors:  # the common case: the whole batch was written
                written += len(item.records)
                if commit_records:
                    calls.extend(
                        (record, _api_metadata(ack.metadata(i))) for i, record in enumerate(item.records)
                    )
                continue
            for i, record in enumerate(item.records):
                error = item.error if ack is None else ack.errors.get(i)
                if error is None:
                    assert ack is not None
                    written += 1
                    if commit_records:
                        calls.append((record, _api_metadata(ack.metadata(i))))
                    continue
                if not self.operator.tolerates_all:
                    self._send_error = self._send_error or error  # fails the task at the loop's next check
                    continue
                await self.operator.report(
                    ProcessingContext(source_record=record), Stage.KAFKA_PRODUCE, type(self._producer), error
                )
                item.submitted.ack_one(i if item.positions is None else item.positions[i])
                if commit_records:
                    calls.append((record, None))
        self.counters.source_record_write += written
        if calls:
            await _commit_records(self.task, calls)

    # ---- offsets ------------------------------------------------------------------------------

    async def commit_offsets(self) -> None:
        """Write the committable offsets, then ``commit()`` (called even when nothing was written)."""
        started = time.monotonic()
        self._next_commit = started + self._interval
        await self._process_acks()
        pairs = self._submitted.committable()
        if pairs:
            try:
                self.plane.offsets.write(self.connector, pairs)
            except Exception as exc:  # a bad offset from the task: logged, as Connect's flush failure
                log.error("task.offset_commit_failed", task=self.task_id, error=repr(exc))
                self.counters.commit(False, time.monotonic() - started)
                return
            try:  # commit() only once the offsets are durable (on Kafka: acknowledged)
                async with asyncio.timeout(self.plane.settings.offset_flush_timeout_s):
                    await self.plane.offsets.flush()
            except TimeoutError:
                log.error("task.offset_commit_failed", task=self.task_id, error="offset flush timed out")
                self.counters.commit(False, time.monotonic() - started)
                return
        # as Connect, an attempt with nothing to write succeeds too (commit() still runs)
        self.counters.commit(True, time.monotonic() - started)
        try:
            await invoke_task_call(self.task.commit)
        except Exception as exc:  # user code: logged and ignored, as in Connect
            log.warning("task.commit_failed", task=self.task_id, error=repr(exc))

    async def close(self, failed: bool) -> None:
        """Final offset commit: wait (bounded) for outstanding sends, then commit what was acknowledged."""
        try:
            async with asyncio.timeout(self.plane.settings.offset_flush_timeout_s):
                await self._producer.flush()
        except TimeoutError:
            log.warning("task.flush_timed_out", task=self.task_id, outstanding=self._in_flight)
        if self._drainer is not None:
            await asyncio.wait((self._drainer,))
        await self.commit_offsets()
        if self._own_producer is not None:
            await self._own_producer.close()
        if not failed:
            self._check_send_error()


def _check_dead_letter(ctx: ProcessingContext) -> None:
    """A skipped record the dead letter queue refused fails the task: its offset must not be committed."""
    if ctx.dlq_error is not None:
        raise ConnectException(
            "A failed record could not be written to the dead letter queue; the task stops "
            "before its offset is committed"
        ) from ctx.dlq_error


def _batch(result: Any) -> list[SourceRecord] | None:
    """What ``poll()`` returned, as the loop's batch; anything but a list, a tuple or None is refused."""
    if result is None:
        return None
    if not isinstance(result, list | tuple):
        raise ConnectException(
            f"SourceTask.poll() must return a list of SourceRecord or None, not {type(result).__name__}"
        )
    return list(result)


class _Failed:
    """Marks a conversion the error handler skipped (None is a valid converted value)."""


_FAILED: Any = _Failed()


async def _commit_records(task: SourceTask, calls: list[tuple[SourceRecord, RecordMetadata | None]]) -> None:
    """``commit_record`` for each; errors logged and ignored. A sync override gets one thread hop per batch."""
    commit_record = task.commit_record
    if inspect.iscoroutinefunction(commit_record):
        for record, meta in calls:
            try:
                await commit_record(record, meta)
            except Exception as exc:  # user code
                log.warning("task.commit_record_failed", error=repr(exc))
        return

    def run_all() -> None:
        for record, meta in calls:
            try:
                result = commit_record(record, meta)
                if inspect.isawaitable(result):
                    _close_awaitable(result)
            except Exception as exc:  # user code
                log.warning("task.commit_record_failed", error=repr(exc))

    await in_thread(TASK_THREADS.get(), run_all)


def _close_awaitable(result: Awaitable[Any]) -> None:
    close = getattr(result, "close", None)
    if close is not None:
        close()
