"""Logging set-up for programs built on the engine: console on a terminal, JSON otherwise.

The engine itself never configures logging (it is a library); the CLI and embedding programs
call ``configure_logging`` once, before starting an engine (its herder binds its transition
logger when the engine starts).
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable

import structlog

from engine.observability.log_levels import LOG_LEVELS, ROOT, drop_below_level


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
        method = record.levelname.lower() if record.levelno < logging.CRITICAL else "critical"
        getattr(structlog.get_logger(component=record.name), method, structlog.get_logger().error)(
            record.getMessage())


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
    processors.append(renderer)
    structlog.configure(
        processors=processors,
        wrapper_class=structlog.make_filtering_bound_logger(logging.NOTSET),
        logger_factory=structlog.PrintLoggerFactory(_CurrentStderr()),  # type: ignore[arg-type]
        cache_logger_on_first_use=False,
    )
    root = logging.getLogger()
    for handler in [h for h in root.handlers if isinstance(h, _ToStructlog)]:
        root.removeHandler(handler)
    handler = _ToStructlog(logging.WARNING)  # libraries' warnings and errors, as Python's last resort showed
    handler.addFilter(RepeatFilter())
    root.addHandler(handler)
