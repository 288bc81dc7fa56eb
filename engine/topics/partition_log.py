"""One topic-partition of the in-process topics: segments, oldest first, then the records not yet in one.

Offsets are never renumbered. Retention (``cleanup.policy=delete``) drops whole segments and
moves the log start offset (``start``) past them; compaction leaves gaps. In memory every record
goes straight into segments. With a directory, appended records wait in ``tail`` (in memory, and
in the topics' journal) until the topics' checkpoint ``flush``es them into segment files, so
memory holds at most what the journal holds since its last checkpoint.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from functools import partial
from pathlib import Path

from engine.topics import compaction
from engine.topics.base import ConsumedRecord, TopicPartition
from engine.topics.log_config import LogConfig
from engine.topics.segment import FileSegment, MemorySegment, Segment, load_segments


def _last_offset(segment: Segment) -> int:
    return segment.end - 1


class PartitionLog:
    def __init__(self, tp: TopicPartition, config: LogConfig, directory: Path | None) -> None:
        self.tp = tp
        self.config = config
        self.directory = directory
        self.segments: list[Segment] = (
            [*load_segments(directory, tp.topic, tp.partition)] if directory else []
        )
        self.start = self.segments[0].base if self.segments else 0  # the log start offset
        self.next = self.segments[-1].end if self.segments else 0  # the log end offset
        self.tail = MemorySegment(self.next)
        self.cleaned = 0  # compaction has cleaned every segment ending at or below this offset
        self._cleaning = False

    def restore(self, start: int, next_offset: int, cleaned: int) -> list[Segment]:
        """Apply the state the journal kept; returns the segments below ``start`` (a crash came between
        moving it and deleting them), for the caller to delete."""
        self.next = max(self.next, next_offset)
        self.cleaned = max(self.cleaned, cleaned)
        if not self.tail.records:
            self.tail = MemorySegment(self.next)
        self.start = start  # not the first file's base: compaction may have removed an emptied first segment
        below = [segment for segment in self.segments if segment.end <= self.start]
        self.segments = self.segments[len(below) :]
        self._keep_tail_from(self.start)
        return below

    def _keep_tail_from(self, offset: int) -> None:
        if not self.tail.records or self.tail.records[0].offset >= offset:
            return
        kept = MemorySegment(max(offset, self.tail.base))
        for record in self.tail.records:
            if record.offset >= offset:
                kept.add(record)
        self.tail = kept

    # ---- writing --------------------------------------------------------------------------

    def append(self, record: ConsumedRecord, now: int) -> bool:
        """Add the record at ``next``; True when an in-memory log started a segment (retention may apply)."""
        self.next = record.offset + 1
        if self.directory is not None:
            self.tail.add(record)
            return False
        last = self.segments[-1] if self.segments else None
        if (
            last is not None
            and now - last.first_ts < self.config.segment_ms
            and last.fill((record,), self.config.segment_bytes)
        ):
            return False
        self._start_segment((record,))
        return True

    def flush(self, now: int) -> None:
        """Write the tail into segment files (file-backed form), rolling a segment at ``segment.bytes``/``segment.ms``."""
        try:
            self._into_segments(self.tail.records, now)
        finally:  # after a failed write the tail keeps what did not reach a file, and nothing that did
            self._keep_tail_from(self.segments[-1].end if self.segments else self.start)

    def _into_segments(self, records: Sequence[ConsumedRecord], now: int) -> None:
        while records:
            last = self.segments[-1] if self.segments else None
            taken = 0
            if last is not None and now - last.first_ts < self.config.segment_ms:
                taken = last.fill(records, self.config.segment_bytes)
            records = records[taken or self._start_segment(records) :]

    def _start_segment(self, records: Sequence[ConsumedRecord]) -> int:
        """Roll: a new segment based at the first record, filled from ``records``; how many it took (at least one)."""
        base = records[0].offset
        segment: Segment = (
            MemorySegment(base)
            if self.directory is None
            else FileSegment.new(self.directory, self.tp.topic, self.tp.partition, base)
        )
        taken = segment.fill(records, self.config.segment_bytes)
        self.segments.append(segment)
        return taken

    # ---- reading --------------------------------------------------------------------------

    def read(self, offset: int, limit: int) -> list[ConsumedRecord]:
        """Up to ``limit`` records from the first one at or after ``offset``."""
        taken: list[ConsumedRecord] = []
        if self.segments and offset < self.segments[-1].end:
            for index in range(bisect_left(self.segments, offset, key=_last_offset), len(self.segments)):
                taken += self.segments[index].read(offset, limit - len(taken))
                if len(taken) >= limit:
                    return taken
        return taken + self.tail.read(offset, limit - len(taken))

    def records(self) -> list[ConsumedRecord]:
        """Everything retained (read back from the files): for tests and tools, not for consumers."""
        return [record for segment in [*self.segments, self.tail] for record in segment.scan()]

    def held(self) -> int:
        """How many records are in memory."""
        return len(self.tail.records) + sum(
            len(s.records) for s in self.segments if isinstance(s, MemorySegment)
        )

    def size(self) -> int:
        return sum(segment.size for segment in self.segments) + self.tail.size

    # ---- retention and compaction ---------------------------------------------------------

    def expire(self, now: int) -> list[Segment]:
        """Take out the segments retention drops and move ``start`` past them. The caller makes the new
        ``start`` durable, then deletes them: a crash in between deletes them at the next open."""
        config = self.config
        if not config.delete:
            return []
        doomed: list[Segment] = []
        if config.retention_ms >= 0:  # Kafka's: a segment goes once its newest record is older
            cutoff = now - config.retention_ms
            while self.segments and self.segments[0].max_ts < cutoff:
                doomed.append(self.segments.pop(0))
            if not self.segments and self.tail.records and self.tail.max_ts < cutoff:
                doomed.append(self.tail)
                self.tail = MemorySegment(self.next)
        if config.retention_bytes >= 0:  # Kafka's: while what stays is still at least retention.bytes
            total = self.size()
            while len(self.segments) > 1 and total - self.segments[0].size >= config.retention_bytes:
                total -= self.segments[0].size
                doomed.append(self.segments.pop(0))
        if doomed:
            first = (
                self.segments[0].base
                if self.segments
                else (self.tail.records[0].offset if self.tail.records else self.next)
            )
            self.start = max(self.start, first)
        return doomed

    def cleanable(self) -> list[Segment]:
        """All segments but the newest, once their dirty (never cleaned) share reaches ``min.cleanable.dirty.ratio``."""
        if not self.config.compact or self._cleaning or len(self.segments) < 2:
            return []
        sealed = self.segments[:-1]
        dirty = sum(segment.size for segment in sealed if segment.end > self.cleaned)
        if dirty == 0 or dirty < self.config.min_cleanable_dirty_ratio * sum(
            segment.size for segment in sealed
        ):
            return []
        return sealed

    async def compact(self, now: int) -> bool:
        """One compaction pass, off the event loop for files; True if it ran."""
        sealed = self.cleanable()
        if not sealed:
            return False
        self._cleaning = True
        try:
            work = partial(
                compaction.prepare,
                sealed,
                self.segments[-1],
                [(record.key, record.offset) for record in self.tail.records],
                now - self.config.delete_retention_ms,
            )
            prepared = work() if self.directory is None else await compaction.in_thread(work)
            for segment, finish in prepared:  # retention may have dropped a segment meanwhile
                finish(any(segment is live for live in self.segments))
            emptied = [segment for segment in sealed if segment.size == 0 and segment in self.segments]
            for segment in emptied:
                self.segments.remove(segment)
                segment.delete()
            self.cleaned = max(self.cleaned, sealed[-1].end)
        finally:
            self._cleaning = False
        return True
