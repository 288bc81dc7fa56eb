"""FAULTS, the injected-fault registry: a callback released by the clock or a clear has left its
parked state when ``advance``/``clear`` return, so a scenario step never settles before it returns."""

from __future__ import annotations

import threading
import time

import pytest

from engine.testing.faults import Faults


def _parked_callback(faults: Faults, connector: str) -> threading.Thread:
    thread = threading.Thread(target=faults.hit, args=(connector, "connector", "stop"), daemon=True)
    thread.start()
    deadline = time.monotonic() + 5
    while not faults.parked(connector, "connector"):
        assert time.monotonic() < deadline, "the callback never parked"
        time.sleep(0.001)
    return thread


@pytest.mark.parametrize("attempt", range(5))
def test_advancing_past_a_block_unparks_its_callback_before_returning(attempt: int) -> None:
    faults = Faults()
    faults.inject("c", "stop", "block", seconds=5)
    thread = _parked_callback(faults, "c")
    faults.advance(4)
    assert faults.parked("c", "connector")  # still held: 1 s of its 5 s left
    faults.advance(1)
    assert not faults.parked("c", "connector")
    thread.join(5)


@pytest.mark.parametrize("attempt", range(5))
def test_clearing_a_block_unparks_its_callback_before_returning(attempt: int) -> None:
    faults = Faults()
    faults.inject("c", "stop", "block")
    thread = _parked_callback(faults, "c")
    faults.clear("c")
    assert not faults.parked("c", "connector")
    thread.join(5)
