"""Transition events for services that react to lifecycle changes (``Engine.transitions()``)."""

from __future__ import annotations

import asyncio
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

    @property
    def listened(self) -> bool:
        """Whether anyone subscribes, so publishers can skip building events nobody reads."""
        return bool(self._subscribers)

    def publish(self, event: TransitionEvent) -> None:
        for queue in self._subscribers:
            queue.put_nowait(event)

    def close(self) -> None:
        for queue in self._subscribers:
            queue.put_nowait(None)

    def subscribe(self) -> Subscription:
        """Events from this call on (not from the first ``anext``), until the engine stops."""
        queue: asyncio.Queue[TransitionEvent | None] = asyncio.Queue()
        self._subscribers.add(queue)
        return Subscription(queue, self._subscribers)


class Subscription:
    """An async iterator over one subscriber's queue; ``aclose()`` unsubscribes."""

    def __init__(
        self,
        queue: asyncio.Queue[TransitionEvent | None],
        registry: set[asyncio.Queue[TransitionEvent | None]],
    ) -> None:
        self._queue = queue
        self._registry = registry

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> TransitionEvent:
        event = await self._queue.get()
        if event is None:
            self._registry.discard(self._queue)
            raise StopAsyncIteration
        return event

    def drain(self) -> list[TransitionEvent]:
        """The events already delivered, without waiting; iteration continues after them."""
        events: list[TransitionEvent] = []
        while not self._queue.empty():
            event = self._queue.get_nowait()
            if event is None:
                self._queue.put_nowait(None)  # keep the end for the iterator
                break
            events.append(event)
        return events

    async def aclose(self) -> None:
        self._registry.discard(self._queue)
