"""Calling user code that may be sync or async, without ever blocking the event loop."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from contextvars import ContextVar
from functools import cache
from time import perf_counter
from typing import Any

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
            result = await asyncio.to_thread(fn, *args, **kwargs)
        if inspect.isawaitable(result):
            return await result
        return result
    finally:
        if timer is not None:
            timer(getattr(fn, "__name__", "callable"), perf_counter() - started)


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
