"""Where in a task's pipeline a record failed (Kafka's ``Stage``), and which failures each stage tolerates.

Kafka's ``TOLERABLE_EXCEPTIONS``: converters and transformations are pure per-record functions,
so any ``Exception`` they raise can be blamed on the record and skipped; everywhere else (the
task's own ``poll``/``put``, producing, consuming) only a retriable error is the record's fault,
anything else is a broken task.
"""

from __future__ import annotations

from enum import StrEnum

from engine.api.errors import RetriableException


class Stage(StrEnum):
    TASK_POLL = "TASK_POLL"
    TASK_PUT = "TASK_PUT"
    TRANSFORMATION = "TRANSFORMATION"
    KEY_CONVERTER = "KEY_CONVERTER"
    VALUE_CONVERTER = "VALUE_CONVERTER"
    HEADER_CONVERTER = "HEADER_CONVERTER"
    KAFKA_PRODUCE = "KAFKA_PRODUCE"
    KAFKA_CONSUME = "KAFKA_CONSUME"


#: Stages at which any ``Exception`` may be tolerated; the others tolerate only retriable errors.
TOLERATE_ANY_EXCEPTION: frozenset[Stage] = frozenset(
    {Stage.TRANSFORMATION, Stage.KEY_CONVERTER, Stage.VALUE_CONVERTER, Stage.HEADER_CONVERTER}
)


def is_retriable(error: BaseException) -> bool:
    """``RetriableException``, or any error flagged ``retriable = True`` (e.g. a retriable ``TopicsError``)."""
    return isinstance(error, RetriableException) or getattr(error, "retriable", False) is True


def is_tolerable(stage: Stage, error: BaseException) -> bool:
    """Whether ``errors.tolerance=all`` may skip a record that failed with ``error`` at ``stage``."""
    if not isinstance(error, Exception):
        return False
    return stage in TOLERATE_ANY_EXCEPTION or is_retriable(error)
