"""The ConfigLog protocol: an ordered, durable-or-not sequence of raw config records."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One raw record as stored: key, value bytes (None = tombstone), and its offset."""

    offset: int
    key: str
    value: bytes | None


RawRecord = tuple[str, bytes | None]


class ConfigLog(Protocol):
    """Where every intent is written and read back (``docs/ARCHITECTURE.md``, "Config log").

    ``open`` connects (creating the topic or file if missing); ``entries`` yields every entry
    from the beginning, in order, and then waits for new ones until ``close``; ``end_offset``
    is the offset the next append will get, as of now, so a reader knows when it has caught up.
    ``append`` writes records in order and returns the offset of the last one.
    """

    async def open(self) -> None: ...

    async def close(self) -> None: ...

    async def append(self, records: Sequence[RawRecord]) -> int: ...

    async def end_offset(self) -> int: ...

    def entries(self) -> AsyncIterator[LogEntry]: ...
