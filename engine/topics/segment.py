"""Segments: the unit in which a partition's old records are dropped and compacted.

A segment holds records with offsets from ``base`` up to ``end``, oldest first; compaction
leaves gaps, never renumbers. ``MemorySegment`` keeps its records in a list (the in-memory
topics, and the records of a file-backed partition not yet written to a segment file).
``FileSegment`` is one file of ``codec`` lines named after its base offset; it is read back by a
binary search on the offsets, so memory holds only its name, size and timestamps. A file is
written in whole fsynced batches and rewritten only by compaction (temp file, fsync, rename); a
crash leaves at most a torn last line, cut on load, and a temp file, removed on load.
"""

from __future__ import annotations

import contextlib
import json
import os
from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO, Protocol

import structlog

from engine.topics.base import ConsumedRecord
from engine.topics.codec import approximate_size, offset_of, parse_record, record_line

log = structlog.get_logger(component="topics")

SUFFIX = ".jsonl"
TEMP = ".tmp"
_CHUNK = 64 * 1024
_SEARCH_SPAN = 8 * 1024  # below this many bytes a read scans forward instead of bisecting further
_HINTS = 8  # (next offset, byte position) pairs remembered per file, for consumers reading on

Finish = Callable[[bool], None]  # installs a prepared compaction (True) or throws it away (False)


class Segment(Protocol):
    base: int
    size: int  # bytes: the file's, or about what the records would take in one
    first_ts: int
    max_ts: int  # the newest record's timestamp: time retention drops the segment after it

    @property
    def end(self) -> int: ...

    def fill(self, records: Sequence[ConsumedRecord], limit_bytes: int) -> int:
        """Append records while the segment stays within ``limit_bytes`` (an empty one takes at
        least one); returns how many it took."""
        ...

    def read(self, offset: int, limit: int) -> list[ConsumedRecord]:
        """Up to ``limit`` records from the first one at or after ``offset``."""
        ...

    def scan(self) -> Iterator[ConsumedRecord]: ...

    def rewrite(self, keep: Callable[[ConsumedRecord], bool]) -> Finish | None:
        """Prepare the segment without the records ``keep`` refuses (None: it keeps them all).
        Safe in a thread; the returned ``Finish`` runs on the event loop."""
        ...

    def delete(self) -> None: ...


def _offset(record: ConsumedRecord) -> int:
    return record.offset


class MemorySegment:
    __slots__ = ("base", "first_ts", "max_ts", "records", "size")

    def __init__(self, base: int) -> None:
        self.base = base
        self.records: list[ConsumedRecord] = []
        self.size = 0
        self.first_ts = 0
        self.max_ts = 0

    @property
    def end(self) -> int:
        return self.records[-1].offset + 1 if self.records else self.base

    def fill(self, records: Sequence[ConsumedRecord], limit_bytes: int) -> int:
        taken = 0
        for record in records:
            size = approximate_size(record)
            if self.records and self.size + size > limit_bytes:
                break
            self.add(record, size)
            taken += 1
        return taken

    def add(self, record: ConsumedRecord, size: int | None = None) -> None:
        if not self.records:
            self.first_ts = record.timestamp
        self.records.append(record)
        self.size += approximate_size(record) if size is None else size
        self.max_ts = max(self.max_ts, record.timestamp)

    def read(self, offset: int, limit: int) -> list[ConsumedRecord]:
        records = self.records
        index = offset - self.base  # contiguous unless compacted
        if not (0 <= index < len(records) and records[index].offset == offset):
            index = bisect_left(records, offset, key=_offset)
        return records[index : index + limit]

    def scan(self) -> Iterator[ConsumedRecord]:
        return iter(self.records)

    def rewrite(self, keep: Callable[[ConsumedRecord], bool]) -> Finish | None:
        kept = [record for record in self.records if keep(record)]
        if len(kept) == len(self.records):
            return None

        def finish(apply: bool) -> None:
            if apply:
                self.records = kept
                self.size = sum(approximate_size(record) for record in kept)

        return finish

    def delete(self) -> None:
        self.records = []
        self.size = 0


