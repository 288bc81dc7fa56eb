"""A connector as an author would write one (no test kit inside), for the cluster scenario guide's example."""

from __future__ import annotations

from engine.api import SourceConnector, SourceRecord, SourceTask, Task
from engine.testing import instrumented


class LedgerTask(SourceTask):
    def start(self, props: dict[str, str]) -> None:
        self.account = props["account"]

    async def poll(self) -> list[SourceRecord] | None:
        return None

    def stop(self, connector_deleted: bool = False) -> None:
        self.account = ""

    def version(self) -> str:
        return "1.0"


class LedgerConnector(SourceConnector):
    def start(self, props: dict[str, str]) -> None:
        self.accounts = props["accounts"].split(",")

    def task_class(self) -> type[Task]:
        return LedgerTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{"account": a} for a in self.accounts[:max_tasks]]

    def stop(self) -> None:
        self.accounts = []

    def deleted(self) -> None:
        self.accounts = []

    def version(self) -> str:
        return "1.0"


RecordedLedgerConnector = instrumented(LedgerConnector)
