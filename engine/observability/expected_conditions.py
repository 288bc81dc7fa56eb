"""Libraries' records at their real weight: aiokafka's expected, transient conditions at debug level
instead of error or warning, and a malformed HTTP request at warning with its reason.

aiokafka logs some normal moments of a cluster's life as errors: a topic being auto-created is
"Topic ... not found in cluster metadata" until it exists, a group just made answers
``GroupCoordinatorNotAvailable`` until its coordinator loads, and heartbeats see a rebalance. The
client retries each; Kafka's Java clients log them at debug or info. A filter on aiokafka's own
loggers lowers exactly these records (for every handler: the CLI's and an embedding application's),
and leaves everything else, real errors included, at its level.

aiohttp logs a request it cannot parse (a NUL byte in a header, a bad request line) as "Error handling
request from <peer>" at ERROR with the reason only in the traceback. The client's mistake is answered
400; the server is fine: a warning that says why, in one line.
"""

from __future__ import annotations

import logging
from typing import Final

__all__ = ["ExpectedConditions", "MalformedRequests", "soften_expected_conditions"]

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
AIOHTTP_SERVER: Final = "aiohttp.server"
_AIOHTTP_ERROR: Final = "Error handling request from %s"


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


def _reason(message: str) -> str:
    """aiohttp's parser message on one line: ``Invalid header value char: b'X-Bad: a\\x00b'`` (its caret
    line, pointing under the byte, dropped)."""
    lines = [line.strip() for line in message.splitlines()]
    return " ".join(line for line in lines if line and set(line) != {"^"})


class MalformedRequests(logging.Filter):
    """aiohttp's "Error handling request" for a request it could not parse (a 4xx it answers itself):
    WARNING, naming the peer, the reason and the status, without a traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        from aiohttp.http_exceptions import HttpProcessingError

        exc = record.exc_info[1] if record.exc_info else None
        if (
            str(record.msg) == _AIOHTTP_ERROR
            and isinstance(exc, HttpProcessingError)
            and 400 <= exc.code < 500
            and record.levelno > logging.WARNING
        ):
            peer = record.args[0] if isinstance(record.args, tuple) and record.args else None
            record.msg = "Malformed HTTP request from %s, answered %d: %s"
            record.args = (peer, exc.code, _reason(exc.message))
            record.exc_info, record.exc_text = None, None
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


def _install(name: str, kind: type[logging.Filter]) -> None:
    logger = logging.getLogger(name)
    if not any(isinstance(f, kind) for f in logger.filters):
        logger.addFilter(kind())


def soften_expected_conditions() -> None:
    """Install the filters on aiokafka's and aiohttp's loggers, once (filters on a logger see its records
    before any handler's level does)."""
    for name in LOGGERS:
        _install(name, ExpectedConditions)
    _install(AIOHTTP_SERVER, MalformedRequests)
