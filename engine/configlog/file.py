"""A durable config log in one append-only file: connectors and target states survive restarts.

The file is compacted (``engine.configlog.compaction`` says which records stay, each at its own
offset) once it holds more than twice its live records plus a floor, and at open. The entries kept
in memory for readers are compacted too, but only below the offset every current reader has passed:
a reader never mixes records it read whole with a compacted rest.

Format change: compacted lines carry ``"offset"`` where dropped records left a gap. A version older
than compaction reads such a file's records in order but numbers them by position, so connectors
created before the compaction get other incarnation ids there (and pending cleanups retried by
that version would not match them).
"""

from __future__ import annotations

import asyncio
import os
from bisect import bisect_left
from collections.abc import AsyncIterator, Sequence
from operator import itemgetter

from engine.configlog.base import LogEntry, RawRecord
from engine.configlog.compaction import retained
from engine.errors import EngineNotRunning
from engine.journal.compaction import DEFAULT_FLOOR, Compactor, StepHook
from engine.journal.file import Entry, Journal

_offset = itemgetter(0)


class FileConfigLog:
    """Entries in memory, every append written (and fsynced) to a journal before it is visible."""

    def __init__(self, path: str | os.PathLike[str], *, fsync: bool = True, floor: int = DEFAULT_FLOOR) -> None:
        self.journal = Journal(path, fsync=fsync)
        self._compactor = Compactor(self.journal, self._compact, floor=floor)
        self._entries: list[Entry] = []
        self._readers: dict[object, int] = {}  # each reader's next offset
        self._write_lock = asyncio.Lock()
        self._changed = asyncio.Event()
        self._closed = False

    @property
    def skipped(self) -> int:
        """Unreadable lines passed over on open (torn tails are cut, not counted)."""
        return self.journal.skipped

    async def open(self) -> None:
        """Read the file (a reopened log reads back what it wrote); compact it when mostly history."""
        self._closed = False
        self._entries = await asyncio.to_thread(self.journal.replay)
        if self._compactor.due():  # past the floor: is it mostly history? (no reader, no writer yet)
            since = self.journal.mark()
            kept = await asyncio.to_thread(retained, self._entries)
            self._compactor.estimate(len(kept), len(self._entries))
            if self._compactor.due():
                await self._compactor.rewrite(kept, since)
                self._entries = kept

    async def close(self) -> None:
        self._closed = True
        self._wake()
        await self._compactor.settle()
        self.journal.close()

    async def append(self, records: Sequence[RawRecord]) -> int:
        if self._closed:
            raise EngineNotRunning("The config log is closed")
        async with self._write_lock:
            last = await asyncio.to_thread(self.journal.append, records)
            first = last - len(records) + 1
            self._entries.extend((first + n, key, value) for n, (key, value) in enumerate(records))
        self._wake()
        self._compactor.request()
        return last

    def _wake(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    async def end_offset(self) -> int:
        return self._entries[-1][0] + 1 if self._entries else 0

    async def entries(self) -> AsyncIterator[LogEntry]:
        reader = object()
        position = self._readers[reader] = 0
        try:
            while True:
                changed, entries = self._changed, self._entries
                index = bisect_left(entries, position, key=_offset)
                while index < len(entries) and entries is self._entries:
                    offset, key, value = entries[index]
                    index += 1
                    position = self._readers[reader] = offset + 1
                    yield LogEntry(offset, key, value)
                if entries is not self._entries:
                    continue  # compacted while this reader was away: find its place in the new list
                if self._closed:
                    return
                await changed.wait()
        finally:
            del self._readers[reader]

    async def compact(self, before_step: StepHook = None) -> None:
        """Rewrite the file as the records a replay needs (and whatever is appended meanwhile)."""
        await self._compactor.run(before_step)

    async def _compact(self, before_step: StepHook) -> None:
        async with self._write_lock:
            since = self.journal.mark()
            horizon = min(self._readers.values(), default=since.end)
            read = self._entries[:bisect_left(self._entries, horizon, key=_offset)]
            unread = self._entries[len(read):]
        kept = await asyncio.to_thread(retained, read)
        whole = await asyncio.to_thread(retained, kept + unread) if unread else kept
        await self._compactor.rewrite(whole, since, before_step)
        if min(self._readers.values(), default=horizon) >= horizon:  # no reader started since
            self._entries = kept + self._entries[len(read):]
