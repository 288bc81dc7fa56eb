"""Calling user code that may be sync or async, without ever blocking the event loop."""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import threading
from collections.abc import Callable
from concurrent.futures import Executor
from contextlib import suppress
from contextvars import ContextVar
from functools import cache, partial
from time import perf_counter
from typing import Any
from weakref import WeakKeyDictionary

from engine.api._inline import INLINE_ATTRIBUTE

# Who to tell how long a user callback took: the engine sets it for every task it creates, and
# ``engine.observability.metrics`` reads it; it lives here so the API imports no runtime.
CALLBACK_TIMER: ContextVar[Callable[[str, float], None] | None] = ContextVar("callback_timer", default=None)

# Where tasks' synchronous data-plane calls (``poll``, ``put``, ``pre_commit``, ``commit``) run: the
# engine points it at a pool of its own, so tasks that block or sleep in ``poll()`` (most synchronous
# sources do when idle) never hold the threads that start, stop and reconfigure connectors, which
# stay on the loop's default executor. None: the default executor (a task run outside an engine).
TASK_THREADS: ContextVar[Executor | None] = ContextVar("task_threads", default=None)


async def invoke(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Await ``fn(*args)``: coroutines on the loop, sync code in a worker thread.

    Framework defaults marked ``inline`` run directly (they are trivial). A sync function that
    returns an awaitable gets it awaited, so wrappers and lambdas around coroutines work too.
    The duration goes to the engine's metrics (``CALLBACK_TIMER``), raising or not.
    """
    return await _invoke(None, fn, args, kwargs)


async def invoke_task_call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``invoke`` for a task's data-plane calls: sync code runs on the engine's task threads
    (``TASK_THREADS``), apart from the lifecycle calls."""
    return await _invoke(TASK_THREADS.get(), fn, args, kwargs)


async def _invoke(
    executor: Executor | None, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    timer = CALLBACK_TIMER.get()
    started = perf_counter()
    try:
        if _is_coroutine_function(fn):
            return await fn(*args, **kwargs)
        if getattr(fn, INLINE_ATTRIBUTE, False):
            result = fn(*args, **kwargs)
        else:
            result = await in_thread(executor, fn, *args, **kwargs)
        if inspect.isawaitable(result):
            return await result
        return result
    finally:
        if timer is not None:
            timer(getattr(fn, "__name__", "callable"), perf_counter() - started)


# A task cancelled while its sync callback still ran in a thread -> a future that is done, with the
# callback's exception or None, when that thread really returns (a thread cannot be cancelled).
_LEFT_RUNNING: WeakKeyDictionary[asyncio.Task[Any], asyncio.Future[BaseException | None]] = (
    WeakKeyDictionary()
)


# Sync lifecycle calls (the loop's default executor) handed to a thread and not yet back on their loop,
# per loop: what a worker handing out thousands of starts and stops paces itself by (``engine.herder.pacing``).
_IN_FLIGHT: WeakKeyDictionary[asyncio.AbstractEventLoop, int] = WeakKeyDictionary()


def lifecycle_calls_in_flight(loop: asyncio.AbstractEventLoop) -> int:
    """Sync lifecycle calls on ``loop``'s default executor that have not returned to the loop yet."""
    return _IN_FLIGHT.get(loop, 0)


def left_running(task: asyncio.Task[Any]) -> asyncio.Future[BaseException | None] | None:
    """The callback thread ``task`` was cancelled out of, until it returns; None if it left none."""
    return _LEFT_RUNNING.get(task)


class ThreadCall:
    """A sync call handed to a thread pool that can be dropped while it still waits for a thread.

    A thread cannot be cancelled, but a call no thread has taken yet can: ``drop()`` makes sure it
    never runs. ``future`` is the call's outcome on the loop (cancelled once dropped).
    """

    __slots__ = ("_claim", "_dropped", "_started", "future")

    def __init__(self, executor: Executor | None, call: Callable[[], Any]) -> None:
        self._claim = threading.Lock()
        self._started = self._dropped = False
        self.future: asyncio.Future[Any] = asyncio.get_running_loop().run_in_executor(
            executor, self._run, call
        )

    def _run(self, call: Callable[[], Any]) -> Any:
        with self._claim:
            if self._dropped:
                return None
            self._started = True
        return call()

    def drop(self) -> bool:
        """True if the call had not started and now never will; False if a thread runs (or ran) it."""
        with self._claim:
            if self._started:
                return False
            self._dropped = True
        self.future.cancel()  # frees its place in the pool's queue
        return True


async def in_thread(executor: Executor | None, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``asyncio.to_thread`` on ``executor`` (None: the loop's default), except that a caller
    cancelled mid-call can still learn when the thread returns (``left_running``), and a caller
    cancelled while the call still waits for a thread drops it (it never runs: a pool busy with
    sleeping ``poll()`` calls must not keep a stop waiting its turn). The common path adds no loop
    callback: the thread only reports back once somebody is watching."""
    loop = asyncio.get_running_loop()
    user_call = partial(contextvars.copy_context().run, fn, *args, **kwargs)
    watchers: list[asyncio.Future[BaseException | None]] = []
    outcome: list[BaseException | None] = []  # set once the call returned (GIL: append is atomic)

    def run() -> Any:
        error: BaseException | None = None
        try:
            return user_call()
        except BaseException as exc:
            error = exc
            raise
        finally:
            outcome.append(error)
            if watchers:
                with suppress(RuntimeError):  # the loop closed meanwhile: nobody is left to tell
                    loop.call_soon_threadsafe(_settle, watchers[0], error)

    call = ThreadCall(executor, run)
    in_flight = _IN_FLIGHT if executor is None else None
    if in_flight is not None:
        in_flight[loop] = in_flight.get(loop, 0) + 1
    try:
        return await call.future
    except asyncio.CancelledError:
        if call.drop():
            raise
        task = asyncio.current_task()
        if task is not None:
            ended: asyncio.Future[BaseException | None] = loop.create_future()
            watchers.append(ended)
            if outcome:  # the thread finished before it could see the watcher
                _settle(ended, outcome[0])
            _LEFT_RUNNING[task] = ended
        raise
    finally:
        if in_flight is not None:
            in_flight[loop] -= 1


def _settle(future: asyncio.Future[BaseException | None], error: BaseException | None) -> None:
    if not future.done():
        future.set_result(error)


def _is_coroutine_function(fn: Callable[..., Any]) -> bool:
    """``inspect.iscoroutinefunction``, remembered per class-level function behind a bound method.

    Every lifecycle step invokes a method; inspecting its code flags each time adds up. Plain
    callables (lambdas, partials) are inspected each time, so none is kept alive by a cache.
    """
    func = getattr(fn, "__func__", None)
    if func is None or getattr(fn, "__self__", None) is None:
        return inspect.iscoroutinefunction(fn)
    return _method_is_coroutine(func)


@cache
def _method_is_coroutine(func: Callable[..., Any]) -> bool:
    return inspect.iscoroutinefunction(func)


@cache
def accepts_keyword(fn: Callable[..., Any], name: str) -> bool:
    """Whether ``fn`` takes a parameter ``name`` (e.g. a ``stop`` written without ``connector_deleted``)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
