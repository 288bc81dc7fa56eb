"""The in-process topics: the embedded default, optionally kept in files so data survives a restart.

``MemoryTopics`` here; its clients (``producer``, ``consumer``) and ``wakeup`` have a module each.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
import uuid
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

import structlog

from engine.api.identity import TopicIdentity
from engine.errors import EngineNotRunning
from engine.topics.backing import Event, OffsetsCommitted, PartitionState, TopicCreated, TopicJournal
from engine.topics.base import (
    NO_CALLBACK,
    BatchAck,
    ConsumedRecord,
    Headers,
    OutgoingRecord,
    RebalanceCallback,
    RecordMetadata,
    TopicPartition,
    require_key_or_value,
)
from engine.topics.errors import GroupNotEmpty, TopicsError, UnknownTopic
from engine.topics.groups import Group, Member
from engine.topics.log_config import LogConfig
from engine.topics.memory.consumer import MemoryConsumer
from engine.topics.memory.producer import MemoryProducer
from engine.topics.memory.wakeup import Wakeup
from engine.topics.partition_log import PartitionLog
from engine.topics.partitioner import Partitioner
from engine.topics.segment import Segment

log = structlog.get_logger(component="topics")

__all__ = ["MemoryConsumer", "MemoryProducer", "MemoryTopics"]

JOURNAL_BYTES = 4 * 1024 * 1024
_RESETS = ("earliest", "latest")


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def _kept_cluster_id(path: Path) -> str:
    """The cluster id in ``path``, written there first if there is none (or it is unreadable)."""
    with contextlib.suppress(OSError, ValueError):
        return uuid.UUID(path.read_text(encoding="ascii").strip()).hex
    cluster_id = uuid.uuid4().hex
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(cluster_id + "\n", encoding="ascii")
    return cluster_id


class MemoryTopics:
    """Partitions are ``PartitionLog``s; one event, replaced on every change, wakes waiting consumers.

    With ``path`` every topic creation, append and offset commit is journaled there before it
    applies, and ``open`` replays the journal. Once ``journal_bytes`` were journaled, a checkpoint
    writes the new records into segment files under ``<path>.segments/`` and rewrites the journal
    to the state alone, so memory holds only the records since the last checkpoint and start-up
    reads the journal and the segment files' first and last lines, whatever the history.

    Each topic's retention, compaction and segments follow its configs (``log_config``) over
    ``topic_defaults``; ``maintain`` applies them, every ``retention_check_interval_ms`` while
    open (Kafka's ``log.retention.check.interval.ms``; 0: only when called). ``clock`` gives
    record timestamps and retention's "now" in milliseconds. Sending to a missing topic creates
    it with one partition, as a broker with ``auto.create.topics.enable`` does, unless
    ``auto_create=False``.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        fsync: bool = False,
        auto_create: bool = True,
        rebalance_timeout_ms: int = 30_000,
        topic_defaults: Mapping[str, str] | None = None,
        clock: Callable[[], int] = _now_ms,
        journal_bytes: int = JOURNAL_BYTES,
        retention_check_interval_ms: int = 300_000,
    ) -> None:
        self.path = path
        self.auto_create = auto_create
        self.rebalance_timeout_s = rebalance_timeout_ms / 1000
        self.topic_defaults = dict(topic_defaults or {})
        LogConfig.parse({}, self.topic_defaults)  # a bad default fails here, not at the first topic
        self._fsync = fsync
        self._clock = clock
        self._journal_bytes = journal_bytes
        self._check_interval_s = retention_check_interval_ms / 1000
        self._segments = None if path is None else Path(f"{os.fspath(path)}.segments")
        self._journal: TopicJournal | None = None
        self._topics: dict[str, list[PartitionLog]] = {}
        self._configs: dict[str, dict[str, str]] = {}
        self._offsets: dict[str, dict[TopicPartition, int]] = {}
        self._groups: dict[str, Group] = {}
        self._consumers: set[MemoryConsumer] = set()
        self._wakeup = Wakeup()
        self._open = False
        self._maintainer: asyncio.Task[None] | None = None
        self._cluster_id = uuid.uuid4().hex  # kept beside the journal when there is one (``open``)

    # ---- lifecycle ------------------------------------------------------------------------

    async def open(self) -> None:
        """Replay the journal if there is one; without a file, reopening keeps what was written."""
        if self._open:
            return
        if self.path is not None:
            self._topics, self._configs, self._offsets = {}, {}, {}
            self._cluster_id = _kept_cluster_id(Path(f"{os.fspath(self.path)}.cluster-id"))
            self._journal = TopicJournal(self.path, fsync=self._fsync)
            for event in self._journal.open():
                self._replay(event)
        self._open = True
        if self._journal is not None and self._journal.appended >= self._journal_bytes:
            self._checkpoint()  # a journal from before checkpoints, or one a crash left long
        self._expire(self._logs())
        if self._check_interval_s > 0:
            self._maintainer = asyncio.create_task(self._maintain_periodically(), name="topics-retention")

    @property
    def cluster_id(self) -> str:
        """This log's cluster id: made once and kept beside the journal (a new directory is a new cluster)."""
        return self._cluster_id

    async def lookup_cluster_id(self) -> str | None:
        """This log's cluster id, when it outlives the process (topics kept in a file); else None: the
        topics of one process are new each time, so nothing stored elsewhere can be checked against them."""
        return None if self.path is None else self._cluster_id

    def identity(self, topic: str) -> TopicIdentity | None:
        """An in-process topic's identity. Topics here are never deleted, so a name stays one topic
        for the life of the data: its id is derived from the cluster id and the name."""
        if topic not in self._topics:
            return None
        return TopicIdentity(self._cluster_id, str(uuid.uuid5(uuid.UUID(self._cluster_id), topic)))

    def _replay(self, event: Event) -> None:
        if isinstance(event, TopicCreated):
            if event.name not in self._topics:
                self._add(event.name, event.partitions, event.configs, replaying=True)
        elif isinstance(event, OffsetsCommitted):
            committed = self._offsets.setdefault(event.group, {})
            committed.update(event.offsets)
            for tp in [tp for tp, offset in event.offsets.items() if offset < 0]:
                del committed[tp]  # an offset removed by KIP-875 administration
        elif isinstance(event, PartitionState):
            if (partition := self._partition_log(event.topic, event.partition)) is not None:
                for segment in partition.restore(event.start, event.next, event.cleaned):
                    segment.delete()
        elif (
            partition := self._partition_log(event.topic, event.partition)
        ) is not None and event.offset >= max(
            partition.next, partition.start
        ):  # lower: already in a segment file, or dropped
            partition.append(event, event.timestamp)

    def _partition_log(self, topic: str, partition: int) -> PartitionLog | None:
        logs = self._topics.get(topic, ())
        return logs[partition] if 0 <= partition < len(logs) else None

    def _logs(self) -> Iterator[PartitionLog]:
        return (partition for logs in list(self._topics.values()) for partition in logs)

    async def close(self) -> None:
        if self._maintainer is not None:
            self._maintainer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._maintainer
            self._maintainer = None
        for consumer in list(self._consumers):
            await consumer.close()
        self._open = False
        if self._journal is not None:
            self._journal.close()
            self._journal = None
        self.wake()

    def _require_open(self) -> None:
        if not self._open:
            raise EngineNotRunning("The topics are not open")

    # ---- topics ---------------------------------------------------------------------------

    async def create_topic(
        self,
        name: str,
        partitions: int = 1,
        configs: Mapping[str, str] | None = None,
        client_config: Mapping[str, Any] | None = None,
        *,
        replication_factor: int | None = None,
    ) -> bool:
        self._require_open()  # client_config, replication_factor: no Kafka client, one copy in memory
        return self._create(name, partitions, configs or {})

    def _create(self, name: str, partitions: int, configs: Mapping[str, str]) -> bool:
        if partitions < 1:
            raise TopicsError(f"Topic '{name}' needs at least one partition, not {partitions}")
        if name in self._topics:
            return False
        LogConfig.parse(configs, self.topic_defaults)  # refused before it is journaled
        if self._journal is not None:
            self._journal.topic(name, partitions, configs)
        self._add(name, partitions, configs)
        log.info("topics.topic_created", topic=name, partitions=partitions)
        for group in self._groups.values():
            if group.subscribes_to(name):
                group.rebalance()
        return True

    def _add(
        self, name: str, partitions: int, configs: Mapping[str, str], *, replaying: bool = False
    ) -> None:
        try:
            config = LogConfig.parse(configs, self.topic_defaults)
        except TopicsError as exc:
            if not replaying:
                raise
            log.warning("topics.topic_configs_ignored", topic=name, reason=str(exc))
            config = LogConfig.parse({}, self.topic_defaults)
        self._topics[name] = [
            PartitionLog(TopicPartition(name, p), config, self._directory(name, p)) for p in range(partitions)
        ]
        self._configs[name] = dict(configs)

    def _directory(self, topic: str, partition: int) -> Path | None:
        """``<topic>-<partition>`` as Kafka names it, the topic quoted so any name is one directory."""
        return None if self._segments is None else self._segments / f"{quote(topic, safe='')}-{partition}"

    async def list_topics(self) -> list[str]:
        self._require_open()
        return sorted(self._topics)

    async def partitions(self, name: str) -> int:
        self._require_open()
        if name not in self._topics:
            raise UnknownTopic(name)
        return len(self._topics[name])

    def partition_count(self, name: str) -> int:
        """0 for a missing topic: a group subscribed to it is assigned nothing until it appears."""
        return len(self._topics.get(name, ()))

    def partition_log(self, tp: TopicPartition) -> PartitionLog:
        return self._topics[tp.topic][tp.partition]

    def records(self, tp: TopicPartition) -> list[ConsumedRecord]:
        """What the partition retains; ``KeyError`` for a missing topic."""
        return self.partition_log(tp).records()

    # ---- writing --------------------------------------------------------------------------

    def append(
        self,
        topic: str,
        partition: int | None,
        key: bytes | None,
        value: bytes | None,
        headers: Headers,
        partitioner: Partitioner,
    ) -> RecordMetadata:
        self._require_open()
        record = self._append(topic, partition, key, value, headers, partitioner, self._clock())
        self.wake()
        self._checkpoint_if_due()
        return RecordMetadata(topic, record.partition, record.offset, record.timestamp)

    def append_batch(self, records: Sequence[OutgoingRecord], partitioner: Partitioner) -> BatchAck:
        """Append each record in order (one that is refused fails alone); one wake-up for the batch."""
        self._require_open()
        ack = BatchAck(len(records))
        now = self._clock()
        spans: dict[tuple[str, int], tuple[int, list[int], list[int]]] = {}
        append = self._append
        for i, (topic, key, value, headers, partition) in enumerate(records):
            try:
                record = append(topic, partition, key, value, headers, partitioner, now)
            except (TopicsError, OSError) as exc:
                ack.fail(i, exc)
                continue
            span = spans.get((topic, record.partition))
            if span is None or span[0] + len(span[1]) != record.offset:  # a new run of offsets
                if span is not None:
                    ack.add_span(topic, record.partition, *span)
                span = spans[(topic, record.partition)] = (record.offset, [], [])
            span[1].append(i)
            span[2].append(now)
        for (topic, partition), span in spans.items():
            ack.add_span(topic, partition, *span)
        if spans:
            self.wake()
            self._checkpoint_if_due()
        return ack

    def _append(
        self,
        topic: str,
        partition: int | None,
        key: bytes | None,
        value: bytes | None,
        headers: Headers,
        partitioner: Partitioner,
        now: int,
    ) -> ConsumedRecord:
        require_key_or_value(topic, key, value)
        if topic not in self._topics:
            if not self.auto_create:
                raise UnknownTopic(topic)
            self._create(topic, 1, {})
        partitions = self._topics[topic]
        if partition is None:
            partition = partitioner.partition(key, len(partitions))
        elif not 0 <= partition < len(partitions):
            raise TopicsError(f"Topic '{topic}' has no partition {partition} (it has {len(partitions)})")
        target = partitions[partition]
        if key is None and target.config.compact:
            raise TopicsError(
                f"Compacted topic cannot accept message without key in topic partition {topic}-{partition}."
            )
        record = ConsumedRecord(
            topic,
            partition,
            target.next,
            key,
            value,
            tuple([(str(name), None if data is None else bytes(data)) for name, data in headers])
            if headers
            else (),
            now,
        )
        if self._journal is not None:
            self._journal.record(record)
        if target.append(record, now):
            self._expire([target])
        return record

    def producer(self) -> MemoryProducer:
        return MemoryProducer(self)

    async def open_producer(self) -> None:
        """Nothing to connect in process."""

    async def producer_with(self, client_config: Mapping[str, Any]) -> MemoryProducer:
        """A producer like any other: in process there is no Kafka client to apply ``client_config`` to."""
        return MemoryProducer(self)

    # ---- retention, compaction and checkpoints -------------------------------------------

    async def maintain(self) -> None:
        """Apply retention and compaction now."""
        self._require_open()
        self._expire(self._logs())
        for partition in list(self._logs()):
            try:
                if await partition.compact(self._clock()):
                    log.info(
                        "topics.compacted",
                        topic=partition.tp.topic,
                        partition=partition.tp.partition,
                        segments=len(partition.segments),
                        bytes=partition.size(),
                    )
            except OSError as exc:
                log.warning(
                    "topics.compaction_failed",
                    topic=partition.tp.topic,
                    partition=partition.tp.partition,
                    error=repr(exc),
                )

    async def _maintain_periodically(self) -> None:
        while True:
            await asyncio.sleep(self._check_interval_s)
            try:
                await self.maintain()
            except (OSError, EngineNotRunning) as exc:
                log.error("topics.maintenance_failed", error=repr(exc))

    def _expire(self, logs: Iterable[PartitionLog]) -> None:
        """Retention: make each new log start offset durable, then delete what it dropped."""
        now = self._clock()
        for partition in logs:
            doomed = partition.expire(now)
            if not doomed:
                continue
            if self._journal is not None:
                self._journal.append(self._state_of(partition))
            self._delete(partition, doomed)

    def _checkpoint_if_due(self) -> None:
        if self._journal is not None and self._journal.appended >= self._journal_bytes:
            try:
                self._checkpoint()
            except OSError as exc:  # what was journaled is safe, and the next change tries again
                log.error("topics.checkpoint_failed", path=str(self.path), error=repr(exc))

    def _checkpoint(self) -> None:
        """Write every partition's new records into its segment files, then rewrite the journal to the state alone."""
        assert self._journal is not None
        now = self._clock()
        doomed: list[tuple[PartitionLog, list[Segment]]] = []
        for partition in self._logs():
            partition.flush(now)
            doomed.append((partition, partition.expire(now)))
        self._journal.rewrite(self._state())
        for partition, segments in doomed:
            self._delete(partition, segments)

    def _delete(self, partition: PartitionLog, segments: list[Segment]) -> None:
        for segment in segments:
            segment.delete()
        if segments:
            log.info(
                "topics.retention_applied",
                topic=partition.tp.topic,
                partition=partition.tp.partition,
                segments_deleted=len(segments),
                log_start_offset=partition.start,
            )

    def _state_of(self, partition: PartitionLog) -> PartitionState:
        return PartitionState(
            partition.tp.topic, partition.tp.partition, partition.start, partition.next, partition.cleaned
        )

    def _state(self) -> Iterator[Event]:
        for name, logs in self._topics.items():
            yield TopicCreated(name, len(logs), self._configs[name])
            for partition in logs:
                yield self._state_of(partition)
        for group, offsets in self._offsets.items():
            yield OffsetsCommitted(group, dict(offsets))

    # ---- groups ---------------------------------------------------------------------------

    async def consumer(
        self,
        group_id: str,
        topics: Collection[str],
        on_assign: RebalanceCallback = NO_CALLBACK,
        on_revoke: RebalanceCallback = NO_CALLBACK,
        client_config: Mapping[str, Any] | None = None,
        *,
        auto_offset_reset: str = "earliest",
    ) -> MemoryConsumer:
        """``auto_offset_reset`` (Kafka's ``auto.offset.reset``, ``earliest`` or ``latest``) places a
        member with no committed offset, or one the log no longer holds (below its start, beyond its
        end); a connector's ``consumer.override.auto.offset.reset`` (in ``client_config``) wins."""
        self._require_open()
        overridden = (client_config or {}).get("auto_offset_reset")
        if overridden in _RESETS:
            auto_offset_reset = str(overridden)
        if auto_offset_reset not in _RESETS:
            raise TopicsError(
                f"Invalid value {auto_offset_reset} for configuration auto.offset.reset: "
                "String must be one of: earliest, latest"
            )
        group = self._groups.get(group_id)
        if group is None:
            group = self._groups[group_id] = Group(group_id, self.partition_count, self.wake)
        member = Member(group.new_member_id(), topics, on_assign, on_revoke)
        consumer = MemoryConsumer(self, group, member, auto_offset_reset)
        self._consumers.add(consumer)
        group.join(member)
        return consumer

    def forget(self, consumer: MemoryConsumer) -> None:
        self._consumers.discard(consumer)

    def commit(self, group: str, offsets: Mapping[TopicPartition, int]) -> None:
        self._require_open()
        current = self._offsets.get(group, {})
        offsets = {tp: offset for tp, offset in offsets.items() if current.get(tp) != offset}
        if not offsets:  # an idle sink commits the same offsets again and again: nothing to journal
            return
        if self._journal is not None:
            self._journal.commit(group, offsets)
        self._offsets.setdefault(group, {}).update(offsets)
        self._checkpoint_if_due()

    def committed(self, group: str, tp: TopicPartition) -> int | None:
        return self._offsets.get(group, {}).get(tp)

    # ---- group administration (KIP-875 sink offsets) ----------------------------------------

    async def group_offsets(self, group_id: str) -> dict[TopicPartition, int]:
        self._require_open()
        return dict(self._offsets.get(group_id, {}))

    async def alter_group_offsets(self, group_id: str, offsets: Mapping[TopicPartition, int | None]) -> None:
        self._require_idle(group_id)
        changes = {TopicPartition(*tp): offset for tp, offset in offsets.items()}
        if self._journal is not None:  # a removal is journaled as -1 (replay drops it)
            self._journal.commit(group_id, {tp: -1 if o is None else o for tp, o in changes.items()})
        committed = self._offsets.setdefault(group_id, {})
        for tp, offset in changes.items():
            if offset is None:
                committed.pop(tp, None)
            else:
                committed[tp] = offset

    async def delete_group(self, group_id: str) -> None:
        self._require_idle(group_id)
        committed = self._offsets.get(group_id, {})
        if committed and self._journal is not None:
            self._journal.commit(group_id, dict.fromkeys(committed, -1))
        self._offsets.pop(group_id, None)

    def _require_idle(self, group_id: str) -> None:
        self._require_open()
        group = self._groups.get(group_id)
        if group is not None and group.members:
            raise GroupNotEmpty(group_id)

    # ---- waking ---------------------------------------------------------------------------

    @property
    def changed(self) -> asyncio.Event:
        """Set on the next change; take it *before* looking, then wait on it."""
        return self._wakeup.changed

    def wake(self) -> None:
        """Wake waiting consumers once per event-loop turn, however many records arrived in it."""
        self._wakeup.wake()
