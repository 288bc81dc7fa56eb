"""The Topics protocol: the data plane every source and sink task loop talks to
(``docs/ARCHITECTURE.md``, "Data plane").

Shapes follow Kafka's clients so a task loop is written once for the in-process log and for Kafka:

* ``Producer.send`` is a plain call that queues the record *in call order* and returns a future
  resolving to its ``RecordMetadata`` once the log acknowledged it (Kafka: ``acks=all``). Await
  it at once, or collect futures and await them together; ``flush`` waits for every queued send.
  ``send_batch`` queues a whole list the same way (in order with ``send``) and returns *one*
  future for it, resolving to a ``BatchAck`` that holds each record's outcome: a source task's
  ``poll()`` batch costs one future, not one per record (Kafka's clients batch the same way below
  their per-record API).
* ``Consumer`` is a group member. On every rebalance ``on_revoke`` is awaited with the *whole*
  previous assignment (skipped when it was empty), then ``on_assign`` with the whole new one
  (possibly empty): the eager protocol, as aiokafka runs it. In memory both run inside the
  member's ``getmany``; on Kafka, aiokafka runs them on its coordinator task, so they can
  interleave with the owner's code at any ``await``. A callback that raises is logged, and the
  rebalance goes on. ``close`` leaves the group without ``on_revoke``: commit before closing. Offsets given
  to ``commit`` are the next offset to read, as in Kafka.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol, runtime_checkable

from engine.api.identity import TopicIdentity
from engine.topics.errors import TopicsError

OUT_OF_RANGE = "out_of_range"  # an OffsetReset's reasons
IDENTITY_MISMATCH = "identity"

Headers = Sequence[tuple[str, bytes | None]]  # a null header value is allowed, as in Kafka


class TopicPartition(NamedTuple):
    """Equal to (and hashes like) aiokafka's ``TopicPartition``: both are ``(topic, partition)`` tuples."""

    topic: str
    partition: int


@dataclass(frozen=True, slots=True)
class RecordMetadata:
    """Where an acknowledged record landed."""

    topic: str
    partition: int
    offset: int
    timestamp: int  # milliseconds since the epoch


class ConsumedRecord(NamedTuple):
    """A record as the log holds it. A named tuple, not a dataclass: one is built per record read,
    and a tuple is built several times faster (equal and immutable all the same)."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None  # None is a tombstone
    headers: tuple[tuple[str, bytes | None], ...]
    timestamp: int  # milliseconds since the epoch

    @property
    def tp(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)


class Truncation(NamedTuple):
    """A partition's log found to have diverged below a consumer's position (an unclean leader
    election, a broker back with a shorter log): the consumer now reads again from ``diverged_at``."""

    tp: TopicPartition
    position: int  # the offset the consumer was to read next
    diverged_at: int  # where the log it reads now stops agreeing with what it had read

    @property
    def redelivered(self) -> int:
        """Records read again: those between the divergence point and the old position."""
        return self.position - self.diverged_at


class OffsetReset(NamedTuple):
    """A position not applied: one the log answered out of range (beyond its end, or below its start
    after retention or a re-created topic; ``reason`` ``out_of_range``), or a committed one that counts
    in another log (another cluster, an older topic of the same name; ``reason`` ``identity``, with
    both identities). The consumer moved it by ``auto.offset.reset``."""

    tp: TopicPartition
    position: int  # the offset the consumer was to read next
    reset: str  # the auto.offset.reset that moved it: earliest or latest
    reset_to: int  # where it reads now (-1: not known yet, for an identity reset)
    reason: str = OUT_OF_RANGE
    stored: TopicIdentity | None = None  # the identity the position was stored with
    live: TopicIdentity | None = None  # the identity of the topic read now


class OutgoingRecord(NamedTuple):
    """One record for ``Producer.send_batch``: ``send``'s arguments, in its order."""

    topic: str
    key: bytes | None
    value: bytes | None
    headers: Headers = ()
    partition: int | None = None


