"""A connector actor's mailbox: a FIFO that is cheaper than ``asyncio.Queue`` for one reader."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from engine.herder.messages import FromLog, Marker, Message


class Mailbox:
    """Messages for one connector actor, read by one coroutine at a time (started on a put).

    ``asyncio.Queue`` supports many getters, size limits and task accounting; an actor needs none
    of that, and at thousands of connectors its bookkeeping shows. A ``Marker`` (an offset that
    changes nothing) posted behind a queued log message is folded into it: the actor would have
    applied it straight after, with nothing in between.
    """

    __slots__ = ("_items", "_on_put")

    def __init__(self, on_put: Callable[[], None]) -> None:
        self._items: deque[Message] = deque()
        self._on_put = on_put  # the reader has work now: run it, and a quiet check must look at it

    def put(self, message: Message) -> None:
        items = self._items
        if items and type(message) is Marker:
            last = items[-1]
            if type(last) is Marker:
                items[-1] = message
                return
            if type(last) is FromLog:
                items[-1] = FromLog(last.event, message.offset)
                return
        items.append(message)
        self._on_put()

    def take(self) -> Message | None:
        """The next message, or None when the mailbox is empty."""
        return self._items.popleft() if self._items else None

    def drain(self) -> list[Message]:
        """Take every queued message (what a finished actor leaves behind)."""
        left = list(self._items)
        self._items.clear()
        return left

    def __len__(self) -> int:
        return len(self._items)
