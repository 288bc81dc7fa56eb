"""Test-only connectors for deletion-order probes and signature variants."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from engine.api import SourceConnector, SourceRecord, SourceTask, Task
from engine.testing import CALLS, Call


class StopWithoutFlagTask(SourceTask):
    """A task written against the plain Kafka API: ``stop()`` takes no parameter."""

    def start(self, props: dict[str, str]) -> None:
        self.name = props["connector.name"]

    def poll(self) -> list[SourceRecord] | None:
        return None

    def stop(self) -> None:  # type: ignore[override]
        CALLS.add(Call(self.name, "task-0", "stop-without-flag"))


class AsyncProbeConnector(SourceConnector):
    """Every callback async; ``deleted()`` runs ``PROBE`` so a test can look at the world then."""

    PROBE: ClassVar[Callable[[str], Any] | None] = None
    TASK: ClassVar[type[Task]] = StopWithoutFlagTask

    async def start(self, props: dict[str, str]) -> None:
        self.name = props["name"]
        CALLS.add(Call(self.name, "connector", "start"))

    async def stop(self) -> None:
        CALLS.add(Call(self.name, "connector", "stop"))

    async def task_class(self) -> type[Task]:  # type: ignore[override]  # user code may be async (docs/ARCHITECTURE.md, decision 7)
        return self.TASK

    async def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{"connector.name": self.name} for _ in range(max_tasks)]

    async def deleted(self) -> None:
        name = self.context.configs()["name"]
        CALLS.add(Call(name, "connector", "deleted"))
        if AsyncProbeConnector.PROBE is not None:
            AsyncProbeConnector.PROBE(name)
