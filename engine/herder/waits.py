"""Waiting on what the herder shows: a connector (and its tasks) in a state, or the herder settled.

Both return on what was observed, never on a sleep that merely tends to be long enough.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from engine.errors import ConnectorNotFound, SettleTimeout, StateTimeout
from engine.herder.herder import Herder
from engine.herder.transition_feed import Subscription
from engine.storage.base import StatusStore

# settled(): this many consecutive quiet looks, with loop turns between, rule out a message in transit
_SETTLED_POLLS = 5
_SETTLE_POLL_S = 0.002


async def settled(herder: Herder, parked: Callable[[str, str], bool], timeout: float) -> None:
    """Return once every record is applied and no connector or task has work in flight, but for
    callbacks ``parked(connector, unit)`` names; ``SettleTimeout`` after ``timeout``."""
    calm = 0
    try:
        async with asyncio.timeout(timeout):
            while calm < _SETTLED_POLLS:
                # units append as they work (task configs), so the end is re-read when all is quiet
                quiet = herder.busy_count(parked) == 0 and herder.read_end >= await herder.log.end_offset()
                calm = calm + 1 if quiet else 0
                await asyncio.sleep(0 if calm else _SETTLE_POLL_S)
    except TimeoutError:
        raise SettleTimeout(
            f"The engine did not settle within {timeout:g} s: "
            f"{herder.busy_count(parked)} unit(s) or runner(s) still busy"
        ) from None


async def wait_for_state(
    feed: Subscription,
    statuses: StatusStore,
    state_info: Callable[[str], dict[str, Any]],
    name: str,
    state: str,
    tasks: int | Sequence[str] | None,
    timeout: float,
) -> dict[str, Any] | None:
    """Read ``feed`` (closed at the end) until the connector's status matches; ``state_info`` renders
    the answer, or what was seen instead in the ``StateTimeout``. ``DESTROYED``: no status; None."""
    try:
        async with asyncio.timeout(timeout):
            while not _matches(statuses, name, state, tasks):
                await anext(feed)
    except TimeoutError:
        raise StateTimeout(name, state, _describe(state_info, name)) from None
    finally:
        await feed.aclose()
    return None if state == "DESTROYED" else state_info(name)


def _matches(statuses: StatusStore, name: str, state: str, tasks: int | Sequence[str] | None) -> bool:
    connector = statuses.connector(name)
    if state == "DESTROYED":
        return connector is None
    if connector is None or connector.state != state:
        return False
    if tasks is None:
        return True
    states = [s.state for s in statuses.tasks(name).values()]
    if isinstance(tasks, int):
        return len(states) == tasks and all(s == state for s in states)
    return states == list(tasks)


def _describe(state_info: Callable[[str], dict[str, Any]], name: str) -> str:
    try:
        info = state_info(name)
    except ConnectorNotFound:
        return "no status"
    return f"connector {info['connector']['state']}, tasks {[t['state'] for t in info['tasks']]}"
