"""The in-process topics: the embedded default, optionally kept in a file so data survives a restart."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Awaitable, Collection, Mapping

import structlog

from engine.errors import EngineNotRunning
from engine.topics.backing import OffsetsCommitted, TopicCreated, TopicJournal
from engine.topics.base import (
    NO_CALLBACK,
    ConsumedRecord,
    Headers,
    RebalanceCallback,
    RecordMetadata,
    TopicPartition,
    require_key_or_value,
)
from engine.topics.errors import GroupNotEmpty, NotAssigned, TopicsError, UnknownTopic
from engine.topics.groups import Group, Member
from engine.topics.partitioner import Partitioner

log = structlog.get_logger(component="topics")


class MemoryTopics:
    """Partitions are lists of records; one event, replaced on every change, wakes waiting consumers.

    With ``path`` every topic creation, append and offset commit is journaled before it applies,
    and ``open`` replays the file. Sending to a missing topic creates it with one partition, as
    a broker with ``auto.create.topics.enable`` does, unless ``auto_create=False``.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *, fsync: bool = False,
                 auto_create: bool = True, rebalance_timeout_ms: int = 30_000) -> None:
        self.path = path
        self.auto_create = auto_create
        self.rebalance_timeout_s = rebalance_timeout_ms / 1000
        self._fsync = fsync
        self._journal: TopicJournal | None = None
        self._topics: dict[str, list[list[ConsumedRecord]]] = {}
        self._configs: dict[str, dict[str, str]] = {}
        self._offsets: dict[str, dict[TopicPartition, int]] = {}
        self._groups: dict[str, Group] = {}
        self._consumers: set[MemoryConsumer] = set()
        self._changed = asyncio.Event()
        self._wake_pending = False
        self._open = False

    # ---- lifecycle ------------------------------------------------------------------------

    async def open(self) -> None:
        """Replay the file if there is one; without a file, reopening keeps what was written."""
        if self._open:
            return
        if self.path is not None:
            self._topics, self._configs, self._offsets = {}, {}, {}
            self._journal = TopicJournal(self.path, fsync=self._fsync)
            for event in self._journal.open():
                self._replay(event)
        self._open = True

    def _replay(self, event: TopicCreated | ConsumedRecord | OffsetsCommitted) -> None:
        if isinstance(event, TopicCreated):
            self._topics.setdefault(event.name, [[] for _ in range(event.partitions)])
            self._configs.setdefault(event.name, event.configs)
        elif isinstance(event, OffsetsCommitted):
            committed = self._offsets.setdefault(event.group, {})
            committed.update(event.offsets)
            for tp in [tp for tp, offset in event.offsets.items() if offset < 0]:
                del committed[tp]  # an offset removed by KIP-875 administration
        elif event.topic in self._topics and event.partition < len(self._topics[event.topic]):
            log_ = self._topics[event.topic][event.partition]
            log_.append(ConsumedRecord(event.topic, event.partition, len(log_), event.key, event.value,
                                       event.headers, event.timestamp))

    async def close(self) -> None:
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

    async def create_topic(self, name: str, partitions: int = 1, configs: Mapping[str, str] | None = None) -> bool:
        self._require_open()
        return self._create(name, partitions, configs or {})

    def _create(self, name: str, partitions: int, configs: Mapping[str, str]) -> bool:
        if partitions < 1:
            raise TopicsError(f"Topic '{name}' needs at least one partition, not {partitions}")
        if name in self._topics:
            return False
        if self._journal is not None:
            self._journal.topic(name, partitions, configs)
        self._topics[name] = [[] for _ in range(partitions)]
        self._configs[name] = dict(configs)
        log.info("topics.topic_created", topic=name, partitions=partitions)
        for group in self._groups.values():
            if group.subscribes_to(name):
                group.rebalance()
        return True

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

    def records(self, tp: TopicPartition) -> list[ConsumedRecord]:
        return self._topics[tp.topic][tp.partition]

    # ---- writing --------------------------------------------------------------------------

    def append(self, topic: str, partition: int | None, key: bytes | None, value: bytes | None,
               headers: Headers, partitioner: Partitioner) -> RecordMetadata:
        self._require_open()
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
        record = ConsumedRecord(topic, partition, len(target), key, value,
                                tuple((str(name), None if data is None else bytes(data)) for name, data in headers), time.time_ns() // 1_000_000)
        if self._journal is not None:
            self._journal.record(record)
        target.append(record)
        self.wake()
        return RecordMetadata(topic, partition, record.offset, record.timestamp)

    def producer(self) -> MemoryProducer:
        return MemoryProducer(self)

    # ---- groups ---------------------------------------------------------------------------

    async def consumer(self, group_id: str, topics: Collection[str], on_assign: RebalanceCallback = NO_CALLBACK,
                       on_revoke: RebalanceCallback = NO_CALLBACK) -> MemoryConsumer:
        self._require_open()
        group = self._groups.get(group_id)
        if group is None:
            group = self._groups[group_id] = Group(group_id, self.partition_count, self.wake)
        member = Member(group.new_member_id(), topics, on_assign, on_revoke)
        consumer = MemoryConsumer(self, group, member)
        self._consumers.add(consumer)
        group.join(member)
        return consumer

    def forget(self, consumer: MemoryConsumer) -> None:
        self._consumers.discard(consumer)

    def commit(self, group: str, offsets: Mapping[TopicPartition, int]) -> None:
        self._require_open()
        if self._journal is not None:
            self._journal.commit(group, offsets)
        self._offsets.setdefault(group, {}).update(offsets)

    def committed(self, group: str, tp: TopicPartition) -> int | None:
        return self._offsets.get(group, {}).get(tp)

    def partition_logs(self, topic: str) -> list[list[ConsumedRecord]] | None:
        """The topic's partitions (None if unknown); a consumer reads its log end from here."""
        return self._topics.get(topic)

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
        return self._changed

    def wake(self) -> None:
        """Wake waiting consumers once per event-loop turn, however many records arrived in it."""
        if self._wake_pending:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._wake_now()
            return
        self._wake_pending = True
        loop.call_soon(self._wake_now)

    def _wake_now(self) -> None:
        self._wake_pending = False
        self._changed.set()
        self._changed = asyncio.Event()


class MemoryProducer:
    """Appends at once: the returned future is already resolved (or failed)."""

    def __init__(self, topics: MemoryTopics) -> None:
        self._topics = topics
        self._partitioner = Partitioner()

    def send(self, topic: str, key: bytes | None, value: bytes | None, headers: Headers = (),
             partition: int | None = None) -> Awaitable[RecordMetadata]:
        future: asyncio.Future[RecordMetadata] = asyncio.get_running_loop().create_future()
        try:
            future.set_result(self._topics.append(topic, partition, key, value, headers, self._partitioner))
        except (TopicsError, EngineNotRunning, OSError) as exc:
            future.set_exception(exc)
        return future

    async def flush(self) -> None:
        """Nothing is ever pending."""


class MemoryConsumer:
    """A group member; it revokes, takes its assignment and runs the callbacks inside ``getmany``."""

    def __init__(self, topics: MemoryTopics, group: Group, member: Member) -> None:
        self._topics = topics
        self._group = group
        self._member = member
        self._positions: dict[TopicPartition, int] = {}
        self._paused: set[TopicPartition] = set()
        self._rotation = 0
        self._closed = False

    async def getmany(self, timeout_ms: int = 0, max_records: int | None = None) -> list[ConsumedRecord]:
        deadline = time.monotonic() + timeout_ms / 1000
        while True:
            changed = self._topics.changed
            if self._closed:
                raise TopicsError("The consumer is closed")
            if await self._rebalanced(deadline):
                records = self._take(max_records)
                if records:
                    return records
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return []
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(min(remaining, self._topics.rebalance_timeout_s)):
                    await changed.wait()

    async def _rebalanced(self, deadline: float) -> bool:
        """Bring this member up to the group's generation; False while others still hold our partitions."""
        member, group = self._member, self._group
        while not self._closed:
            member.last_poll = time.monotonic()
            if not member.in_group:  # evicted for not polling: lose what we had, then rejoin
                await self._revoke()
                group.join(member)
                continue
            if member.applied == group.generation:
                return True
            if member.assignment:
                await self._revoke()
                continue
            if not group.try_take(member, self._topics.rebalance_timeout_s):
                return False
            for tp in member.assignment:
                self._positions[tp] = self._topics.committed(group.id, tp) or 0
            await self._call(member.on_assign, member.assignment, "on_assign")
        return False

    async def _revoke(self) -> None:
        """``on_revoke`` while the partitions are still ours (so it can commit, as Kafka's listener
        can), then give them up. An evicted member's partitions are gone already (Kafka's
        ``onPartitionsLost``): it is told after the fact."""
        member = self._member
        revoked = member.assignment
        if member.in_group:
            if revoked:
                await self._call(member.on_revoke, revoked, "on_revoke")
            if member.in_group:  # the callback may have outlasted the rebalance timeout
                self._group.release(member)
            self._forget_assignment()
            return
        self._forget_assignment()
        if revoked:
            await self._call(member.on_revoke, revoked, "on_revoke")

    def _forget_assignment(self) -> None:
        self._member.assignment = frozenset()
        self._positions.clear()
        self._paused.clear()

    async def _call(self, callback: RebalanceCallback, tps: frozenset[TopicPartition], which: str) -> None:
        """Like aiokafka: a failing listener is logged and the rebalance goes on."""
        try:
            await callback(tps)
        except Exception as exc:
            log.error("topics.rebalance_callback_failed", group=self._group.id, callback=which, error=repr(exc))

    def _take(self, max_records: int | None) -> list[ConsumedRecord]:
        tps = sorted(tp for tp in self._positions if tp not in self._paused)
        if not tps:
            return []
        self._rotation = (self._rotation + 1) % len(tps)  # so one busy partition cannot starve the rest
        budget = max_records if max_records is not None else 1 << 62
        taken: list[ConsumedRecord] = []
        for tp in tps[self._rotation:] + tps[:self._rotation]:
            position = self._positions[tp]
            batch = self._topics.records(tp)[position:position + budget - len(taken)]
            if batch:
                taken.extend(batch)
                self._positions[tp] = position + len(batch)
                if len(taken) >= budget:
                    break
        return taken

    def _owned(self, tp: TopicPartition) -> TopicPartition:
        tp = TopicPartition(*tp)
        if tp not in self._positions:
            raise NotAssigned(tp.topic, tp.partition)
        return tp

    def seek(self, tp: TopicPartition, offset: int) -> None:
        if offset < 0:
            raise ValueError(f"Cannot seek to a negative offset ({offset})")
        self._positions[self._owned(tp)] = offset

    async def position(self, tp: TopicPartition) -> int:
        return self._positions[self._owned(tp)]

    async def commit(self, offsets: Mapping[TopicPartition, int]) -> None:
        owned = {self._owned(tp): int(offset) for tp, offset in offsets.items()}
        self._topics.commit(self._group.id, owned)

    async def committed(self, tp: TopicPartition) -> int | None:
        return self._topics.committed(self._group.id, TopicPartition(*tp))

    def log_end(self, tp: TopicPartition) -> int | None:
        partitions = self._topics.partition_logs(tp[0])
        return len(partitions[tp[1]]) if partitions is not None and tp[1] < len(partitions) else None

    def pause(self, tps: Collection[TopicPartition]) -> None:
        self._paused.update(self._owned(tp) for tp in tps)

    def resume(self, tps: Collection[TopicPartition]) -> None:
        self._paused.difference_update(TopicPartition(*tp) for tp in tps)

    def assignment(self) -> frozenset[TopicPartition]:
        return frozenset(self._positions)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._group.leave(self._member)
        self._member.assignment = frozenset()
        self._positions.clear()
        self._topics.forget(self)
