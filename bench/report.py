"""Where a benchmark's markdown goes: printed, and appended to BENCHMARKS.md when ``--append`` names it;
and the alternating-block timer the same-run converter comparisons share."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping


def append_to(path: str | None, text: str) -> None:
    """Append ``text`` to the file at ``path``; nothing when no file was named."""
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(text)


def alternating_blocks(
    n: int, block: int, rounds: int, sides: Mapping[str, Callable[[slice], object]]
) -> dict[str, list[float]]:
    """Seconds per round for each side, the sides taking turns block by block over ``n`` records,
    so a load spike from another process hits them all rather than one (a same-run ratio holds)."""
    timings: dict[str, list[float]] = {name: [] for name in sides}
    for _ in range(rounds):
        spent = dict.fromkeys(sides, 0.0)
        for start in range(0, n, block):
            records = slice(start, start + block)
            for name, side in sides.items():
                began = time.perf_counter()
                side(records)
                spent[name] += time.perf_counter() - began
        for name, seconds in spent.items():
            timings[name].append(seconds)
    return timings
