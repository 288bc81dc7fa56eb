"""A connector whose ``deleted()`` a test steers (fail, block in its thread), and a log of who ran when.

Every event carries the incarnation the callback saw in its context, so a test can show that an
old incarnation's ``deleted()`` never overlaps a new incarnation's ``start()``.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import ClassVar

from engine.api import ConnectException, SourceConnector, SourceRecord, SourceTask, Task


class Steering:
    """What the next ``deleted()`` calls do; reset per test."""

    def __init__(self) -> None:
        self.failures_left = 0  # deleted() raises this many more times
        self.release = threading.Event()  # deleted() waits for this when ``block`` is set
        self.block = False
        self.events: list[tuple[str, str, str, float]] = []  # (what, connector, incarnation, monotonic time)
        self.lock = threading.Lock()

    def log(self, what: str, connector: str, incarnation: str) -> None:
        with self.lock:
            self.events.append((what, connector, incarnation, time.monotonic()))

    def seen(self, what: str) -> list[str]:
        """Incarnations that logged ``what``, in order."""
        with self.lock:
            return [incarnation for event, _, incarnation, _ in self.events if event == what]


STEERING = Steering()


class CleanupProbeTask(SourceTask):
    def start(self, props: dict[str, str]) -> None:
        STEERING.log("task.start", props["connector.name"], self.context.incarnation())

    def poll(self) -> list[SourceRecord] | None:
        time.sleep(0.01)
        return None

    def stop(self, connector_deleted: bool = False) -> None:
        return None


class CleanupProbeConnector(SourceConnector):
    """Sync callbacks (run in worker threads), like most connectors that talk to a database."""

    TASK: ClassVar[type[Task]] = CleanupProbeTask

    def start(self, props: dict[str, str]) -> None:
        self.name = props["name"]
        STEERING.log("start", self.name, self.context.incarnation())

    def stop(self) -> None:
        return None

    def task_class(self) -> type[Task]:
        return self.TASK

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{"connector.name": self.name}]

    def deleted(self) -> None:
        name, incarnation = self.context.configs()["name"], self.context.incarnation()
        STEERING.log("deleted.begin", name, incarnation)
        try:
            marker = self.context.configs().get("probe.fail.while.exists")
            if marker and Path(marker).exists():
                raise ConnectException(f"cleanup refused while {marker} exists")
            if STEERING.failures_left > 0:
                STEERING.failures_left -= 1
                raise ConnectException("the database said no")
            if STEERING.block:
                STEERING.release.wait(30)
        finally:
            STEERING.log("deleted.end", name, incarnation)


CONNECTOR = f"{__name__}.CleanupProbeConnector"


def probe(**extra: str) -> dict[str, str]:
    return {"connector.class": CONNECTOR, "tasks.max": "1", **extra}
