"""``Wakeup``: how the in-process topics tell waiting consumers that something changed."""

from __future__ import annotations

import asyncio


class Wakeup:
    """One event, replaced on every change, so a waiter that took it before looking misses nothing;
    set once per event-loop turn, however many records arrived in it."""

    def __init__(self) -> None:
        self._changed = asyncio.Event()
        self._pending = False

    @property
    def changed(self) -> asyncio.Event:
        """Set on the next change; take it *before* looking, then wait on it."""
        return self._changed

    def wake(self) -> None:
        """Wake waiting consumers once per event-loop turn (at once outside a running loop)."""
        if self._pending:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._wake_now()
            return
        self._pending = True
        loop.call_soon(self._wake_now)

    def _wake_now(self) -> None:
        self._pending = False
        self._changed.set()
        self._changed = asyncio.Event()
