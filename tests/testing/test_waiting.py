"""``engine.testing.eventually``: one poller for sync predicates and async checks."""

from __future__ import annotations

import pytest

from engine.testing import eventually


async def test_a_sync_predicate_returns_its_first_truthy_value() -> None:
    seen = iter([None, 0, "ready"])
    assert await eventually(lambda: next(seen), interval=0) == "ready"


async def test_an_async_check_is_awaited_and_its_value_returned() -> None:
    calls = 0

    async def check() -> int | None:
        nonlocal calls
        calls += 1
        return calls if calls == 3 else None

    assert await eventually(check, interval=0) == 3


async def test_a_timeout_names_the_condition_and_the_last_value() -> None:
    with pytest.raises(AssertionError, match=r"the worker is up did not hold within 0.05 s; last seen: \[\]"):
        await eventually(list, timeout=0.05, message="the worker is up")
