"""How a source task's polls repeat while they return nothing, without a turn of its task loop.

An idle source polls all the time (Connect's FileStream source returns nothing after waiting 1 s);
what the worker adds to each empty poll is what thousands of idle tasks cost it. ``SourceLoop``
runs an async ``poll`` again in the same asyncio task (``Watched`` tells whether it gave the event
loop a turn; ``YIELD`` gives one when it did not) and a sync one in the same thread (``SyncPolls``).
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable, Coroutine, Generator
from concurrent.futures import Executor, ThreadPoolExecutor
from functools import partial
from typing import Any

from engine.api._invoke import ThreadCall
from engine.api.task import SourceTask


def empty(result: Any) -> bool:
    """Nothing polled: None, or an empty list or tuple (another poll follows at once)."""
    return result is None or (type(result) in (list, tuple) and not result)


class _Yield:
    """One turn of the event loop: ``asyncio.sleep(0)`` without its coroutine."""

    __slots__ = ()

    def __await__(self) -> Generator[None, None, None]:
        yield  # a bare yield: the task is stepped again on the loop's next turn


YIELD = _Yield()


class Watched:
    """Awaits a coroutine and notes whether it gave the event loop a turn (``suspended``): cheaper
    than a turn of the loop after every poll, which only a poll that never waits needs."""

    __slots__ = ("_steps", "suspended")

    def __init__(self, coroutine: Coroutine[Any, Any, Any]) -> None:
        self._steps = coroutine.__await__()
        self.suspended = False

    def __await__(self) -> Watched:
        return self

    def __iter__(self) -> Watched:
        return self

    def __next__(self) -> Any:
        return self.send(None)

    def send(self, value: Any) -> Any:
        step = self._steps.send(value)  # StopIteration: the poll returned, the await's result
        self.suspended = True
        return step

    def throw(self, *error: Any) -> Any:  # a cancellation reaches the poll where it waits
        step = self._steps.throw(*error)
        self.suspended = True
        return step

    def close(self) -> None:
        self._steps.close()


class SyncPolls:
    """A sync ``poll()`` in one of the task threads, repeated in that thread while it returns nothing.

    The thread goes back to the loop with the first batch, once the loop ``stop``s it (woken: a
    pause, a stop, a failed send), or as soon as another call waits for a task thread, so a task
    holds a thread no longer than one poll at a time when the threads are short (``task.threads.max``).
    The polls of one call run in one copy of the loop's context (a poll sees what the one before it
    set, as a Java task's thread-locals would).
    """

    __slots__ = ("_call", "_queue", "last")

    def __init__(self, task: SourceTask, executor: Executor | None) -> None:
        self.last = False
        # a pool whose queue we can see; any other executor gets one poll per call, as before
        self._queue = (
            getattr(executor, "_work_queue", None) if isinstance(executor, ThreadPoolExecutor) else None
        )
        self._call = ThreadCall(executor, partial(self._polls, contextvars.copy_context(), task.poll))

    @property
    def future(self) -> asyncio.Future[Any]:
        return self._call.future

    def stop(self) -> bool:
        """No poll after the one running now; True if none had started, and now none will."""
        self.last = True
        return self._call.drop()

    def _polls(self, context: contextvars.Context, poll: Callable[[], Any]) -> Any:
        queue = self._queue
        while True:
            result = context.run(poll)
            if self.last or queue is None or not empty(result) or not queue.empty():
                return result
