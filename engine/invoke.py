"""Calling user code that may be sync or async, without ever blocking the event loop."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from functools import cache
from typing import Any

from engine.api.inline import INLINE_ATTRIBUTE


async def invoke(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Await ``fn(*args)``: coroutines on the loop, sync code in a worker thread.

    Framework defaults marked ``inline`` run directly (they are trivial). A sync function that
    returns an awaitable gets it awaited, so wrappers and lambdas around coroutines work too.
    """
    if inspect.iscoroutinefunction(fn):
        return await fn(*args, **kwargs)
    if getattr(fn, INLINE_ATTRIBUTE, False):
        result = fn(*args, **kwargs)
    else:
        result = await asyncio.to_thread(fn, *args, **kwargs)
    if inspect.isawaitable(result):
        return await result
    return result


@cache
def accepts_keyword(fn: Callable[..., Any], name: str) -> bool:
    """Whether ``fn`` takes a parameter ``name`` (e.g. a ``stop`` written without ``connector_deleted``)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
