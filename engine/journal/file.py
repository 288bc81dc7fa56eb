"""An append-only JSON-lines file of key/value records; the durable shape every file store shares.

A record whose line is torn (the process died mid-write) is dropped with a warning and cut off,
never raised: the file is still readable and appendable afterwards.

Every record has an offset: one more than the record before it (the first is 0), unless its line
says otherwise with an ``"offset"`` field. Only compaction writes that field, where dropped records
left a gap, so the config log's offsets (incarnation ids) never change. Older versions ignore the
field: they read a compacted file's records in order but number them by position.

Compaction (``compact``) rewrites the file as a snapshot: the records a store still needs, then
whatever was appended meanwhile, as the tail. Why a rewritten JSON-lines file rather than SQLite
with UPSERT: the format stays the one older versions and Kafka Connect's tooling read (status and
offset files stay fully readable by older versions), appends stay one ``write`` of one line, the
config log keeps its offsets as plain fields, and every step of the rewrite is ours to crash-test.
Like Kafka's ``FileOffsetBackingStore`` it writes a whole snapshot and renames it over the file, but
only once garbage outweighs the live records (``engine.journal.compaction``), not on every flush.

The rewrite, in ``STEPS`` order, is safe to kill at any point: until the rename the old file is
whole and the temporary one is deleted on the next open; after it the new file is whole.
"""

from __future__ import annotations

import base64
import json
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import IO, Any

import orjson
import structlog

log = structlog.get_logger(component="journal")

Record = tuple[str, bytes | None]
Entry = tuple[int, str, bytes | None]
"""A record and its offset: ``(offset, key, value)``."""

STEPS = ("write", "sync", "tail", "rename", "sync-dir", "reopen")
"""The steps of ``Journal.compact``; its ``before_step`` hook is called with each name, in order."""


@dataclass(frozen=True, slots=True)
class Mark:
    """Where the journal ended at one moment: a store takes it together with its state."""

    size: int
    end: int
    generation: int


def _line(key: str, value: bytes | None, offset: int | None = None) -> bytes:
    body: dict[str, str | int | None] = {} if offset is None else {"offset": offset}
    body["key"] = key
    if value is None:
        body["value"] = None
    else:
        try:
            body["value"] = value.decode()
        except UnicodeDecodeError:
            body["value_b64"] = base64.b64encode(value).decode()
    return json.dumps(body, separators=(",", ":")).encode() + b"\n"


def _load(line: bytes) -> Any:
    """orjson, ten times json's speed (a start-up reads every line); json for what orjson refuses
    but json wrote (a lone surrogate escaped in a key)."""
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return json.loads(line)


def _parse(line: bytes, previous: int) -> Entry:
    body = _load(line)
    key = body["key"]
    if not isinstance(key, str):
        raise TypeError("key is not a string")
    offset = body.get("offset", previous + 1)
    if not isinstance(offset, int) or isinstance(offset, bool) or offset <= previous:
        raise ValueError(f"offset {offset!r} does not follow {previous}")
    if "value_b64" in body:
        return offset, key, base64.b64decode(body["value_b64"])
    value = body["value"]
    return offset, key, None if value is None else str(value).encode()


def _encode(entries: Sequence[Entry], previous: int) -> bytes:
    """Lines for ``entries``, naming an offset only where it is not one more than the line before."""
    lines = []
    for offset, key, value in entries:
        lines.append(_line(key, value, None if offset == previous + 1 else offset))
        previous = offset
    return b"".join(lines)


