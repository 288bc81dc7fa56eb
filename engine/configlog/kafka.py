"""The config log as a single-partition compacted Kafka topic, like Connect's KafkaConfigBackingStore."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import structlog
from aiokafka import TopicPartition
from aiokafka.errors import ConsumerStoppedError, KafkaError

from engine.config.kafka_clients.accounting import add_incoming, add_outgoing, fetched_size, record_size
from engine.config.kafka_clients.starting import start_client
from engine.configlog.base import LogEntry, RawRecord
from engine.errors import ConfigLogError, EngineNotRunning
from engine.storage.internal_topic import InternalTopic
from engine.storage.kafka_topic_admin import CONFIG_PROPERTY, describe

log = structlog.get_logger(component="configlog")

# Why a probe waits at all: tansu leaves the partition out of a fetch response when there is
# nothing to return and max_wait is 0, so the high-watermark would never arrive.
_PROBE_WAIT_MS = 10
# tansu answers a waiting fetch only when max_wait runs out, not when a record arrives: this
# bounds how long the reader takes to see an append on such a broker.
_TAIL_WAIT_MS = 100
# noida answers an empty fetch at once instead of holding it for max_wait, so aiokafka's fetcher
# re-fetches ~2,600 times a second (a whole core) while the reader is idle. When empty answers come
# faster than a long poll could, the caught-up reader pauses the partition until this log appends
# or _IDLE_S passes; brokers that hold the fetch are never paused.
_SLICE_MS = 10
_IDLE_S = 0.25
_END_OFFSET_TIMEOUT_S = 30.0


class KafkaConfigLog:
    """Appends go to partition 0 of a compacted topic; one manually assigned consumer reads it back.

    ``end_offset`` trusts only the fetch high-watermark: ListOffsets (``end_offsets``,
    ``seek_to_end``) answers with the last batch's base offset + 1 on tansu, which is wrong
    after any multi-record batch.
    """

    def __init__(
        self,
        bootstrap_servers: str,
        topic: str,
        *,
        replication_factor: int = 1,
        client_id: str = "connect-engine",
        client_args: Mapping[str, Any] | None = None,
        auto_create: bool = True,
    ) -> None:
        self.bootstrap_servers = bootstrap_servers
        self.topic = topic
        self.replication_factor = replication_factor
        self.client_id = client_id
        self._topic = InternalTopic(
            bootstrap_servers,
            topic,
            property_name=CONFIG_PROPERTY,
            client_id=f"{client_id}-configlog",
            producer_client_id=client_id,
            client_args=client_args,  # the worker's security settings (KafkaClients.own())
            auto_create=auto_create,  # internal.topics.automatic.creation.enable (KIP-1209)
        )
        self._tp = TopicPartition(topic, 0)
        self._producer: Any = None
        self._consumer: Any = None
        self._reader_taken = False
        self._closed = True
        self._known_end = 0  # a lower bound on the end, so the end-offset probe starts near it
        self._appended_end = 0  # the reader is not caught up before it has read our own appends
        self._write_lock = asyncio.Lock()
        self._wake = asyncio.Event()

    # ---- lifecycle ------------------------------------------------------------------------

    async def open(self) -> None:
        """Create or check the topic, then start the producer and the reader."""
        if not self._closed:
            return
        try:
            await self._topic.ensure(
                partitions=1, replication_factor=self.replication_factor, single_partition=True
            )
            self._producer = self._topic.new_producer()
            await start_client(self._producer)
            self._consumer = self._topic.new_consumer("reader", fetch_max_wait_ms=_TAIL_WAIT_MS)
            await start_client(self._consumer)
            self._consumer.assign([self._tp])
        except KafkaError as exc:
            await self._stop_clients()
            raise ConfigLogError(
                f"Could not open config topic '{self.topic}' on {self.bootstrap_servers}: {describe(exc)}",
                topic=self.topic,
            ) from exc
        except BaseException:
            await self._stop_clients()
            raise
        self._closed = False
        self._reader_taken = False
        log.info("configlog.opened", topic=self.topic, bootstrap_servers=self.bootstrap_servers)

    async def close(self) -> None:
        """Stop the clients; a pending ``entries`` iteration ends. Idempotent, safe before open."""
        was_open = not self._closed
        self._closed = True
        self._wake.set()
        await self._stop_clients()
        if was_open:
            log.info("configlog.closed", topic=self.topic)

    async def _stop_clients(self) -> None:
        producer, consumer = self._producer, self._consumer
        self._producer = self._consumer = None
        for client in (consumer, producer):
            if client is not None:
                with contextlib.suppress(KafkaError):
                    await client.stop()

    # ---- writing --------------------------------------------------------------------------

    async def append(self, records: Sequence[RawRecord]) -> int:
        """Send in order to partition 0 and wait for every ack.

        The sends are serialised, so appends never interleave; their acks are awaited outside the
        lock, so the appends made while one is in flight go out together in the next produce request
        (the producer keeps one request in flight per broker, in order) instead of one round trip
        each: a leader writing a burst of creates and its followers' task configs."""
        if not records:
            raise ValueError("append needs at least one record")
        producer = self._require(self._producer)
        try:
            async with self._write_lock:
                pending = [
                    await producer.send(self.topic, value, key=key.encode(), partition=0)
                    for key, value in records
                ]
            add_outgoing(producer, sum(record_size(key.encode(), value) for key, value in records))
            offsets = [(await ack).offset for ack in pending]
        except KafkaError as exc:
            why = self._topic.why(exc, producer, "WRITE")
            raise ConfigLogError(
                f"Could not write to config topic '{self.topic}': {why}", topic=self.topic
            ) from exc
        last = int(offsets[-1])
        self._known_end = max(self._known_end, last + 1)
        self._appended_end = max(self._appended_end, last + 1)
        self._wake.set()
        return last

    # ---- reading --------------------------------------------------------------------------

    async def end_offset(self) -> int:
        """The high-watermark from a fetch sent after this call began, so every acked append counts
        (and never below this log's own acknowledged appends).

        A fresh consumer guarantees that no fetch answered before the call is reused. It starts one
        record before the known end, so a non-empty topic answers at once.
        """
        self._require(self._consumer)
        probe = self._topic.new_consumer("end-offset", fetch_max_wait_ms=_PROBE_WAIT_MS)
        try:
            await start_client(probe)
            probe.assign([self._tp])
            probe.seek(self._tp, max(self._known_end - 1, 0))
            async with asyncio.timeout(_END_OFFSET_TIMEOUT_S):
                while probe.highwater(self._tp) is None:
                    if self._closed:
                        raise EngineNotRunning("The config log is closed")
                    await probe.getmany(self._tp, timeout_ms=_PROBE_WAIT_MS, max_records=1)
            high = int(probe.highwater(self._tp))
        except TimeoutError as exc:
            raise ConfigLogError(
                f"Could not read the end of config topic '{self.topic}': no fetch answered "
                f"within {_END_OFFSET_TIMEOUT_S:g} s",
                topic=self.topic,
            ) from exc
        except KafkaError as exc:
            why = self._topic.why(exc, probe, "READ")
            raise ConfigLogError(
                f"Could not read the end of config topic '{self.topic}': {why}", topic=self.topic
            ) from exc
        finally:
            with contextlib.suppress(KafkaError):
                await probe.stop()
        self._known_end = max(self._known_end, high)
        # right after a leader change the new leader's high-watermark can lag (KIP-207): never answer
        # below what this log had appended and been acknowledged
        return max(high, self._appended_end)

    def entries(self) -> AsyncIterator[LogEntry]:
        """Every record from the beginning, then new ones until ``close``; one reader per ``open``."""
        consumer = self._require(self._consumer)
        if self._reader_taken:
            raise RuntimeError("KafkaConfigLog.entries() allows one reader per open()")
        self._reader_taken = True
        return self._read(consumer)

    async def _read(self, consumer: Any) -> AsyncIterator[LogEntry]:
        tp = self._tp
        while not self._closed:
            try:
                answered = consumer.last_poll_timestamp(tp)
                batch = await consumer.getmany(tp, timeout_ms=_SLICE_MS)
                records = batch.get(tp)
                add_incoming(consumer, fetched_size(records or ()))
                if not records:
                    latest = consumer.last_poll_timestamp(tp)
                    if (
                        answered is not None
                        and latest is not None
                        and latest != answered
                        and latest - answered < _TAIL_WAIT_MS // 2
                        and await self._caught_up(consumer)
                    ):
                        await self._idle(consumer)
                    continue
            except ConsumerStoppedError:
                return
            except KafkaError as exc:
                why = self._topic.why(exc, consumer, "READ")
                raise ConfigLogError(
                    f"Could not read config topic '{self.topic}': {why}", topic=self.topic
                ) from exc
            for record in records:
                offset = int(record.offset)
                self._known_end = max(self._known_end, offset + 1)
                # an undecodable key still yields, so the herder can count and skip it
                key = record.key.decode("utf-8", "backslashreplace") if record.key is not None else ""
                yield LogEntry(offset, key, record.value)

    async def _caught_up(self, consumer: Any) -> bool:
        high = consumer.highwater(self._tp)
        position = await consumer.position(self._tp)
        return high is not None and position >= max(int(high), self._appended_end)

    async def _idle(self, consumer: Any) -> None:
        """Stop fetching until this log appends, it closes, or ``_IDLE_S`` passes (for others' writes)."""
        self._wake.clear()
        consumer.pause(self._tp)
        try:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(_IDLE_S):
                    await self._wake.wait()
        finally:
            if not self._closed:
                consumer.resume(self._tp)

    def _require(self, client: Any) -> Any:
        if self._closed or client is None:
            raise EngineNotRunning("The config log is not open")
        return client
