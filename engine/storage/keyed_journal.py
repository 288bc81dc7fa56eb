"""The file behind the status and offset stores: the latest value per key, compacted to the live ones."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Sequence

from engine.journal.compaction import DEFAULT_FLOOR, Compactor, StepHook
from engine.journal.file import Journal, Record


class KeyedJournal:
    """A journal whose replay keeps each key's last value; compaction writes only ``live()``.

    ``live`` returns records that replay to the store's current state, tombstones left out. It runs
    on the event loop right after the mark is taken, so the state it reads is the file's at the mark.
    """

    def __init__(self, path: str | os.PathLike[str], live: Callable[[], Sequence[Record]], *, fsync: bool = True,
                 floor: int = DEFAULT_FLOOR) -> None:
        self.journal = Journal(path, fsync=fsync)
        self._live = live
        self._compactor = Compactor(self.journal, self._compact, floor=floor)

    async def open(self, apply: Callable[[str, bytes | None], None]) -> None:
        """Replay the file into ``apply``, then compact it when it is mostly history.

        Only each key's last record is applied, in file order: a key's value depends on nothing
        else (a connector's status tombstone also removes its task statuses written before it,
        whose last records then come before it too).
        """
        records = await asyncio.to_thread(self._read)
        for key, value in records:
            apply(key, value)
        if self._compactor.due():
            self._compactor.estimate(len(self._live()), self.journal.lines_read)
            if self._compactor.due():
                await self.compact()

    def _read(self) -> list[Record]:
        latest: dict[str, bytes | None] = {}
        for key, value in reversed(self.journal.open()):
            latest.setdefault(key, value)
        return list(reversed(latest.items()))

    def append(self, records: Sequence[Record]) -> None:
        self.journal.append(records)
        self._compactor.request()

    async def compact(self, before_step: StepHook = None) -> None:
        """Rewrite the file as the live records now (and whatever is appended meanwhile)."""
        await self._compactor.run(before_step)

    async def _compact(self, before_step: StepHook) -> None:
        since = self.journal.mark()
        live = self._live()  # no await since the mark
        await self._compactor.rewrite([(n, key, value) for n, (key, value) in enumerate(live)], since, before_step)

    async def settle(self) -> None:
        """Let a compaction started in the background finish."""
        await self._compactor.settle()

    async def close(self) -> None:
        await self.settle()
        self.journal.close()
