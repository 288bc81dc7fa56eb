"""Marks framework default methods as safe to call on the event loop (no thread hop)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

INLINE_ATTRIBUTE = "__connect_engine_inline__"


def inline(fn: F) -> F:
    """Declare a sync default cheap and non-blocking, so the runtime skips ``to_thread`` for it.

    User overrides are not marked and therefore run in a worker thread, as blocking code must.
    """
    setattr(fn, INLINE_ATTRIBUTE, True)
    return fn
