"""Values config providers resolved, kept out of every text that leaves the engine.

A connector's ``${provider:path:key}`` references are resolved only when it starts, but what the
connector or its client library raises may quote the value it got (a password in a connection
error, a bad ``tasks.max``). Connect 4.4 stopped echoing provider-resolved values; here every value a
provider gives (``ConfigTransformer.resolve``) is remembered with the reference it was written as,
and ``hide`` puts the reference back wherever the value appears: statuses' ``trace``, ``errors.log``
lines and dead letter queue headers, log lines (``hide_in_event``, a structlog processor), a
rejected config's 400. Values shorter than ``MIN_LENGTH`` characters are not hidden in free text
(they would mask every small number and word); provider values are secrets, rarely that short.

The memory is per process, like the log configuration it feeds: a value resolved by any engine in
the process is hidden in all of their texts.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping, MutableMapping
from typing import Any

import structlog

MIN_LENGTH = 4


class RevealedSecrets:
    """Each value a provider resolved, with the reference written for it (the latest one wins)."""

    def __init__(self) -> None:
        self._references: dict[str, str] = {}
        self._pattern: re.Pattern[str] | None = None
        self._lock = threading.Lock()

    def remember(self, value: str, reference: str) -> None:
        if len(value) < MIN_LENGTH or value == reference or self._references.get(value) == reference:
            return
        with self._lock:
            self._references[value] = reference
            # longest first: a secret that contains another is replaced whole
            ordered = sorted(self._references, key=len, reverse=True)
            self._pattern = re.compile("|".join(map(re.escape, ordered)))

    def hide(self, text: str) -> str:
        """``text`` with every remembered value replaced by its reference."""
        pattern = self._pattern
        if pattern is None or not text:
            return text
        references = self._references
        return pattern.sub(lambda m: references.get(m.group(0), m.group(0)), text)

    def hide_all(self, value: Any) -> Any:
        """``hide`` over strings, and through the dicts, lists and tuples holding them."""
        if self._pattern is None:
            return value
        if isinstance(value, str):
            return self.hide(value)
        if isinstance(value, Mapping):
            return {k: self.hide_all(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(self.hide_all(v) for v in value)
        return value

    def forget_all(self) -> None:
        """For tests: start over."""
        with self._lock:
            self._references.clear()
            self._pattern = None

    @property
    def active(self) -> bool:
        return self._pattern is not None


REVEALED = RevealedSecrets()


def hide(text: str) -> str:
    """``text`` without any value a config provider resolved in this process (its reference instead)."""
    return REVEALED.hide(text)


def hide_in_event(logger: Any, method: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """A structlog processor: no log line carries a provider-resolved value. Exception info is rendered
    to text first when there is anything to hide (the traceback may quote the value)."""
    if not REVEALED.active:
        return event
    exc_info = event.pop("exc_info", None)
    if exc_info:
        event["exc_info"] = exc_info
        event = structlog.processors.format_exc_info(logger, method, event)
    for key, value in list(event.items()):
        event[key] = REVEALED.hide_all(value)
    return event
