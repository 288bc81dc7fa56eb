"""Logging set-up for programs built on the engine: console on a terminal, JSON otherwise.

The engine is a library: it never writes to stdout or stderr on its own. Left as they are,
structlog's defaults would print every event to stdout, mixed into the host program's output; so
``import engine`` calls ``quiet_until_configured``, which (only while nobody configured structlog)
hands events to stdlib ``logging`` under ``engine.<component>``, and a ``NullHandler`` on ``engine`` keeps them
out of sight until the application configures logging: ``logging.basicConfig(level=...)`` shows
them through stdlib handlers; ``configure_logging`` (what the CLI calls) or the application's own
``structlog.configure`` replaces this default entirely. Call either once, before starting an
engine (its herder binds its transition logger when the engine starts).
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable, MutableMapping
from typing import Any

import structlog

from engine.config.secrets import hide_in_event
from engine.observability.expected_conditions import soften_expected_conditions
from engine.observability.log_levels import LOG_LEVELS, ROOT, drop_below_level

ENGINE_LOGGER = "engine"


class _CurrentStderr:
    """Whatever ``sys.stderr`` is when a line is written: test runners and daemons swap it."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


class RepeatFilter(logging.Filter):
    """The same library message again within ``window_s``: dropped and counted, the count carried by
    the first one after the window. A broker outage makes aiokafka log a reconnect error per
    attempt (~90 lines/s were seen); an operator needs the first and how often, not the flood."""

    def __init__(self, window_s: float = 10.0, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.window_s = window_s
        self._clock = clock
        self._seen: dict[tuple[str, int, str], tuple[float, int]] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        key = (record.name, record.levelno, str(record.msg))
        now = self._clock()
        shown_at, dropped = self._seen.get(key, (None, 0))
        if shown_at is not None and now - shown_at < self.window_s:
            self._seen[key] = (shown_at, dropped + 1)
            return False
        if len(self._seen) > 1000:  # many distinct messages: forget the old ones rather than grow
            self._seen.clear()
        self._seen[key] = (now, 0)
        if dropped:
            record.msg = f"{record.msg} (repeated {dropped} more times in {self.window_s:g} s)"
        return True


class _ToStructlog(logging.Handler):
    """Library (stdlib) records become structlog events of component ``<logger name>``: one format."""

    def emit(self, record: logging.LogRecord) -> None:
        if record.name == ENGINE_LOGGER or record.name.startswith(ENGINE_LOGGER + "."):
            return  # an engine event handed to stdlib by the quiet default: it came from structlog already
        method = record.levelname.lower() if record.levelno < logging.CRITICAL else "critical"
        exc = record.exc_info[1] if record.exc_info else None
        extra = {"error": repr(exc)} if exc is not None else {}  # the reason, not only "Error handling ..."
        getattr(structlog.get_logger(component=record.name), method, structlog.get_logger().error)(
            record.getMessage(), **extra
        )


_LEVELS = {
    "critical": logging.CRITICAL,
    "exception": logging.ERROR,
    "error": logging.ERROR,
    "warning": logging.WARNING,
    "warn": logging.WARNING,
    "info": logging.INFO,
    "msg": logging.INFO,
    "debug": logging.DEBUG,
}
_LOGFMT = structlog.processors.LogfmtRenderer(key_order=["event"])


def _stdlib_logger(event: MutableMapping[str, Any]) -> logging.Logger:
    """``engine.<component>``: the namespaces ``/admin/loggers`` knows, as stdlib loggers."""
    return logging.getLogger(f"{ENGINE_LOGGER}.{event.get('component', 'engine')}")


def _enabled_in_stdlib(
    _logger: Any, method: str, event: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    """Drop an event its stdlib logger would not show, before anything is rendered."""
    if not _stdlib_logger(event).isEnabledFor(_LEVELS.get(method, logging.INFO)):
        raise structlog.DropEvent
    return event


def _to_stdlib(logger: Any, method: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """Hand the event, as one logfmt line, to its stdlib logger; nothing is printed by structlog itself."""
    target = _stdlib_logger(event)
    target.log(_LEVELS.get(method, logging.INFO), _LOGFMT(logger, method, event))
    raise structlog.DropEvent


def quiet_until_configured() -> None:
    """Unless structlog is configured already: events go to stdlib ``logging`` as one logfmt line each,
    under ``engine.<component>`` (``engine.herder``, ``engine.worker`` ...: the namespaces of
    ``/admin/loggers``), and the ``engine`` logger gets a ``NullHandler``, so an application that
    configured nothing sees nothing (not even Python's last-resort WARNING lines). Runs once, at
    ``import engine``; structlog configured later replaces it.
    """
    soften_expected_conditions()  # aiokafka's transient conditions are not errors, however logging is set up
    if structlog.is_configured():
        return
    structlog.configure(
        processors=[
            _enabled_in_stdlib,  # the stdlib level decides, cheaply, before any rendering
            drop_below_level,  # /admin/loggers levels, as with configure_logging
            structlog.contextvars.merge_contextvars,
            structlog.processors.format_exc_info,
            hide_in_event,  # no provider-resolved value in a log line (engine/config/secrets.py)
            _to_stdlib,
        ],
        wrapper_class=structlog.BoundLogger,
        logger_factory=structlog.ReturnLoggerFactory(),  # never reached: _to_stdlib hands every event on
        cache_logger_on_first_use=False,  # an application configuring later must reach every logger
    )
    engine_logger = logging.getLogger(ENGINE_LOGGER)
    if not any(isinstance(h, logging.NullHandler) for h in engine_logger.handlers):
        engine_logger.addHandler(logging.NullHandler())


def configure_logging(level: str = "INFO", *, json: bool | None = None) -> None:
    """Route structlog events to stderr: JSON lines unless stderr is a terminal (or ``json`` says)."""
    as_json = (not sys.stderr.isatty()) if json is None else json
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer() if as_json else structlog.dev.ConsoleRenderer()
    )
    LOG_LEVELS.set(ROOT, level, at_startup=True)
    processors: list[structlog.typing.Processor] = [
        drop_below_level,  # per-namespace levels, changeable at runtime (/admin/loggers)
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    if as_json:
        processors.append(structlog.processors.dict_tracebacks)
    processors.append(hide_in_event)  # no provider-resolved value in a log line (engine/config/secrets.py)
    processors.append(renderer)
    structlog.configure(
        processors=processors,
        wrapper_class=structlog.make_filtering_bound_logger(logging.NOTSET),
        logger_factory=structlog.PrintLoggerFactory(_CurrentStderr()),  # type: ignore[arg-type]
        cache_logger_on_first_use=False,
    )
    soften_expected_conditions()
    root = logging.getLogger()
    for handler in [h for h in root.handlers if isinstance(h, _ToStructlog)]:
        root.removeHandler(handler)
    handler = _ToStructlog(logging.WARNING)  # libraries' warnings and errors, as Python's last resort showed
    handler.addFilter(RepeatFilter())
    root.addHandler(handler)
