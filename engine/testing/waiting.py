"""Waiting for conditions instead of sleeping (Connect's ``waitForCondition``)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable


async def eventually(condition: Callable[[], object], *, timeout: float = 10.0, interval: float = 0.01,
                     message: str = "condition") -> None:
    """Return once ``condition()`` is truthy; raise AssertionError naming it after ``timeout``."""
    try:
        async with asyncio.timeout(timeout):
            while not condition():  # noqa: ASYNC110 - polls an arbitrary predicate
                await asyncio.sleep(interval)
    except TimeoutError:
        raise AssertionError(f"{message} did not hold within {timeout} s") from None