class BatchAck:
    """What one ``send_batch`` came to: for record ``i`` (its index in the batch) its error, or where
    it landed. Records are grouped in spans (consecutive offsets of one partition), so a batch costs
    no object per record; ``metadata(i)`` builds one on request."""

    __slots__ = ("_index", "_spans", "errors", "size")

    def __init__(self, size: int) -> None:
        self.size = size
        self.errors: dict[int, BaseException] = {}  # index -> why that record was not written
        self._spans: list[tuple[str, int, int, list[int], list[int]]] = []
        self._index: dict[int, tuple[int, int]] | None = None

    def add_span(
        self, topic: str, partition: int, base_offset: int, indices: list[int], timestamps: list[int]
    ) -> None:
        """Records ``indices`` (in order) were written at ``base_offset``, ``base_offset + 1``, ..."""
        self._spans.append((topic, partition, base_offset, indices, timestamps))
        self._index = None

    def fail(self, index: int, error: BaseException) -> None:
        self.errors[index] = error

    @property
    def topics(self) -> set[str]:
        """Every topic at least one record of the batch was written to."""
        return {span[0] for span in self._spans}

    def metadata(self, index: int) -> RecordMetadata:
        """Where record ``index`` landed; ``KeyError`` for a record that failed."""
        if self._index is None:
            self._index = {
                i: (n, position) for n, span in enumerate(self._spans) for position, i in enumerate(span[3])
            }
        n, position = self._index[index]
        topic, partition, base, _, timestamps = self._spans[n]
        return RecordMetadata(topic, partition, base + position, timestamps[position])


def require_key_or_value(topic: str, key: bytes | None, value: bytes | None) -> None:
    """aiokafka cannot send a record with neither, so no implementation accepts one."""
    if key is None and value is None:
        raise TopicsError(f"A record for topic '{topic}' needs a key or a value; it had neither")


RebalanceCallback = Callable[[frozenset[TopicPartition]], Awaitable[None]]


async def _no_callback(partitions: frozenset[TopicPartition]) -> None:
    """The default listener: nothing to do."""


NO_CALLBACK: RebalanceCallback = _no_callback


class Producer(Protocol):
    def send(
        self,
        topic: str,
        key: bytes | None,
        value: bytes | None,
        headers: Headers = (),
        partition: int | None = None,
    ) -> Awaitable[RecordMetadata]:
        """Queue one record; the result resolves on acknowledgement or raises ``TopicsError``.

        A record needs a key or a value (a tombstone has a key). With ``partition=None`` a key goes to ``murmur2(key) % partitions`` (Kafka's default
        partitioner) and a null key round-robins over the topic's partitions.
        """
        ...

    def send_batch(self, records: Sequence[OutgoingRecord]) -> Awaitable[BatchAck]:
        """Queue every record, in order, as ``send`` would; the one result resolves once each of them
        is acknowledged or failed (the ``BatchAck`` says which). It raises only when the producer is
        closed; a record refused (no key nor value, an unknown topic) fails alone, in ``errors``."""
        ...

    async def flush(self) -> None:
        """Wait until every record sent so far is acknowledged (or failed)."""
        ...


class OwnProducer(Producer, Protocol):
    """A producer with a client of its own (``Topics.producer_with``): its owner closes it."""

    async def close(self) -> None:
        """Wait for what was sent, then release the client; idempotent."""
        ...


