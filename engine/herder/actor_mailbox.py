"""A connector actor's mailbox: a FIFO that is cheaper than ``asyncio.Queue`` for one reader."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable

from engine.herder.messages import FromLog, Marker, Message


class Mailbox:
    """Messages for one connector actor, read by its single coroutine.

    ``asyncio.Queue`` supports many getters, size limits and task accounting; an actor needs none
    of that, and at thousands of connectors its bookkeeping shows. A ``Marker`` (an offset that
    changes nothing) posted behind a queued log message is folded into it: the actor would have
    applied it straight after, with nothing in between.
    """

    __slots__ = ("_items", "_on_put", "_waiter")

    def __init__(self, on_put: Callable[[], None]) -> None:
        self._items: deque[Message] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._on_put = on_put  # the reader has work now: a quiet check must look at it

    def put(self, message: Message) -> None:
        self._on_put()
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
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def arrival(self) -> asyncio.Future[None]:
        """A future done once a message is queued (at once if one is): what an idle actor awaits.

        The actor awaits this future itself, so an idle connector keeps no extra frame alive.
        """
        waiter = asyncio.get_running_loop().create_future()
        if self._items:
            waiter.set_result(None)
        else:
            self._waiter = waiter
        return waiter

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
