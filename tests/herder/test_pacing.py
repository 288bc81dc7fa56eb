"""Handing out work a chunk at a time: every item, in order, with the loop turning between chunks; and
the count of sync lifecycle calls still out in threads that the pace waits on."""

from __future__ import annotations

import asyncio
import threading

from engine.api._invoke import invoke, lifecycle_calls_in_flight
from engine.herder.pacing import CHUNK, paced


async def test_every_item_is_handed_out_in_order_with_the_loop_turning_between_chunks() -> None:
    turns = 0
    handed: list[tuple[int, int]] = []  # (item, the loop turn it was handed out in)

    async def ticker() -> None:
        nonlocal turns
        while True:
            await asyncio.sleep(0)
            turns += 1

    ticking = asyncio.get_running_loop().create_task(ticker())
    await asyncio.sleep(0)
    try:
        await paced(range(10 * CHUNK + 3), lambda item: handed.append((item, turns)))
    finally:
        ticking.cancel()
    assert [item for item, _ in handed] == list(range(10 * CHUNK + 3))
    per_turn: dict[int, int] = {}
    for _, turn in handed:
        per_turn[turn] = per_turn.get(turn, 0) + 1
    assert max(per_turn.values()) == CHUNK  # before: all 83 in one callback
    assert len(per_turn) == 11


async def test_sync_lifecycle_calls_are_counted_until_they_are_back_on_the_loop() -> None:
    loop = asyncio.get_running_loop()
    release = threading.Event()
    calls = [loop.create_task(invoke(release.wait, 10)) for _ in range(3)]
    for _ in range(5):
        await asyncio.sleep(0)
    assert lifecycle_calls_in_flight(loop) == 3
    calls[0].cancel()  # its thread still runs, but nobody waits for it on the loop any more
    await asyncio.gather(calls[0], return_exceptions=True)
    assert lifecycle_calls_in_flight(loop) == 2
    release.set()
    assert await asyncio.gather(*calls[1:]) == [True, True]
    assert lifecycle_calls_in_flight(loop) == 0
