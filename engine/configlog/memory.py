"""An in-process config log: the embedded default, lost when the process ends."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence

from engine.configlog.base import LogEntry, RawRecord
from engine.errors import EngineNotRunning


class MemoryConfigLog:
    """A list of entries plus a condition that wakes readers on append.

    Entries are kept as plain ``(key, value)`` tuples: tuples of strings and bytes drop out of
    the garbage collector's tracking, and the log only ever grows.
    """

    def __init__(self) -> None:
        self._entries: list[RawRecord] = []
        self._changed = asyncio.Event()
        self._closed = False

    async def open(self) -> None:
        """Reopening keeps the entries: a restarted engine reads back what it wrote."""
        self._closed = False

    async def close(self) -> None:
        self._closed = True
        self._wake()

    async def append(self, records: Sequence[RawRecord]) -> int:
        if self._closed:
            raise EngineNotRunning("The config log is closed")
        self._entries.extend((key, value) for key, value in records)
        self._wake()
        return len(self._entries) - 1

    def _wake(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    async def end_offset(self) -> int:
        return len(self._entries)

    async def entries(self) -> AsyncIterator[LogEntry]:
        position = 0
        while True:
            changed = self._changed
            while position < len(self._entries):
                key, value = self._entries[position]
                yield LogEntry(position, key, value)
                position += 1
            if self._closed:
                return
            await changed.wait()
