"""One in-memory config log that several in-process workers read, each through its own view.

It stands in for the cluster's config topic: every worker appends to the same records and reads
all of them in order, and a worker that stops (or is killed) closes only its own reader. Each
append is reported to ``on_append``, so the cluster invariants can place a record (a pending
cleanup, its clearing) among the callbacks across workers.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence

from engine.configlog.base import LogEntry, RawRecord
from engine.errors import EngineNotRunning


class SharedConfigLog:
    def __init__(self, on_append: Callable[[str, bytes | None], None] = lambda key, value: None) -> None:
        self.entries: list[RawRecord] = []
        self._on_append = on_append
        self._changed = asyncio.Event()

    def view(self) -> ConfigLogView:
        return ConfigLogView(self)

    def append(self, records: Sequence[RawRecord]) -> int:
        for key, value in records:
            self.entries.append((key, value))
            self._on_append(key, value)
        self.wake()
        return len(self.entries) - 1

    def wake(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    @property
    def changed(self) -> asyncio.Event:
        return self._changed


class ConfigLogView:
    """One worker's ``ConfigLog`` on the shared records."""

    def __init__(self, shared: SharedConfigLog) -> None:
        self._shared = shared
        self._closed = False

    async def open(self) -> None:
        self._closed = False

    async def close(self) -> None:
        self._closed = True
        self._shared.wake()

    async def append(self, records: Sequence[RawRecord]) -> int:
        if self._closed:
            raise EngineNotRunning("The config log is closed")
        return self._shared.append(records)

    async def end_offset(self) -> int:
        return len(self._shared.entries)

    async def entries(self) -> AsyncIterator[LogEntry]:
        position = 0
        entries = self._shared.entries
        while True:
            changed = self._shared.changed
            while position < len(entries):
                key, value = entries[position]
                yield LogEntry(position, key, value)
                position += 1
            if self._closed:
                return
            await changed.wait()
