"""Logging set-up for programs built on the engine: console on a terminal, JSON otherwise.

The engine itself never configures logging (it is a library); the CLI and embedding programs
call ``configure_logging`` once, before starting an engine (its herder binds its transition
logger when the engine starts).
"""

from __future__ import annotations

import logging
import sys

import structlog

from engine.observability.log_levels import LOG_LEVELS, ROOT, drop_below_level


class _CurrentStderr:
    """Whatever ``sys.stderr`` is when a line is written: test runners and daemons swap it."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


def configure_logging(level: str = "INFO", *, json: bool | None = None) -> None:
    """Route structlog events to stderr: JSON lines unless stderr is a terminal (or ``json`` says)."""
    as_json = (not sys.stderr.isatty()) if json is None else json
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer() if as_json else structlog.dev.ConsoleRenderer()
    )
    LOG_LEVELS.set(ROOT, level)
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
