"""Log lines a scenario provokes on purpose, told apart from real ones during ``connect-engine replay``.

A scenario's injected faults (``inject`` steps; the instrumented connectors' ``test.*`` keys such as
``test.fail.start`` or ``test.task.count``; malformed records written by ``record`` steps) make
connectors fail, time out and retry, and the engine logs that at warning or error level, as it
would a real failure. While a replay runs, such lines are marked
``expected="injected fault"`` and filtered as if they were info lines: hidden at the default
WARNING level, shown (marked) with ``--log-level INFO``. They are counted, so each verdict can say how many there were.
"""

from __future__ import annotations

import contextlib
import gc
import logging
from collections.abc import Iterator, MutableMapping
from typing import Any

import structlog

from engine.observability.log_levels import LOG_LEVELS
from engine.scenario.model import Scenario
from engine.testing.faults import SimulatedCrash

_LOUD = {"warning", "warn", "error", "exception", "critical"}
_MARKERS = ("injected failure", "crashed in ")  # what FAULTS raises (engine/testing/faults.py)
_FAULT_KEYS = "test."  # the instrumented connectors' behaviour keys (engine/testing/recording.py)


def provoked_by(scenario: Scenario) -> tuple[set[str], set[str]]:
    """The connectors a scenario injects faults into (``inject`` steps, ``test.*`` keys), and the
    config-log keys its ``record`` steps write."""
    connectors, records = set(), set()
    for step in scenario.steps:
        if step.verb == "inject":
            connectors.add(str(step.args["connector"]))
        elif step.verb == "record":
            records.add(str(step.args["key"]))
        elif step.verb in ("create", "update", "patch") and any(
            str(key).startswith(_FAULT_KEYS) for key in step.args.get("config", {})
        ):
            connectors.add(str(step.args["name"]))
    return connectors, records


class ExpectedFaults:
    """Marks and quiets the current scenario's fault-provoked log lines; ``begin`` each scenario."""

    def __init__(self) -> None:
        self.connectors: set[str] = set()
        self.records: set[str] = set()
        self.count = 0

    def begin(self, scenario: Scenario) -> None:
        self.connectors, self.records = provoked_by(scenario)
        self.count = 0

    def end(self) -> int:
        """How many lines the scenario's faults provoked, once what it left behind is collected: a
        crashed task's "exception was never retrieved" is reported when it is garbage-collected."""
        gc.collect()
        return self.count

    def _provoked(self, event: MutableMapping[str, Any]) -> bool:
        fields = {**structlog.contextvars.get_contextvars(), **event}  # the chain merges bound context later
        if fields.get("connector") in self.connectors or fields.get("key") in self.records:
            return True
        return any(isinstance(value, str) and any(m in value for m in _MARKERS) for value in fields.values())

    def processor(
        self, _logger: Any, method: str, event: MutableMapping[str, Any]
    ) -> MutableMapping[str, Any]:
        """structlog processor, first in the chain: an expected line counts as info for level filtering."""
        if method not in _LOUD or not self._provoked(event):
            return event
        self.count += 1
        if LOG_LEVELS.effective(f"engine.{event.get('component', 'engine')}") > logging.INFO:
            raise structlog.DropEvent
        event["expected"] = "injected fault"
        return event

    def filter(self, record: logging.LogRecord) -> bool:
        """stdlib filter (asyncio's "exception was never retrieved"): drop an injected crash's report."""
        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, SimulatedCrash) or (
            error is not None and any(m in str(error) for m in _MARKERS)
        ):
            self.count += 1
            return False
        return True

    @contextlib.contextmanager
    def installed(self) -> Iterator[ExpectedFaults]:
        """Put the processor in front of structlog's chain and the filter on asyncio's logger, then restore."""
        processors = structlog.get_config()["processors"]  # the live list: loggers bound earlier see it too
        processors.insert(0, self.processor)
        asyncio_log = logging.getLogger("asyncio")
        asyncio_log.addFilter(self.filter)
        try:
            yield self
        finally:
            asyncio_log.removeFilter(self.filter)
            processors.remove(self.processor)
