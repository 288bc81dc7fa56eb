"""Timers on a virtual clock, for tests and scenarios: nothing scheduled fires until the clock moves.

``Engine(..., timers=VirtualTimers())`` makes auto-restart backoffs wait for ``advance``: the
scenario runner installs one on ``FAULTS.clock``, so "advance: 1s" fires the restarts due by then.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field

from engine.herder.timers import TimerHandle
from engine.testing.faults import VirtualClock


@dataclass(order=True)
class _Entry:
    due: float
    seq: int
    callback: Callable[[], None] = field(compare=False)
    cancelled: bool = field(default=False, compare=False)

    def cancel(self) -> None:
        self.cancelled = True


class VirtualTimers:
    """A ``Timers`` whose time is ``clock.now`` (seconds); callbacks run on ``advance``/``run_due``."""

    def __init__(self, clock: VirtualClock | None = None) -> None:
        self.clock = clock if clock is not None else VirtualClock()
        self._heap: list[_Entry] = []
        self._seq = itertools.count()

    def time(self) -> float:
        return self.clock.now

    def call_later(self, delay: float, callback: Callable[[], None]) -> TimerHandle:
        if delay <= 0:  # due now: as the loop would run it, soon, without waiting for the clock
            return asyncio.get_running_loop().call_soon(callback)
        entry = _Entry(self.clock.now + delay, next(self._seq), callback)
        heapq.heappush(self._heap, entry)
        return entry

    @property
    def pending(self) -> list[float]:
        """The due times of the timers not fired or cancelled yet, soonest first."""
        return sorted(e.due for e in self._heap if not e.cancelled)

    def run_due(self) -> int:
        """Run every callback due by ``clock.now``, in due order; returns how many ran."""
        ran = 0
        while self._heap and self._heap[0].due <= self.clock.now:
            entry = heapq.heappop(self._heap)
            if not entry.cancelled:
                entry.cancelled = True
                entry.callback()
                ran += 1
        return ran

    def advance(self, seconds: float) -> int:
        """Move the clock (for a clock of its own; the scenario runner moves ``FAULTS`` instead) and run_due."""
        if seconds < 0:
            raise ValueError("the clock only moves forward")
        self.clock.now += seconds
        return self.run_due()

    def clear(self) -> None:
        """Drop every timer (a crashed worker's timers die with it)."""
        self._heap.clear()
