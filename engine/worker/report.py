"""What a runner tells the herder: the lifecycle trigger its instance's outcome calls for."""

from __future__ import annotations

import traceback
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True, eq=False)
class Report:
    """``trigger`` is a lifecycle trigger (start, resume, pause, stop, fail); ``trace`` for fail."""

    runner: object
    trigger: str
    trace: str | None = None


ReportSink = Callable[[Report], None]


def trace_of(exc: BaseException) -> str:
    return "".join(traceback.format_exception(exc)).rstrip()
