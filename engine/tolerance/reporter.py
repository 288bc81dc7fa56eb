"""What the operator hands every finally failed record to: logging, the dead letter queue."""

from __future__ import annotations

from typing import Protocol

from engine.tolerance.context import ProcessingContext
from engine.tolerance.metrics import ErrorMetrics


class ErrorReporter(Protocol):
    async def report(self, ctx: ProcessingContext, metrics: ErrorMetrics | None = None) -> None:
        """Persist or announce the failed ``ctx``; count what was done on ``metrics``.

        Raises when the report itself failed (e.g. the dead letter queue refused the record).
        """
        ...
