"""What a runner tells the herder: the lifecycle trigger its instance's outcome calls for."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True, eq=False)
class Report:
    """``trigger`` is a lifecycle trigger (start, resume, pause, stop, fail); ``trace`` for fail."""

    runner: object
    trigger: str
    trace: str | None = None


ReportSink = Callable[[Report], None]
