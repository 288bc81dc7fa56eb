"""aiokafka's expected, transient conditions at debug level instead of error or warning.

aiokafka logs some normal moments of a cluster's life as errors: a topic being auto-created is
"Topic ... not found in cluster metadata" until it exists, a group just made answers
``GroupCoordinatorNotAvailable`` until its coordinator loads, and heartbeats see a rebalance. The
client retries each; Kafka's Java clients log them at debug or info. A filter on aiokafka's own
loggers lowers exactly these records (for every handler: the CLI's and an embedding application's),
and leaves everything else, real errors included, at its level.
"""

from __future__ import annotations

import logging
from typing import Final

__all__ = ["ExpectedConditions", "soften_expected_conditions"]

# (logger, message template): lowered whatever its arguments
_ALWAYS: Final = frozenset(
    {
        ("aiokafka.cluster", "Topic %s not found in cluster metadata"),
        ("aiokafka.cluster", "Topic %s is not available during auto-create initialization"),
        ("aiokafka.consumer.group_coordinator", "Heartbeat failed for group %s because it is rebalancing"),
    }
)
# (logger, message template): lowered when its error argument is one of these (the coordinator moves or loads)
_COORDINATOR: Final = frozenset(
    {("aiokafka.consumer.group_coordinator", "Group Coordinator Request failed: %s")}
)
_TRANSIENT_ERRORS: Final = frozenset(
    {"GroupCoordinatorNotAvailableError", "NotCoordinatorForGroupError", "GroupLoadInProgressError"}
)
LOGGERS: Final = tuple(sorted({name for name, _ in _ALWAYS | _COORDINATOR}))


class ExpectedConditions(logging.Filter):
    """Lowers aiokafka's expected, transient conditions to DEBUG; passes every record on."""

    def filter(self, record: logging.LogRecord) -> bool:
        key = (record.name, str(record.msg))
        expected = key in _ALWAYS or (
            key in _COORDINATOR
            and isinstance(record.args, tuple)
            and any(type(arg).__name__ in _TRANSIENT_ERRORS for arg in record.args)
        )
        if expected and record.levelno > logging.DEBUG:
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return True


def soften_expected_conditions() -> None:
    """Install the filter on aiokafka's loggers, once (filters on a logger see its records before any
    handler's level does)."""
    for name in LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, ExpectedConditions) for f in logger.filters):
            logger.addFilter(ExpectedConditions())
