"""The sink task's ``ErrantRecordReporter`` (KIP-610; Kafka's ``WorkerErrantRecordReporter``).

A task hands over records its ``put`` cannot handle; each runs through the operator's reporters
(log, dead letter queue) at stage ``TASK_PUT`` without retry. The call returns at once with a
future that resolves when the report is persisted:

* called on the event loop (an ``async def put``): an ``asyncio.Future`` (await it, or not);
* called from another thread (a plain ``def put``, which the engine runs in a worker thread):
  the report is scheduled onto the loop with ``asyncio.run_coroutine_threadsafe`` and a
  ``concurrent.futures.Future`` comes back (``.result()`` may block that thread, never the loop);
  it is a :class:`ThreadReportFuture`, which a coroutine may await too, so the union type checks.

Under ``errors.tolerance=none`` the first report also sets :attr:`pending_failure`, which the
loop raises after ``put`` returns (Kafka's ``maybeThrowAsyncError``); unlike Kafka, ``report``
itself does not raise, so the task finishes its ``put``. Before committing offsets the loop
awaits the reports of those partitions (:meth:`await_partitions`), so a record is never committed
before it reached the dead letter queue.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable, Collection, Generator
from typing import Any, Protocol

from engine.api.errors import ConnectException
from engine.api.records import SinkRecord
from engine.tolerance.config import ErrorPolicy
from engine.tolerance.context import ProcessingContext
from engine.tolerance.retry_with_tolerance import ToleranceOperator
from engine.tolerance.stage import Stage
from engine.topics.base import ConsumedRecord


class ThreadReportFuture(concurrent.futures.Future[None]):
    """A report made off the loop: a ``concurrent.futures.Future`` that a coroutine may also await."""

    def __await__(self) -> Generator[Any, None, None]:
        return asyncio.wrap_future(self).__await__()


ReportFuture = asyncio.Future[None] | ThreadReportFuture


class _Partition(Protocol):
    """``engine.api.records.TopicPartition`` and ``engine.topics.base.TopicPartition`` alike."""

    @property
    def topic(self) -> str: ...

    @property
    def partition(self) -> int: ...


class ErrantRecordReporter:
    def __init__(
        self,
        operator: ToleranceOperator,
        *,
        lookup: Callable[[SinkRecord], ConsumedRecord | None],
        task_class: type | None = None,
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        """``lookup`` finds the raw record a ``SinkRecord`` came from (by its original coordinates);
        it runs on the caller's thread. For a record the task made up it may return None (then the
        log names the sink record and the DLQ gets nothing) or build one through the converters.

        ``loop`` is where reports run; by default the loop running at construction, else the
        loop of the first on-loop call (a report from a thread before that raises RuntimeError).
        """
        self.operator = operator
        self.lookup = lookup
        self.task_class = task_class
        self._loop = loop
        if self._loop is None:
            try:
                self._loop = asyncio.get_running_loop()
            except RuntimeError:
                self._loop = None
        self._lock = threading.Lock()
        self._outstanding: dict[tuple[str, int], list[ReportFuture]] = {}
        self._pending_failure: ConnectException | None = None

    @property
    def pending_failure(self) -> ConnectException | None:
        """Set once a report under ``errors.tolerance=none`` means the task must fail."""
        return self._pending_failure

    def report(self, record: SinkRecord, error: BaseException) -> ReportFuture:
        """Report ``record`` as failed with ``error``; see the module docstring for the future's kind."""
        try:
            running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is not None and self._loop is None:
            self._loop = running
        if not self.operator.tolerates_all:
            with self._lock:
                if self._pending_failure is None:
                    failure = ConnectException("Tolerance exceeded in error handler")
                    failure.__cause__ = error
                    self._pending_failure = failure
        consumed = self.lookup(record)
        future: ReportFuture
        if running is not None and running is self._loop:
            future = running.create_task(self._report(record, consumed, error))
        elif self._loop is not None:
            future = _chained(
                asyncio.run_coroutine_threadsafe(self._report(record, consumed, error), self._loop)
            )
        else:
            raise RuntimeError("ErrantRecordReporter has no event loop to report on yet")
        key = (
            (consumed.topic, consumed.partition)
            if consumed is not None
            else (record.original_topic or record.topic, _partition(record))
        )
        with self._lock:
            kept = self._outstanding.setdefault(key, [])
            kept[:] = [f for f in kept if not _succeeded(f)]
            kept.append(future)
        return future

    async def _report(
        self, record: SinkRecord, consumed: ConsumedRecord | None, error: BaseException
    ) -> None:
        ctx = ProcessingContext(consumed=consumed, sink_record=None if consumed is not None else record)
        await self.operator.report(ctx, Stage.TASK_PUT, self.task_class, error)

    async def await_partitions(self, tps: Collection[_Partition]) -> None:
        """Wait for every report so far for these partitions; a failed one raises ``ConnectException``."""
        with self._lock:
            futures = [f for tp in tps for f in self._outstanding.pop((tp.topic, tp.partition), [])]
        if not futures:
            return
        results = await asyncio.gather(
            *(asyncio.wrap_future(f) if isinstance(f, ThreadReportFuture) else f for f in futures),
            return_exceptions=True,
        )
        for result in results:
            if isinstance(result, BaseException):
                raise ConnectException("Failed to report an errant record") from result

    def outstanding(self) -> int:
        """How many reports are kept for a later :meth:`await_partitions`."""
        with self._lock:
            return sum(len(futures) for futures in self._outstanding.values())


def _chained(inner: concurrent.futures.Future[None]) -> ThreadReportFuture:
    outer = ThreadReportFuture()

    def copy(done: concurrent.futures.Future[None]) -> None:
        if done.cancelled():
            outer.cancel()
        elif (exc := done.exception()) is not None:
            outer.set_exception(exc)
        else:
            outer.set_result(None)

    inner.add_done_callback(copy)
    return outer


def _succeeded(future: ReportFuture) -> bool:
    return future.done() and not future.cancelled() and future.exception() is None


def _partition(record: SinkRecord) -> int:
    if record.original_kafka_partition is not None:
        return record.original_kafka_partition
    return record.kafka_partition if record.kafka_partition is not None else 0


def make_errant_reporter(
    policy: ErrorPolicy,
    operator: ToleranceOperator,
    *,
    lookup: Callable[[SinkRecord], ConsumedRecord | None],
    task_class: type | None = None,
    loop: asyncio.AbstractEventLoop | None = None,
) -> ErrantRecordReporter | None:
    """A reporter only if there is somewhere to report to: a DLQ topic or ``errors.log.enable`` (Kafka)."""
    if not policy.dlq_topic.strip() and not policy.log_enable:
        return None
    return ErrantRecordReporter(operator, lookup=lookup, task_class=task_class, loop=loop)
