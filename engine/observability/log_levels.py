"""Runtime log levels per logger namespace, as Connect's ``/admin/loggers`` changes them.

Engine events are structlog events named ``engine.<component>``; libraries log through stdlib
``logging`` (``aiokafka``...). A level set on a namespace applies to it and every descendant,
for both: the structlog processor ``drop_below_level`` consults this registry.
"""

from __future__ import annotations

import logging
import time
from collections.abc import MutableMapping
from dataclasses import dataclass
from typing import Any

import structlog

from engine.errors import EngineError

ROOT = "root"
# Log4j's names, mapped onto logging's numbers
LEVELS = {
    "OFF": logging.CRITICAL + 10,
    "FATAL": logging.CRITICAL,
    "ERROR": logging.ERROR,
    "WARN": logging.WARNING,
    "INFO": logging.INFO,
    "DEBUG": logging.DEBUG,
    "TRACE": 5,
    "ALL": 0,
}
_PYTHON_NAMES = {"WARNING": logging.WARNING, "CRITICAL": logging.CRITICAL}  # accepted, shown as Log4j's
_NAMES = {number: name for name, number in LEVELS.items()}
_METHOD_LEVELS = {
    "critical": logging.CRITICAL,
    "exception": logging.ERROR,
    "error": logging.ERROR,
    "warning": logging.WARNING,
    "warn": logging.WARNING,
    "info": logging.INFO,
    "debug": logging.DEBUG,
}


class InvalidLogLevel(EngineError):
    http_status = 404  # what Connect answers for an unknown level name

    def __init__(self, level: str) -> None:
        super().__init__(f"invalid log level '{level}'.")


@dataclass
class LoggerLevel:
    level: int
    last_modified: int | None  # epoch ms; None for levels set at start-up

    def as_json(self) -> dict[str, Any]:
        return {
            "level": _NAMES.get(self.level, logging.getLevelName(self.level)),
            "last_modified": self.last_modified,
        }


class LogLevels:
    """Explicit levels by namespace; the root level always exists."""

    def __init__(self, root: int = logging.INFO) -> None:
        self._levels: dict[str, LoggerLevel] = {ROOT: LoggerLevel(root, None)}
        self._known: set[str] = set()

    def reset(self, root: int = logging.INFO) -> None:
        """Forget every explicit level (tests; a fresh worker)."""
        self._levels = {ROOT: LoggerLevel(root, None)}

    def note(self, name: str) -> None:
        """Remember a logger that has logged, so a namespace change can list what it affects."""
        self._known.add(name)

    def all(self) -> dict[str, dict[str, Any]]:
        return {name: level.as_json() for name, level in sorted(self._levels.items())}

    def get(self, name: str) -> dict[str, Any] | None:
        if name in self._levels:
            return self._levels[name].as_json()
        if name in self._known or name in logging.root.manager.loggerDict:
            return LoggerLevel(self.effective(name), None).as_json()
        return None

    @staticmethod
    def validate(level_name: str) -> int:
        """The level's number; ``InvalidLogLevel`` (Connect's 404) for a name Log4j does not know."""
        level = LEVELS.get(level_name.upper(), _PYTHON_NAMES.get(level_name.upper()))
        if level is None:
            raise InvalidLogLevel(level_name)
        return level

    def set(self, namespace: str, level_name: str, *, at_startup: bool = False) -> list[str]:
        """Set ``namespace`` and its descendants; returns the affected loggers, sorted.

        ``at_startup``: the worker's configured level, which Connect reports with ``last_modified`` null."""
        level = self.validate(level_name)
        now = None if at_startup else int(time.time() * 1000)
        known = self._known | set(logging.root.manager.loggerDict) | set(self._levels)
        affected = sorted(
            n
            for n in known | {namespace}
            if namespace == ROOT or n == namespace or n.startswith(namespace + ".")
        )
        for name in affected:
            current = self._levels.get(name)
            if current is None or current.level != level:  # last_modified moves only on a real change
                self._levels[name] = LoggerLevel(level, now)
            if name != ROOT:
                logging.getLogger(name).setLevel(level)
        if namespace == ROOT:
            logging.getLogger().setLevel(level)
        return affected

    def effective(self, name: str) -> int:
        while True:
            if name in self._levels:
                return self._levels[name].level
            if "." not in name:
                return self._levels[ROOT].level
            name = name.rsplit(".", 1)[0]


LOG_LEVELS = LogLevels()


def drop_below_level(_logger: Any, method: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """structlog processor: drop events below their namespace's level (``engine.<component>``)."""
    name = f"engine.{event.get('component', 'engine')}"
    LOG_LEVELS.note(name)
    if _METHOD_LEVELS.get(method, logging.INFO) < LOG_LEVELS.effective(name):
        raise structlog.DropEvent
    return event
