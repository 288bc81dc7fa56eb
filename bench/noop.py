"""No-op connectors for the lifecycle benchmark: async, so the measure is the engine, not threads."""

from __future__ import annotations

import asyncio
import time
from typing import ClassVar

from engine.api import SourceConnector, SourceRecord, SourceTask, Task


class NoopTask(SourceTask):
    async def start(self, props: dict[str, str]) -> None:
        return None

    async def poll(self) -> list[SourceRecord] | None:
        """Nothing to send: park until pause or stop cancels the poll."""
        await asyncio.get_running_loop().create_future()
        return None

    async def stop(self, connector_deleted: bool = False) -> None:
        return None


class NoopConnector(SourceConnector):
    DELETED_AT: ClassVar[dict[str, float]] = {}

    async def start(self, props: dict[str, str]) -> None:
        self.name = props["name"]

    async def stop(self) -> None:
        return None

    async def task_class(self) -> type[Task]:
        return NoopTask

    async def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{} for _ in range(max_tasks)]

    async def deleted(self) -> None:
        NoopConnector.DELETED_AT[self.context.configs()["name"]] = time.perf_counter()
