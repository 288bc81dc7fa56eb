"""A durable config log in one append-only file: connectors and target states survive restarts."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Sequence

from engine.configlog.base import LogEntry, RawRecord
from engine.configlog.memory import MemoryConfigLog
from engine.storage.journal import Journal


class FileConfigLog(MemoryConfigLog):
    """The memory log, with every append written (and fsynced) to a journal before it is visible."""

    def __init__(self, path: str | os.PathLike[str], *, fsync: bool = True) -> None:
        super().__init__()
        self._journal = Journal(path, fsync=fsync)
        self._write_lock = asyncio.Lock()

    @property
    def skipped(self) -> int:
        """Unreadable lines passed over on open (torn tails are cut, not counted)."""
        return self._journal.skipped

    async def open(self) -> None:
        await super().open()
        self._entries.extend(await asyncio.to_thread(self._journal.open))

    async def close(self) -> None:
        await super().close()
        self._journal.close()

    async def append(self, records: Sequence[RawRecord]) -> int:
        async with self._write_lock:
            await asyncio.to_thread(self._journal.append, list(records))
            return await super().append(records)

    def entries(self) -> AsyncIterator[LogEntry]:
        return super().entries()
