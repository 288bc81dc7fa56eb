"""``MemoryProducer``: a producer over the in-process topics, which append at once."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from typing import Protocol

from engine.errors import EngineNotRunning
from engine.topics.base import BatchAck, Headers, OutgoingRecord, RecordMetadata
from engine.topics.errors import TopicsError
from engine.topics.partitioner import Partitioner


class Appender(Protocol):
    """What a producer needs of ``MemoryTopics``: named here so this module need not import it back."""

    def append(
        self,
        topic: str,
        partition: int | None,
        key: bytes | None,
        value: bytes | None,
        headers: Headers,
        partitioner: Partitioner,
    ) -> RecordMetadata: ...

    def append_batch(self, records: Sequence[OutgoingRecord], partitioner: Partitioner) -> BatchAck: ...


class MemoryProducer:
    """Appends at once: the returned future is already resolved (or failed)."""

    def __init__(self, topics: Appender) -> None:
        self._topics = topics
        self._partitioner = Partitioner()

    def send(
        self,
        topic: str,
        key: bytes | None,
        value: bytes | None,
        headers: Headers = (),
        partition: int | None = None,
    ) -> Awaitable[RecordMetadata]:
        future: asyncio.Future[RecordMetadata] = asyncio.get_running_loop().create_future()
        try:
            future.set_result(self._topics.append(topic, partition, key, value, headers, self._partitioner))
        except (TopicsError, EngineNotRunning, OSError) as exc:
            future.set_exception(exc)
        return future

    def send_batch(self, records: Sequence[OutgoingRecord]) -> Awaitable[BatchAck]:
        future: asyncio.Future[BatchAck] = asyncio.get_running_loop().create_future()
        future.set_result(self._topics.append_batch(records, self._partitioner))
        return future

    async def flush(self) -> None:
        """Nothing is ever pending."""

    async def close(self) -> None:
        """Nothing to release: every producer shares the topics."""
