"""No-op connectors for the lifecycle benchmark: async ones, so the measure is the engine, not
threads, and synchronous ones, so it is also what users run."""

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


# Synchronous twins, written as most users write connectors: every method runs on a thread.
IDLE_POLL_S = 0.1  # an idle sync source sleeps in poll(), as the FileStream source does on an empty file


class SyncNoopTask(SourceTask):
    def start(self, props: dict[str, str]) -> None:
        return None

    def poll(self) -> list[SourceRecord] | None:
        time.sleep(IDLE_POLL_S)
        return None

    def stop(self, connector_deleted: bool = False) -> None:
        return None


class SyncNoopConnector(SourceConnector):
    def start(self, props: dict[str, str]) -> None:
        self.name = props["name"]

    def stop(self) -> None:
        return None

    def task_class(self) -> type[Task]:
        return SyncNoopTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{} for _ in range(max_tasks)]

    def deleted(self) -> None:
        NoopConnector.DELETED_AT[self.context.configs()["name"]] = time.perf_counter()
