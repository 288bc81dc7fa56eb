"""Calling user code that may be sync or async, without ever blocking the event loop."""

from __future__ import annotations

import asyncio
import contextvars
import inspect
from collections.abc import Callable
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


async def invoke(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Await ``fn(*args)``: coroutines on the loop, sync code in a worker thread.

    Framework defaults marked ``inline`` run directly (they are trivial). A sync function that
    returns an awaitable gets it awaited, so wrappers and lambdas around coroutines work too.
    The duration goes to the engine's metrics (``CALLBACK_TIMER``), raising or not.
    """
    timer = CALLBACK_TIMER.get()
    started = perf_counter()
    try:
        if _is_coroutine_function(fn):
            return await fn(*args, **kwargs)
        if getattr(fn, INLINE_ATTRIBUTE, False):
            result = fn(*args, **kwargs)
        else:
            result = await _in_thread(fn, *args, **kwargs)
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


def left_running(task: asyncio.Task[Any]) -> asyncio.Future[BaseException | None] | None:
    """The callback thread ``task`` was cancelled out of, until it returns; None if it left none."""
    return _LEFT_RUNNING.get(task)


async def _in_thread(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``asyncio.to_thread``, except that a caller cancelled mid-call can still learn when the thread
    returns (``left_running``). The common path adds no loop callback: the thread only reports back
    once somebody is watching."""
    loop = asyncio.get_running_loop()
    call = partial(contextvars.copy_context().run, fn, *args, **kwargs)
    watchers: list[asyncio.Future[BaseException | None]] = []
    outcome: list[BaseException | None] = []  # set once the call returned (GIL: append is atomic)

    def run() -> Any:
        error: BaseException | None = None
        try:
            return call()
        except BaseException as exc:
            error = exc
            raise
        finally:
            outcome.append(error)
            if watchers:
                with suppress(RuntimeError):  # the loop closed meanwhile: nobody is left to tell
                    loop.call_soon_threadsafe(_settle, watchers[0], error)

    try:
        return await loop.run_in_executor(None, run)
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if task is not None:
            ended: asyncio.Future[BaseException | None] = loop.create_future()
            watchers.append(ended)
            if outcome:  # the thread finished before it could see the watcher
                _settle(ended, outcome[0])
            _LEFT_RUNNING[task] = ended
        raise


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
