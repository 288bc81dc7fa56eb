"""Transition events for services that react to lifecycle changes (``Engine.transitions()``)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TransitionEvent:
    """One edge a connector or task took; ``task`` is None for the connector itself."""

    connector: str
    task: int | None
    trigger: str
    from_state: str
    to_state: str
    trace: str | None
    timestamp: float


class TransitionFeed:
    """Fans every event out to each subscriber's own queue; a slow subscriber never blocks the herder."""

    def __init__(self) -> None:
        self._subscribers: set[asyncio.Queue[TransitionEvent | None]] = set()

    def publish(self, event: TransitionEvent) -> None:
        for queue in self._subscribers:
            queue.put_nowait(event)

    def close(self) -> None:
        for queue in self._subscribers:
            queue.put_nowait(None)

    async def subscribe(self) -> AsyncIterator[TransitionEvent]:
        """Events from now on, until the engine stops or the iterator is closed."""
        queue: asyncio.Queue[TransitionEvent | None] = asyncio.Queue()
        self._subscribers.add(queue)
        try:
            while (event := await queue.get()) is not None:
                yield event
        finally:
            self._subscribers.discard(queue)