class Journal:
    """Key/value records appended to one file, read back in order on open, compacted on request.

    ``append`` and the last steps of ``compact`` take one lock, so a compaction in a worker thread
    holds appends back only while it copies the tail and renames.
    """

    def __init__(self, path: str | os.PathLike[str], *, fsync: bool = True) -> None:
        self.path = Path(path)
        self._temp = self.path.with_name(self.path.name + ".compacting")
        self._fsync = fsync
        self._file: IO[bytes] | None = None
        self._lock = threading.Lock()
        self._size = 0
        self._end = 0
        self._generation = 0
        self.skipped = 0
        self.lines_read = 0

    @property
    def size(self) -> int:
        """Bytes in the file: what the next open reads."""
        return self._size

    @property
    def end(self) -> int:
        """The offset the next record gets."""
        return self._end

    def open(self) -> list[Record]:
        """``replay`` without the offsets."""
        return [(key, value) for _, key, value in self.replay()]

    def replay(self) -> list[Entry]:
        """Read every whole record, cut a torn tail, drop a dead compaction's file, open for appending."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._temp.unlink(missing_ok=True)
        entries: list[Entry] = []
        good_end = 0
        self.lines_read = 0
        if self.path.exists():
            data = self.path.read_bytes()
            entries, good_end, self.lines_read = self._read(data, -1)
            if good_end < len(data):
                with self.path.open("r+b") as f:
                    f.truncate(good_end)
        self._file = self.path.open("ab")
        self._size = good_end
        self._end = entries[-1][0] + 1 if entries else 0
        return entries

    def _read(self, data: bytes, previous: int) -> tuple[list[Entry], int, int]:
        """The entries of whole lines in ``data``, where the last whole line ends, how many lines."""
        entries: list[Entry] = []
        good_end = 0
        lines = 0
        for start, line in _lines(data):
            if not line.endswith(b"\n"):
                log.warning("journal.torn_record_dropped", path=str(self.path), offset=start)
                break
            lines += 1
            try:
                entries.append(_parse(line, previous))
                previous = entries[-1][0]
            except (ValueError, KeyError, TypeError) as exc:
                self.skipped += 1
                log.warning("journal.record_skipped", path=str(self.path), offset=start, reason=str(exc))
            good_end = start + len(line)
        return entries, good_end, lines

    def append(self, records: Sequence[Record]) -> int:
        """Write the records after the last; returns the offset of the last one."""
        data = b"".join(_line(k, v) for k, v in records)
        with self._lock:
            if self._file is None:
                raise RuntimeError(f"journal {self.path} is not open")
            self._file.write(data)
            self._file.flush()
            if self._fsync:
                os.fsync(self._file.fileno())
            self._size += len(data)
            self._end += len(records)
            return self._end - 1

    def mark(self) -> Mark:
        """Where the file ends now; ``compact`` keeps whatever is appended after it."""
        with self._lock:
            return Mark(self._size, self._end, self._generation)

    def compact(self, entries: Sequence[Entry], since: Mark,
                before_step: Callable[[str], None] | None = None) -> int:
        """Replace the file with ``entries`` (equivalent to everything before ``since``), then the
        records appended after ``since``; offsets are kept. Returns the bytes ``entries`` took.
        Blocking: call it in a worker thread.

        ``before_step`` is called with each of ``STEPS`` first: a test raises there to stop as a
        kill would. A real failure before the rename leaves the old file in place.
        """
        step = before_step or (lambda _: None)
        if entries and (entries[-1][0] >= since.end or any(a[0] >= b[0] for a, b in pairwise(entries))):
            raise ValueError("compacted entries must have increasing offsets below the mark")
        try:
            with self._temp.open("wb") as temp:
                step("write")
                written = temp.write(_encode(entries, -1))
                step("sync")
                temp.flush()
                os.fsync(temp.fileno())
                with self._lock:
                    self._finish(temp, entries[-1][0] if entries else -1, since, step)
        except (OSError, RuntimeError):
            self._temp.unlink(missing_ok=True)
            raise
        return written

    def _finish(self, temp: IO[bytes], last: int, since: Mark, step: Callable[[str], None]) -> None:
        """With appends held back: the tail, then the rename that makes the new file the journal."""
        if since.generation != self._generation or self._file is None:
            raise RuntimeError(f"journal {self.path} changed since the mark; compact from a new one")
        step("tail")
        with self.path.open("rb") as old:
            old.seek(since.size)
            tail, _, _ = self._read(old.read(self._size - since.size), since.end - 1)
        temp.write(_encode(tail, last))
        temp.flush()
        os.fsync(temp.fileno())
        size = temp.tell()
        step("rename")
        os.replace(self._temp, self.path)
        try:
            step("sync-dir")
            _sync_dir(self.path.parent)
            step("reopen")
        finally:  # the old file is gone: appends must go to the new one whatever happens
            self._file.close()
            self._file = self.path.open("ab")
            self._size = size
            self._generation += 1

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None


def _sync_dir(directory: Path) -> None:
    """Make a rename in ``directory`` durable (POSIX: fsync the directory itself)."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _lines(data: bytes) -> Iterator[tuple[int, bytes]]:
    start = 0
    while start < len(data):
        end = data.find(b"\n", start)
        stop = len(data) if end < 0 else end + 1
        yield start, data[start:stop]
        start = stop
