"""The clock the herder schedules on: real asyncio time, or one a test or scenario moves.

Auto-restart backoffs and healthy-period resets are timers (``auto_restart.py``). The engine
takes a ``Timers`` so the scenario runner can install one driven by its virtual clock
(``engine.testing.timers.VirtualTimers``): "advance: 1s" then fires what was due by then.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Protocol


class TimerHandle(Protocol):
    def cancel(self) -> None: ...


class Timers(Protocol):
    """What schedules callbacks on the event loop; callbacks run on the loop, never in a thread."""

    def time(self) -> float:
        """Now, in epoch seconds (what statuses report as ``next_restart_ms``)."""
        ...

    def call_later(self, delay: float, callback: Callable[[], None]) -> TimerHandle:
        """Run ``callback`` on the loop after ``delay`` seconds, unless the handle is cancelled first."""
        ...


class LoopTimers:
    """Real time: ``loop.call_later`` and ``time.time()``."""

    def time(self) -> float:
        return time.time()

    def call_later(self, delay: float, callback: Callable[[], None]) -> TimerHandle:
        return asyncio.get_running_loop().call_later(max(0.0, delay), callback)
