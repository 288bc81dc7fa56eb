"""When a file store compacts its journal: once the file holds more than twice its live records plus
a floor, in a worker thread, one compaction at a time.

Twice the live size keeps compaction amortised O(1) per appended byte (a rewrite copies at most half
of what the file holds) and bounds the file, and so each start-up's read, by the live state rather
than by the worker's age. The floor spares small stores a rewrite for every few lines.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

import structlog

from engine.journal.file import Entry, Journal, Mark

log = structlog.get_logger(component="journal")

DEFAULT_FLOOR = 1 << 20

StepHook = Callable[[str], None] | None
"""Called before each step of a rewrite (``engine.journal.file.STEPS``): tests stop a compaction there."""


class Compactor:
    """One journal's compactions. ``job`` is the store's compaction: it takes a mark and the entries
    its state is at that mark, then calls ``rewrite``; ``run`` and ``request`` never overlap two jobs."""

    def __init__(self, journal: Journal, job: Callable[[StepHook], Coroutine[Any, Any, None]], *,
                 floor: int = DEFAULT_FLOOR) -> None:
        self.journal = journal
        self.floor = floor
        self.live = 0  # bytes the live records took when last rewritten (estimated at open)
        self._job = job
        self._lock = asyncio.Lock()
        self._background: asyncio.Task[None] | None = None

    def due(self) -> bool:
        return self.journal.size > 2 * self.live + self.floor

    def estimate(self, live_records: int, records: int) -> None:
        """At open, before any rewrite: the live records are taken to fill their share of the file."""
        self.live = self.journal.size * live_records // max(records, 1)

    def request(self) -> None:
        """After an append: start a compaction in the background when due and none is running."""
        if self._background is not None or not self.due():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # appended outside an event loop (a script): the next open compacts
            return
        self._background = loop.create_task(self._in_background())

    async def _in_background(self) -> None:
        try:
            await self.run()
        except Exception as exc:  # a full disk, say: the appends go on in the old file
            self.live = self.journal.size  # try again once the file has doubled
            log.warning("journal.compaction_failed", path=str(self.journal.path), error=repr(exc))
        finally:
            self._background = None

    async def run(self, before_step: StepHook = None) -> None:
        async with self._lock:
            await self._job(before_step)

    async def rewrite(self, entries: Sequence[Entry], since: Mark, before_step: StepHook = None) -> None:
        """Replace the file with ``entries`` and what was appended after ``since``, off the event loop."""
        size = self.journal.size
        # what was appended meanwhile is not counted live: if it is most of the file, compact again
        self.live = await asyncio.to_thread(self.journal.compact, entries, since, before_step)
        log.info("journal.compacted", path=str(self.journal.path), records=len(entries), size_before=size,
                 size=self.journal.size)

    async def settle(self) -> None:
        """Let a background compaction finish (its errors are logged): before the journal closes."""
        if self._background is not None:
            await asyncio.wait([self._background])
