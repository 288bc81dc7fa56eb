"""Waiting for conditions instead of sleeping (Connect's ``waitForCondition``).

One poller serves sync predicates (an in-process engine's state) and async checks (a REST call
to a worker process); ``engine.testing.cluster.poll_until`` is the same with defaults for
processes and brokers.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, overload

__all__ = ["eventually"]

T = TypeVar("T")


@overload
async def eventually(
    check: Callable[[], Awaitable[T | None]],
    *,
    timeout: float = ...,
    interval: float = ...,
    message: str = ...,
    what: str = ...,
) -> T: ...


@overload
async def eventually(
    check: Callable[[], T | None],
    *,
    timeout: float = ...,
    interval: float = ...,
    message: str = ...,
    what: str = ...,
) -> T: ...


async def eventually(
    check: Callable[[], object],
    *,
    timeout: float = 10.0,
    interval: float = 0.01,
    message: str = "",
    what: str = "",
) -> Any:
    """Return the first truthy value ``check()`` gives (awaited if it is a coroutine).

    Raises ``AssertionError`` naming the condition (``message``, or its synonym ``what``, else the
    check's name) and the last value seen once ``timeout`` seconds have passed. A check in flight
    is never cancelled, so an async check's request always completes.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    last: Any = None
    while loop.time() < deadline:
        found = check()
        if inspect.isawaitable(found):
            found = await found
        if found:
            return found
        last = found
        await asyncio.sleep(interval)
    name = message or what or _name_of(check)
    raise AssertionError(f"{name} did not hold within {timeout} s; last seen: {last!r}")


def _name_of(check: Callable[..., object]) -> str:
    name = getattr(check, "__name__", "<lambda>")
    return "condition" if name == "<lambda>" else name