class FileSegment:
    __slots__ = ("_hints", "base", "end", "first_ts", "max_ts", "partition", "path", "size", "topic")

    def __init__(self, path: Path, topic: str, partition: int, base: int) -> None:
        self.path = path
        self.topic = topic
        self.partition = partition
        self.base = base
        self.end = base
        self.size = 0
        self.first_ts = 0
        self.max_ts = 0
        self._hints: dict[int, int] = {}

    @classmethod
    def new(cls, directory: Path, topic: str, partition: int, base: int) -> FileSegment:
        """A segment whose file appears with its first ``fill``."""
        return cls(directory / f"{base:020d}{SUFFIX}", topic, partition, base)

    @classmethod
    def load(cls, path: Path, topic: str, partition: int) -> FileSegment | None:
        """Reads the first and last line (all of them only if one of those is unreadable); cuts a torn
        last line. None if no record is left: the file is removed when empty, else set aside as ``.corrupt``."""
        segment = cls(path, topic, partition, int(path.name.removesuffix(SUFFIX)))
        with path.open("r+b") as f:
            size = os.fstat(f.fileno()).st_size
            whole = _rfind_newline(f, size) + 1
            if whole < size:
                log.warning(
                    "topics.segment_torn_tail_cut", path=str(path), offset=whole, dropped_bytes=size - whole
                )
                f.truncate(whole)
            first, last = _line_at(f, 0), _line_at(f, _rfind_newline(f, whole - 1) + 1) if whole else b""
        if not whole:
            path.unlink()
            return None
        oldest, newest = segment._parse(first), segment._parse(last)
        if oldest is None or newest is None:
            records = list(segment.scan())  # a damaged line: its neighbours are still good
            if not records:
                log.error("topics.segment_unreadable", path=str(path), moved_to=path.name + ".corrupt")
                path.rename(path.with_name(path.name + ".corrupt"))
                return None
            oldest, newest = records[0], records[-1]
        segment.size, segment.first_ts = whole, oldest.timestamp
        segment.end, segment.max_ts = newest.offset + 1, newest.timestamp
        return segment

    def fill(self, records: Sequence[ConsumedRecord], limit_bytes: int) -> int:
        lines: list[bytes] = []
        size = self.size
        for record in records:
            line = record_line(record)
            if size > 0 and size + len(line) > limit_bytes:
                break
            lines.append(line)
            size += len(line)
        if not lines:
            return 0
        created = self.size == 0
        if created:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("ab") as f:
            f.write(b"".join(lines))
            f.flush()
            os.fsync(f.fileno())
        if created:
            fsync_directory(self.path.parent)
            fsync_directory(self.path.parent.parent)
            self.first_ts = records[0].timestamp
        taken = records[: len(lines)]
        self.size = size
        self.end = taken[-1].offset + 1
        self.max_ts = max(self.max_ts, max(record.timestamp for record in taken))
        return len(lines)

    def read(self, offset: int, limit: int) -> list[ConsumedRecord]:
        if offset >= self.end or limit <= 0:
            return []
        taken: list[ConsumedRecord] = []
        with self.path.open("rb") as f:
            position = self._hints.get(offset)
            if position is None:
                position = self._search(f, offset)
            f.seek(position)
            for line in f:
                if not line.endswith(b"\n"):
                    break
                position += len(line)
                with contextlib.suppress(ValueError, KeyError, TypeError):  # else _parse says why
                    if offset_of(line) < offset:
                        continue
                record = self._parse(line)
                if record is not None:
                    taken.append(record)
                    if len(taken) >= limit:
                        break
        if taken:
            if len(self._hints) >= _HINTS:
                del self._hints[next(iter(self._hints))]
            self._hints[taken[-1].offset + 1] = position
        return taken

    def _search(self, f: IO[bytes], offset: int) -> int:
        """A line start at or before the first line with an offset >= ``offset`` (0, or a line whose offset is <= it)."""
        if offset <= self.base:
            return 0
        low, high = 0, os.fstat(f.fileno()).st_size
        while high - low > _SEARCH_SPAN:
            middle = (low + high) // 2
            f.seek(middle - 1)
            f.readline()  # the end of the line holding middle - 1
            start = f.tell()
            line = f.readline()
            try:
                found = line.endswith(b"\n") and offset_of(line) <= offset
            except (ValueError, KeyError, TypeError):
                found = False
            if found:
                low = start
            else:
                high = middle
        return low

    def scan(self) -> Iterator[ConsumedRecord]:
        for _, record in self._lines():
            yield record

    def _lines(self) -> Iterator[tuple[bytes, ConsumedRecord]]:
        with self.path.open("rb") as f:
            for line in f:
                if not line.endswith(b"\n"):
                    return  # being appended by a flush right now
                record = self._parse(line)
                if record is not None:
                    yield line, record

    def _parse(self, line: bytes) -> ConsumedRecord | None:
        try:
            return parse_record(json.loads(line), self.topic, self.partition)
        except (ValueError, KeyError, TypeError) as exc:
            log.warning("topics.segment_line_skipped", path=str(self.path), reason=str(exc))
            return None

    def rewrite(self, keep: Callable[[ConsumedRecord], bool]) -> Finish | None:
        temp = self.path.with_name(self.path.name + TEMP)
        dropped, size, max_ts = 0, 0, 0
        with temp.open("wb") as out:
            for line, record in self._lines():
                if keep(record):
                    out.write(line)
                    size += len(line)
                    max_ts = max(max_ts, record.timestamp)
                else:
                    dropped += 1
            if dropped:
                out.flush()
                os.fsync(out.fileno())
        if not dropped:
            temp.unlink()
            return None

        def finish(apply: bool) -> None:
            if not apply:
                temp.unlink(missing_ok=True)
                return
            os.replace(temp, self.path)
            fsync_directory(self.path.parent)
            self.size, self.max_ts = size, max_ts
            self._hints.clear()

        return finish

    def delete(self) -> None:
        self.path.unlink(missing_ok=True)


def load_segments(directory: Path, topic: str, partition: int) -> list[FileSegment]:
    """The partition's segment files, oldest first; temp files of an interrupted compaction are removed."""
    if not directory.is_dir():
        return []
    segments: list[FileSegment] = []
    for path in sorted(directory.iterdir()):
        if path.name.endswith(TEMP):
            log.warning("topics.segment_temp_file_removed", path=str(path))
            path.unlink()
        elif (
            path.name.endswith(SUFFIX)
            and path.name.removesuffix(SUFFIX).isdigit()
            and (segment := FileSegment.load(path, topic, partition)) is not None
        ):
            segments.append(segment)
    return sorted(segments, key=lambda segment: segment.base)


def fsync_directory(directory: Path) -> None:
    """Make a file's creation, rename or removal in ``directory`` survive a power cut."""
    with contextlib.suppress(OSError):  # not every platform opens directories
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _rfind_newline(f: IO[bytes], before: int) -> int:
    """The position of the last newline before ``before``, or -1."""
    position = before
    while position > 0:
        start = max(0, position - _CHUNK)
        f.seek(start)
        found = f.read(position - start).rfind(b"\n")
        if found >= 0:
            return start + found
        position = start
    return -1


def _line_at(f: IO[bytes], position: int) -> bytes:
    f.seek(position)
    return f.readline()
