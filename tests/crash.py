"""A compaction stopped at one of its steps, as a kill -9 would stop it (``journal.STEPS``)."""

from __future__ import annotations

from collections.abc import Callable


class Crash(Exception):
    """Raised by the step hook: the compaction stops there, as a kill would stop it."""


def crash_at(name: str) -> Callable[[str], None]:
    """A ``before_step`` hook that raises ``Crash`` before step ``name``."""

    def hook(step: str) -> None:
        if step == name:
            raise Crash(step)

    return hook
