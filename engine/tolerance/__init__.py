"""Record-level error handling for task loops: Kafka Connect's retry, tolerance and error reporting.

    loop runs a stage ──ok──▶ next stage
          │ raises
          ▼
    ToleranceOperator.recover(ctx, stage, class, operation, error)
          │ retriable and within errors.retry.timeout ──▶ back off, call again ──ok──▶ result
          ▼ finally failed: ctx.error set, counted, reported (LogReporter, DeadLetterQueueReporter)
          ├─ stage does not tolerate it ──▶ ConnectException("Unhandled exception in error handler")
          ├─ errors.tolerance=none      ──▶ ConnectException("Tolerance exceeded in error handler")
          └─ errors.tolerance=all       ──▶ None; ctx.failed, the record is skipped

A sink task's own rejects come through ``ErrantRecordReporter.report`` (stage ``TASK_PUT``): they are
reported without retry; under ``none`` the loop fails the task after ``put`` (``pending_failure``).
Unlike Kafka, a retriable error that runs out of retries under ``none`` fails the task too (see
``engine.tolerance.retry_with_tolerance``).
"""

from engine.tolerance.config import ErrorPolicy
from engine.tolerance.context import ProcessingContext
from engine.tolerance.dead_letter import (
    HEADER_PREFIX,
    DeadLetterQueueReporter,
    SourceRender,
    ensure_dlq_topic,
    open_dead_letter_queue,
    render_source,
)
from engine.tolerance.errant import ErrantRecordReporter, ThreadReportFuture, make_errant_reporter
from engine.tolerance.log_reporter import LogReporter
from engine.tolerance.metrics import ErrorMetrics
from engine.tolerance.reporter import ErrorReporter
from engine.tolerance.retry_with_tolerance import ToleranceOperator
from engine.tolerance.stage import TOLERATE_ANY_EXCEPTION, Stage, is_retriable, is_tolerable

__all__ = [
    "HEADER_PREFIX",
    "TOLERATE_ANY_EXCEPTION",
    "DeadLetterQueueReporter",
    "ErrantRecordReporter",
    "ErrorMetrics",
    "ErrorPolicy",
    "ErrorReporter",
    "LogReporter",
    "ProcessingContext",
    "SourceRender",
    "Stage",
    "ThreadReportFuture",
    "ToleranceOperator",
    "ensure_dlq_topic",
    "is_retriable",
    "is_tolerable",
    "make_errant_reporter",
    "open_dead_letter_queue",
    "render_source",
]
