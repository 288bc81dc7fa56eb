"""The Kafka producer role: records queued in call order, handed to aiokafka as record batches, and
each ``send``/``send_batch`` future settled from the broker's acks."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import Any

from aiokafka.errors import KafkaError

from engine.config.kafka_clients.accounting import add_outgoing, record_size
from engine.errors import EngineNotRunning
from engine.storage.kafka_topic_admin import describe
from engine.topics.base import BatchAck, Headers, OutgoingRecord, RecordMetadata, require_key_or_value
from engine.topics.errors import TopicsError
from engine.topics.kafka.failures import refused
from engine.topics.partitioner import Partitioner


class KafkaProducer:
    """``send`` and ``send_batch`` queue; one pump hands records to aiokafka in call order and settles
    each future on ack.

    The pump picks the partition itself (``Partitioner``), so null keys round-robin as in memory.
    A batch goes to aiokafka as whole record batches (``create_batch``/``send_batch``: one future per
    partition batch, not per record); a record too large to share a batch goes through ``send``,
    which checks it against ``max_request_size`` as aiokafka does.
    """

    def __init__(
        self,
        producer: Any,
        forget: Any,
        *,
        start: Callable[[], Awaitable[Any]] | None = None,
        prefix: str = "producer.",
    ) -> None:
        """``producer`` None: ``start`` gives the (shared) aiokafka producer when the first record comes.
        ``prefix``: where this producer's settings come from, named when the broker refuses it."""
        self._producer = producer
        self._start = start
        self._prefix = prefix
        self._forget = forget
        self._partitioner = Partitioner()
        self._queue: asyncio.Queue[_Queued] = asyncio.Queue()
        self._pending: set[asyncio.Future[Any]] = set()
        self._pump: asyncio.Task[None] | None = None
        self._partition_ids: dict[str, list[int]] = {}
        self._closed = False
        self._alone_bytes = 8192
        if producer is not None:
            self._started(producer)

    def _started(self, producer: Any) -> None:
        self._producer = producer
        # a record at least this large is sent alone (aiokafka's max_batch_size, default 16 KiB)
        self._alone_bytes = (
            int(getattr(getattr(producer, "_message_accumulator", None), "_batch_size", 16384)) // 2
        )

    def _failed(self, exc: KafkaError, topic: str) -> TopicsError:
        return refused(
            exc,
            f"send to topic '{topic}'",
            self._producer,
            operation="WRITE",
            resource=topic,
            prefix=self._prefix,
        )

    def _enqueue(self, item: _Queued, future: asyncio.Future[Any]) -> None:
        self._pending.add(future)
        future.add_done_callback(self._pending.discard)
        self._queue.put_nowait(item)
        if self._pump is None:
            self._pump = asyncio.create_task(self._run(), name="topics-producer")

    def send(
        self,
        topic: str,
        key: bytes | None,
        value: bytes | None,
        headers: Headers = (),
        partition: int | None = None,
    ) -> Awaitable[RecordMetadata]:
        if self._closed:
            raise EngineNotRunning("The producer is closed")
        future: asyncio.Future[RecordMetadata] = asyncio.get_running_loop().create_future()
        try:
            require_key_or_value(topic, key, value)
        except TopicsError as exc:
            future.set_exception(exc)
            return future
        raw_headers = [(h, None if v is None else bytes(v)) for h, v in headers]
        self._enqueue((topic, key, value, raw_headers, partition, future), future)
        return future

    def send_batch(self, records: Sequence[OutgoingRecord]) -> Awaitable[BatchAck]:
        if self._closed:
            raise EngineNotRunning("The producer is closed")
        future: asyncio.Future[BatchAck] = asyncio.get_running_loop().create_future()
        self._enqueue((list(records), future), future)
        return future

    async def _run(self) -> None:
        queue = self._queue
        if self._producer is None:
            assert self._start is not None
            try:
                self._started(await self._start())
            except TopicsError as exc:  # every record queued so far fails; the next send tries again
                self._pump = None
                while not queue.empty():
                    item = queue.get_nowait()
                    if len(item) == 2:
                        ack = BatchAck(len(item[0]))
                        for i in range(len(item[0])):
                            ack.fail(i, exc)
                        if not item[1].done():
                            item[1].set_result(ack)
                    else:
                        _settle(item[5], exc=exc)
                return
        while True:
            item = await queue.get()
            await self._dispatch(item)
            while not queue.empty():  # drain what queued meanwhile without a wake-up per record
                await self._dispatch(queue.get_nowait())

    async def _dispatch(self, item: _Queued) -> None:
        if len(item) == 2:
            await self._send_batch(*item)
        else:
            await self._send(*item)

    async def _partition(self, topic: str, key: bytes | None) -> int:
        ids = self._partition_ids.get(topic)
        if ids is None:  # remembered: a topic's partition count changes rarely, lookups cost
            ids = self._partition_ids[topic] = sorted(await self._producer.partitions_for(topic))
        return ids[self._partitioner.partition(key, len(ids))]

    async def _send(
        self,
        topic: str,
        key: bytes | None,
        value: bytes | None,
        headers: list[tuple[str, bytes | None]],
        partition: int | None,
        future: asyncio.Future[RecordMetadata],
    ) -> None:
        try:
            if partition is None:
                partition = await self._partition(topic, key)
            ack = await self._producer.send(
                topic, value, key=key, partition=partition, headers=headers or None
            )
            add_outgoing(self._producer, record_size(key, value, headers))
        except KafkaError as exc:
            self._partition_ids.pop(topic, None)
            _settle(future, exc=self._failed(exc, topic))
            return
        except Exception as exc:  # one bad record fails its own send, never the pump
            _settle(future, exc=TopicsError(f"Could not send to topic '{topic}': {describe(exc)}"))
            return
        ack.add_done_callback(partial(_on_ack, future, topic=topic, failed=self._failed))

    async def _send_batch(self, records: list[OutgoingRecord], future: asyncio.Future[BatchAck]) -> None:
        """One aiokafka record batch per partition (several when one fills up), in record order."""
        ack = _BatchSettler(BatchAck(len(records)), future, self._failed)
        open_batches: dict[tuple[str, int], _PartitionBatch] = {}
        producer = self._producer
        for i, (topic, key, value, headers, partition) in enumerate(records):
            try:
                require_key_or_value(topic, key, value)
                if partition is None:
                    partition = await self._partition(topic, key)
                raw_headers = [(h, None if v is None else bytes(v)) for h, v in headers] if headers else []
                size = (
                    len(key or b"") + len(value or b"") + sum(len(h) + len(v or b"") for h, v in raw_headers)
                )
                if size >= self._alone_bytes:
                    before = open_batches.pop((topic, partition), None)
                    if before is not None:  # what came before it goes first
                        await self._submit(before, ack)
                    alone = await producer.send(
                        topic, value, key=key, partition=partition, headers=raw_headers or None
                    )
                    add_outgoing(producer, size)
                    ack.expect(_PartitionBatch(topic, partition, None), [i], alone)
                    continue
                batch = open_batches.get((topic, partition))
                if batch is None:
                    batch = open_batches[(topic, partition)] = _PartitionBatch(
                        topic, partition, producer.create_batch()
                    )
                if batch.append(i, key, value, raw_headers) is None:  # full: send it, start the next one
                    await self._submit(batch, ack)
                    batch = open_batches[(topic, partition)] = _PartitionBatch(
                        topic, partition, producer.create_batch()
                    )
                    if batch.append(i, key, value, raw_headers) is None:  # never seen: under half a batch
                        ack.fail([i], TopicsError(f"The record is too large for a batch of topic '{topic}'"))
            except KafkaError as exc:
                self._partition_ids.pop(topic, None)
                ack.fail([i], self._failed(exc, topic))
            except TopicsError as exc:
                ack.fail([i], exc)
            except Exception as exc:  # one bad record fails alone, never the pump
                ack.fail([i], TopicsError(f"Could not send to topic '{topic}': {describe(exc)}"))
        for batch in open_batches.values():
            await self._submit(batch, ack)
        ack.sealed()

    async def _submit(self, batch: _PartitionBatch, ack: _BatchSettler) -> None:
        assert batch.builder is not None
        try:
            size = batch.builder.size()  # the encoded batch, before send_batch closes the builder
            sent = await self._producer.send_batch(batch.builder, batch.topic, partition=batch.partition)
            add_outgoing(self._producer, size)
        except KafkaError as exc:
            self._partition_ids.pop(batch.topic, None)
            ack.fail(batch.indices, self._failed(exc, batch.topic))
            return
        except Exception as exc:
            ack.fail(batch.indices, TopicsError(f"Could not send to topic '{batch.topic}': {describe(exc)}"))
            return
        ack.expect(batch, batch.indices, sent)

    async def flush(self) -> None:
        if self._pending:
            await asyncio.gather(*list(self._pending), return_exceptions=True)

    async def close(self) -> None:
        """Wait for what was sent, then stop the pump; idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            await self.flush()
        finally:
            if self._pump is not None:
                self._pump.cancel()
                await asyncio.wait([self._pump])
            for future in list(self._pending):
                _settle(future, exc=TopicsError("The producer closed before the record was sent"))
            self._forget(self)


_Queued = (
    tuple[
        str,
        bytes | None,
        bytes | None,
        list[tuple[str, bytes | None]],
        int | None,
        "asyncio.Future[RecordMetadata]",
    ]
    | tuple[list[OutgoingRecord], "asyncio.Future[BatchAck]"]
)


class _PartitionBatch:
    """An aiokafka ``BatchBuilder`` for one partition and the batch indices of its records."""

    __slots__ = ("builder", "indices", "partition", "timestamps", "topic")

    def __init__(self, topic: str, partition: int, builder: Any) -> None:
        self.topic = topic
        self.partition = partition
        self.builder = builder
        self.indices: list[int] = []
        self.timestamps: list[int] = []

    def append(
        self, index: int, key: bytes | None, value: bytes | None, headers: list[tuple[str, bytes | None]]
    ) -> Any:
        meta = self.builder.append(timestamp=None, key=key, value=value, headers=headers)
        if meta is not None:
            self.indices.append(index)
            self.timestamps.append(meta.timestamp)
        return meta


class _BatchSettler:
    """Resolves a ``send_batch`` future once every partition batch of it was acknowledged or failed."""

    __slots__ = ("_ack", "_failed", "_future", "_outstanding", "_sealed")

    def __init__(
        self,
        ack: BatchAck,
        future: asyncio.Future[BatchAck],
        failed: Callable[[KafkaError, str], TopicsError],
    ) -> None:
        self._ack = ack
        self._future = future
        self._failed = failed
        self._outstanding = 0
        self._sealed = False

    def fail(self, indices: list[int], error: BaseException) -> None:
        for i in indices:
            self._ack.fail(i, error)

    def expect(self, batch: _PartitionBatch, indices: list[int], sent: asyncio.Future[Any]) -> None:
        self._outstanding += 1
        sent.add_done_callback(partial(self._done, batch, indices))

    def _done(self, batch: _PartitionBatch, indices: list[int], sent: asyncio.Future[Any]) -> None:
        self._outstanding -= 1
        if sent.cancelled():
            self.fail(indices, TopicsError(f"The send to topic '{batch.topic}' was cancelled"))
        elif (exc := sent.exception()) is not None:
            self.fail(indices, self._failed(exc, batch.topic) if isinstance(exc, KafkaError) else exc)
        else:
            meta = sent.result()
            timestamps = batch.timestamps if batch.builder is not None else [meta.timestamp]
            self._ack.add_span(batch.topic, batch.partition, meta.offset, indices, timestamps)
        self._check()

    def sealed(self) -> None:
        self._sealed = True
        self._check()

    def _check(self) -> None:
        if self._sealed and self._outstanding == 0 and not self._future.done():
            self._future.set_result(self._ack)


def _settle(
    future: asyncio.Future[RecordMetadata],
    result: RecordMetadata | None = None,
    exc: BaseException | None = None,
) -> None:
    if future.done():
        return  # the caller gave up on it
    if exc is not None:
        future.set_exception(exc)
    elif result is not None:
        future.set_result(result)


def _on_ack(
    future: asyncio.Future[RecordMetadata],
    done: asyncio.Future[Any],
    *,
    topic: str,
    failed: Callable[[KafkaError, str], TopicsError],
) -> None:
    if done.cancelled():
        _settle(future, exc=TopicsError(f"The send to topic '{topic}' was cancelled"))
    elif (exc := done.exception()) is not None:
        _settle(future, exc=failed(exc, topic) if isinstance(exc, KafkaError) else exc)
    else:
        meta = done.result()
        _settle(future, RecordMetadata(meta.topic, meta.partition, meta.offset, meta.timestamp))
