"""CPython's garbage collector tuned for a worker process: full collections 100x rarer.

A worker holds many long-lived objects (its runners, lifecycles and parked coroutines: about 240
per connector with two tasks); with the default thresholds, full collections over them took about
40 % of the CPU of ``bench/lifecycle.py`` at 1,000 connectors.
"""

from __future__ import annotations

import gc

DEFAULT_GC_THRESHOLD = (700, 10, 10)  # CPython's
ENGINE_GC_THRESHOLD2 = 1000


def fewer_full_collections() -> None:
    """Make full (oldest-generation) collections 100x rarer, once per process.

    Young collections are untouched, so short-lived cycles go as soon as before. A process that set
    its own thresholds keeps them.
    """
    first, second, third = gc.get_threshold()
    if (first, second, third) == DEFAULT_GC_THRESHOLD:
        gc.set_threshold(first, second, ENGINE_GC_THRESHOLD2)
