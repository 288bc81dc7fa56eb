"""A compacted internal topic mirrored in memory: Connect's ``KafkaBasedLog`` for statuses and offsets.

Writes are queued and sent in order by one sender task (so two writes of a key land in order);
a reader task applies every record, this worker's own and the others', through ``on_record``.
A header marks this instance's own writes: reading back an older one of them never overwrites a
newer value the store already holds. The topic, its check and its clients are an ``InternalTopic``,
shared with the config log.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable, Mapping
from typing import Any

import structlog
from aiokafka import TopicPartition
from aiokafka.errors import ConsumerStoppedError, KafkaError

from engine.config.kafka_clients.accounting import add_incoming, add_outgoing, fetched_size, record_size
from engine.config.kafka_clients.starting import start_client
from engine.errors import EngineNotRunning
from engine.storage.internal_topic import InternalTopic
from engine.storage.kafka_topic_admin import describe

log = structlog.get_logger(component="internal-topic")

WRITER_HEADER = "connect-engine-writer"
# tansu leaves an empty partition out of a fetch answered at once: wait a little for the watermark
_FETCH_WAIT_MS = 50
_END_TIMEOUT_S = 30.0

OnRecord = Callable[[str, bytes | None], None]


class KafkaBackingLog:
    """One internal topic: ``open`` reads it to the end, then a reader keeps applying new records."""

    def __init__(
        self,
        bootstrap_servers: str,
        topic: str,
        *,
        partitions: int,
        replication_factor: int,
        property_name: str,
        client_id: str,
        on_record: OnRecord,
        isolation_level: str = "read_uncommitted",
        client_args: Mapping[str, Any] | None = None,
        auto_create: bool = True,
    ) -> None:
        self.topic = topic
        self.partitions = partitions
        self.replication_factor = replication_factor
        self.property_name = property_name
        self._on_record = on_record
        self._topic = InternalTopic(
            bootstrap_servers,
            topic,
            property_name=property_name,
            client_id=client_id,
            client_args=client_args,
            # read_committed: exactly-once tasks write offsets in transactions
            consumer_args={"fetch_max_wait_ms": _FETCH_WAIT_MS, "isolation_level": isolation_level},
            auto_create=auto_create,
        )
        self._producer: Any = None
        self._consumer: Any = None
        self._tps: list[TopicPartition] = []
        self._queue: asyncio.Queue[tuple[str, bytes | None, int]] = asyncio.Queue()
        self._pending: set[asyncio.Future[Any]] = set()
        self._tasks: list[asyncio.Task[None]] = []
        self._token = f"{client_id}:{os.getpid()}:{id(self)}".encode()
        self._sequence = 0
        self._latest_own: dict[str, int] = {}  # key -> sequence of this instance's newest write
        self.skipped = 0
        self._progress = asyncio.Event()  # set after each applied batch, for read_to_end

    async def open(self) -> None:
        try:
            found = await self._topic.ensure(
                partitions=self.partitions, replication_factor=self.replication_factor
            )
            self._tps = [TopicPartition(self.topic, p) for p in range(found)]
            self._producer = self._topic.new_producer()
            await start_client(self._producer)
            self._consumer = self._topic.new_consumer("reader")
            await start_client(self._consumer)
            self._consumer.assign(self._tps)
            await self._consumer.seek_to_beginning(*self._tps)
            ends = await self._end_offsets()
            self._tasks = [
                asyncio.create_task(self._read(), name=f"read:{self.topic}"),
                asyncio.create_task(self._send(), name=f"send:{self.topic}"),
            ]
            await self._reached(ends)
        except KafkaError as exc:
            why = self._topic.why(
                exc, self._consumer or self._producer, "READ"
            )  # the start reads the topic to its end
            await self.close()
            raise self._topic.error(
                f"Could not open {self.property_name} '{self.topic}' on {self._topic.bootstrap_servers}: {why}"
            ) from exc
        except BaseException:
            await self.close()
            raise
        log.info(
            "internal_topic.opened", topic=self.topic, property=self.property_name, partitions=len(self._tps)
        )

    async def close(self) -> None:
        """Send what is queued (bounded), then stop. Idempotent, safe before open."""
        if self._producer is not None and self._tasks:
            with contextlib.suppress(TimeoutError, KafkaError, EngineNotRunning):
                async with asyncio.timeout(5):
                    await self.flush()
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for client in (self._consumer, self._producer):
            if client is not None:
                with contextlib.suppress(KafkaError):
                    await client.stop()
        self._consumer = self._producer = None

    # ---- writing ----------------------------------------------------------------------------

    def send(self, key: str, value: bytes | None) -> None:
        """Queue a write; keys keep their order (one sender, the key picks the partition)."""
        if self._producer is None:
            raise EngineNotRunning(f"The {self.property_name} '{self.topic}' is not open")
        self._sequence += 1
        self._latest_own[key] = self._sequence
        self._queue.put_nowait((key, value, self._sequence))

    async def _send(self) -> None:
        producer = self._producer
        while True:
            key, value, sequence = await self._queue.get()
            try:
                headers = [(WRITER_HEADER, self._token + b":" + str(sequence).encode())]
                future = await producer.send(self.topic, value, key=key.encode(), headers=headers)
                add_outgoing(producer, record_size(key.encode(), value, headers))
                self._pending.add(future)
                future.add_done_callback(self._sent)
            except KafkaError as exc:
                log.error(
                    "internal_topic.write_failed",
                    topic=self.topic,
                    key=key,
                    error=self._topic.why(exc, producer, "WRITE"),
                )
            finally:
                self._queue.task_done()

    def _sent(self, future: asyncio.Future[Any]) -> None:
        self._pending.discard(future)
        if not future.cancelled() and (exc := future.exception()) is not None:
            log.error(
                "internal_topic.write_failed",
                topic=self.topic,
                error=self._topic.why(exc, self._producer, "WRITE"),
            )

    async def flush(self) -> None:
        """Return once every write queued before the call is acknowledged (or failed, logged)."""
        await self._queue.join()
        if self._pending:
            await asyncio.wait(list(self._pending))

    # ---- reading ----------------------------------------------------------------------------

    async def _read(self) -> None:
        consumer = self._consumer
        while True:
            try:
                batches = await consumer.getmany(timeout_ms=500)
            except ConsumerStoppedError:
                return
            except KafkaError as exc:
                log.warning("internal_topic.read_failed", topic=self.topic, error=describe(exc))
                await asyncio.sleep(0.5)
                continue
            for records in batches.values():
                add_incoming(consumer, fetched_size(records))
                for record in records:
                    self._apply(record)
            self._progress.set()

    def _apply(self, record: Any) -> None:
        key = record.key.decode("utf-8", "replace") if record.key is not None else ""
        for name, raw in record.headers or ():
            if name == WRITER_HEADER and raw.startswith(self._token + b":"):
                sequence = int(raw[len(self._token) + 1 :])
                if sequence < self._latest_own.get(key, 0):
                    return  # an older write of ours: the store already holds a newer value
                self._latest_own.pop(key, None)
        try:
            self._on_record(key, record.value)
        except Exception as exc:  # anyone can write here: no record may end the reader (and the worker)
            self.skipped += 1
            log.warning(
                "internal_topic.record_skipped",
                topic=self.topic,
                partition=record.partition,
                offset=record.offset,
                key=key[:200],
                reason=repr(exc)[:500],
            )

    async def read_to_end(self) -> None:
        """Return once everything written to the topic before the call has been applied."""
        await self._reached(await self._end_offsets())

    async def _end_offsets(self) -> dict[TopicPartition, int]:
        """Each partition's high-watermark from fresh fetches (ListOffsets is wrong on tansu)."""
        probe = self._topic.new_consumer("end-offsets")
        try:
            await start_client(probe)
            probe.assign(self._tps)
            await probe.seek_to_beginning(*self._tps)
            async with asyncio.timeout(_END_TIMEOUT_S):
                while any(probe.highwater(tp) is None for tp in self._tps):
                    await probe.getmany(timeout_ms=_FETCH_WAIT_MS, max_records=1)
            return {tp: int(probe.highwater(tp)) for tp in self._tps}
        except TimeoutError as exc:
            raise self._topic.error(
                f"Could not read the end of {self.property_name} '{self.topic}' within {_END_TIMEOUT_S:g} s"
            ) from exc
        finally:
            with contextlib.suppress(KafkaError):
                await probe.stop()

    async def _reached(self, ends: dict[TopicPartition, int]) -> None:
        consumer = self._consumer
        async with asyncio.timeout(_END_TIMEOUT_S):
            for tp, end in ends.items():
                while end > 0 and await consumer.position(tp) < end:
                    self._progress.clear()
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(0.1):  # a batch may land between the check and the wait
                            await self._progress.wait()


class TopicBacked:
    """A store mirrored from an internal topic: its lifecycle is its log's."""

    log: KafkaBackingLog

    async def open(self) -> None:
        await self.log.open()

    async def close(self) -> None:
        await self.log.close()

    async def flush(self) -> None:
        """Return once every write so far is acknowledged (Connect flushes statuses before rebalances)."""
        await self.log.flush()
