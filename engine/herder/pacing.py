"""Handing thousands of connectors their work without holding the event loop.

A message posted to a connector's actor runs on the next turn of the loop, and so does every step of
the runners it launches, and every sync ``start``/``stop`` they hand to a thread comes back as a
callback: an assignment of 10,000 connectors posted at once made single turns of the loop last
seconds, and a REST request that arrived meanwhile waited behind all of them. Here the work is handed
out a chunk at a time, and the next chunk only once a turn of the loop is short again and the
threads have handed back most of the sync calls (what was handed out has mostly run), so requests,
heartbeats and the data plane interleave.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from typing import TypeVar

from engine.api._invoke import lifecycle_calls_in_flight

T = TypeVar("T")

CHUNK = 8  # connectors handed out before the loop is let turn
CALM_TURN_S = 0.004  # a turn of the loop this short means the chunks handed out so far have run
CALLS_IN_FLIGHT = 8  # sync lifecycle calls still in threads (or their results not yet taken)
MAX_WAIT_S = 0.05  # per chunk: a loop kept busy by other work slows an assignment, never stops it


async def paced(items: Iterable[T], hand: Callable[[T], None], *, chunk: int = CHUNK) -> None:
    """``hand(item)`` for every item, letting the loop turn until calm after every ``chunk`` of them."""
    loop = asyncio.get_running_loop()
    for count, item in enumerate(items, 1):
        hand(item)
        if count % chunk == 0:
            await until_calm(loop)


async def until_calm(loop: asyncio.AbstractEventLoop) -> None:
    """Yield until one turn of ``loop`` takes under ``CALM_TURN_S`` with fewer than ``CALLS_IN_FLIGHT``
    sync lifecycle calls out, or ``MAX_WAIT_S`` has passed (slow ``start()``s hold threads, not the loop).

    A turn is measured in this thread's CPU time: on a loaded machine the process also waits for a
    core, or for the GIL, and those waits are no backlog of the loop's own."""
    deadline = loop.time() + MAX_WAIT_S
    while True:
        began = time.thread_time()
        await asyncio.sleep(0)
        calm = time.thread_time() - began < CALM_TURN_S and lifecycle_calls_in_flight(loop) < CALLS_IN_FLIGHT
        if calm or loop.time() >= deadline:
            return
