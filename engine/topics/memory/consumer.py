"""``MemoryConsumer``: a member of an in-process consumer group, which rebalances inside ``getmany``."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Collection, Mapping
from typing import Protocol

import structlog

from engine.api.identity import TopicIdentity
from engine.topics.base import ConsumedRecord, OffsetReset, RebalanceCallback, TopicPartition, Truncation
from engine.topics.errors import NotAssigned, TopicsError
from engine.topics.groups import Group, Member
from engine.topics.partition_log import PartitionLog

log = structlog.get_logger(component="topics")


class ConsumerHost(Protocol):
    """What a consumer needs of ``MemoryTopics``: named here so this module need not import it back."""

    @property
    def changed(self) -> asyncio.Event: ...

    @property
    def rebalance_timeout_s(self) -> float: ...

    def partition_log(self, tp: TopicPartition) -> PartitionLog: ...

    def commit(self, group: str, offsets: Mapping[TopicPartition, int]) -> None: ...

    def committed(self, group: str, tp: TopicPartition) -> int | None: ...

    def forget(self, consumer: MemoryConsumer) -> None: ...

    def identity(self, topic: str) -> TopicIdentity | None: ...


class MemoryConsumer:
    """A group member; it revokes, takes its assignment and runs the callbacks inside ``getmany``."""

    def __init__(
        self, topics: ConsumerHost, group: Group, member: Member, auto_offset_reset: str = "earliest"
    ) -> None:
        self._topics = topics
        self._group = group
        self._member = member
        self._reset = auto_offset_reset
        self._positions: dict[TopicPartition, int] = {}
        self._resets: list[OffsetReset] = []
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
                committed = self._topics.committed(group.id, tp)
                self._positions[tp] = self._reset_position(tp) if committed is None else committed
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
            log.error(
                "topics.rebalance_callback_failed", group=self._group.id, callback=which, error=repr(exc)
            )

    def _take(self, max_records: int | None) -> list[ConsumedRecord]:
        tps = sorted(tp for tp in self._positions if tp not in self._paused)
        if not tps:
            return []
        self._rotation = (self._rotation + 1) % len(tps)  # so one busy partition cannot starve the rest
        budget = max_records if max_records is not None else 1 << 62
        taken: list[ConsumedRecord] = []
        for tp in tps[self._rotation :] + tps[: self._rotation]:
            batch = self._topics.partition_log(tp).read(self._in_range(tp), budget - len(taken))
            if batch:
                taken.extend(batch)
                self._positions[tp] = batch[-1].offset + 1
                if len(taken) >= budget:
                    break
        return taken

    def _reset_position(self, tp: TopicPartition) -> int:
        partition = self._topics.partition_log(tp)
        return partition.start if self._reset == "earliest" else partition.next

    def _in_range(self, tp: TopicPartition) -> int:
        """The position, moved by ``auto.offset.reset`` if the log no longer holds it: below the log
        start (retention dropped it) or beyond the log end (a log back shorter, a re-created topic).
        This log plays the broker, which answers such a fetch OFFSET_OUT_OF_RANGE."""
        position = self._positions[tp]
        partition = self._topics.partition_log(tp)
        start, end = partition.start, partition.next
        if start <= position <= end:
            return position
        reset = self._reset_position(tp)
        log.warning(
            "topics.offset_out_of_range",
            group=self._group.id,
            topic=tp.topic,
            partition=tp.partition,
            offset=position,
            log_start_offset=start,
            log_end_offset=end,
            auto_offset_reset=self._reset,
            reset_to=reset,
        )
        self._resets.append(OffsetReset(tp, position, self._reset, reset))
        self._positions[tp] = reset
        return reset

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
        return self._in_range(self._owned(tp))

    async def commit(self, offsets: Mapping[TopicPartition, int]) -> None:
        owned = {self._owned(tp): int(offset) for tp, offset in offsets.items()}
        self._topics.commit(self._group.id, owned)

    async def committed(self, tp: TopicPartition) -> int | None:
        return self._topics.committed(self._group.id, TopicPartition(*tp))

    def offset_resets(self) -> list[OffsetReset]:
        resets, self._resets = self._resets, []
        return resets

    async def identity(self, topic: str) -> TopicIdentity | None:
        return self._topics.identity(topic)

    def truncations(self) -> list[Truncation]:
        """None: an in-process log has no leader elections; a shorter log is answered out of range."""
        return []

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