class Consumer(Protocol):
    async def getmany(self, timeout_ms: int = 0, max_records: int | None = None) -> list[ConsumedRecord]:
        """Records from the assigned, unpaused partitions, in order per partition; waits up to
        ``timeout_ms`` for the first one. Rebalance callbacks may run while it waits."""
        ...

    def seek(self, tp: TopicPartition, offset: int) -> None: ...

    async def position(self, tp: TopicPartition) -> int:
        """The offset of the next record ``getmany`` returns for an assigned partition."""
        ...

    async def commit(self, offsets: Mapping[TopicPartition, int]) -> None:
        """Store the group's next-offset-to-read for assigned partitions."""
        ...

    async def committed(self, tp: TopicPartition) -> int | None: ...

    def pause(self, tps: Collection[TopicPartition]) -> None: ...

    def resume(self, tps: Collection[TopicPartition]) -> None: ...

    def assignment(self) -> frozenset[TopicPartition]: ...

    def offset_resets(self) -> list[OffsetReset]:
        """Positions the log answered out of range since the last call (and forgotten): each was moved
        by ``auto.offset.reset``, as Kafka's consumer moves it on OFFSET_OUT_OF_RANGE. Only the log
        decides that (the broker, or the in-process log playing it): a log end the consumer saw last
        can lag a leader change (KIP-207), so it is never a reason to move."""
        ...

    async def identity(self, topic: str) -> TopicIdentity | None:
        """The identity of ``topic`` (asked once per assignment); None if the log names none."""
        ...

    def truncations(self) -> list[Truncation]:
        """Truncations found since the last call (and forgotten): each already moved its partition's
        position back to the divergence point. Only Kafka topics detect them (leader epochs)."""
        ...

    async def close(self) -> None:
        """Leave the group (the others rebalance); idempotent. ``on_revoke`` is not called."""
        ...


class Topics(Protocol):
    async def open(self) -> None: ...

    async def close(self) -> None:
        """Close every producer and consumer made here; idempotent, safe before ``open``."""
        ...

    async def create_topic(
        self,
        name: str,
        partitions: int = 1,
        configs: Mapping[str, str] | None = None,
        client_config: Mapping[str, Any] | None = None,
        *,
        replication_factor: int | None = None,
    ) -> bool:
        """Create the topic if it does not exist; True if this call created it.

        ``client_config``: a connector's Kafka admin client arguments (``admin.override.*``); a broker's
        topics use them, in-process ones have no client to apply them to. ``replication_factor``: a
        broker's copies of each partition (-1: the broker's ``default.replication.factor``; None: the
        backend's own); in-process topics have one copy.
        """
        ...

    async def list_topics(self) -> list[str]:
        """Every topic's name, sorted (a broker's internal topics left out)."""
        ...

    async def partitions(self, name: str) -> int:
        """How many partitions the topic has; ``UnknownTopic`` if it does not exist."""
        ...

    def producer(self) -> Producer:
        """The producer every source task of the worker shares (connectors' ``producer.*`` settings)."""
        ...

    async def open_producer(self) -> None:
        """Start the shared producer unless it runs: a task awaits it before its first record, so a
        producer that cannot reach the broker fails that task (``TopicsError``), never the worker."""
        ...

    async def producer_with(self, client_config: Mapping[str, Any]) -> OwnProducer:
        """A producer of its own for a connector's Kafka producer arguments (``producer.override.*``),
        released by its ``close``; in-process topics have no client to apply them to."""
        ...

    async def consumer(
        self,
        group_id: str,
        topics: Collection[str],
        on_assign: RebalanceCallback = NO_CALLBACK,
        on_revoke: RebalanceCallback = NO_CALLBACK,
        client_config: Mapping[str, Any] | None = None,
    ) -> Consumer:
        """A started group member subscribed to ``topics``; its assignment arrives during ``getmany``.

        ``client_config``: a connector's Kafka consumer arguments (worker-level and ``consumer.override.*``).

        A group with no committed offset for a partition starts at its earliest record
        (Connect's sink default, ``auto.offset.reset=earliest``).
        """
        ...

    async def group_offsets(self, group_id: str) -> dict[TopicPartition, int]:
        """The group's committed offsets (a sink connector's KIP-875 ``GET .../offsets``)."""
        ...

    async def alter_group_offsets(self, group_id: str, offsets: Mapping[TopicPartition, int | None]) -> None:
        """Set (an offset) or remove (None) committed offsets of a group with no live member.

        ``GroupNotEmpty`` while a member is still in the group (Kafka's admin client refuses too).
        """
        ...

    async def delete_group(self, group_id: str) -> None:
        """Forget every committed offset of a group with no live member (KIP-875 reset of a sink)."""
        ...


@runtime_checkable
class ClusterTopics(Protocol):
    """Topics that can name their cluster (both implementations; a test double may not)."""

    async def lookup_cluster_id(self) -> str | None:
        """The cluster's id; None for topics that do not outlive the process."""
        ...
