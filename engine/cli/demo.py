"""``make demo``: an embedded engine walking one connector through its lifecycle, printed.

The demo connector provisions a real SQLite audit table and trigger in ``start`` and drops
them in ``deleted()``, the callback Kafka Connect never shipped.
"""

from __future__ import annotations

import asyncio
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

from engine import Engine, TransitionEvent
from engine.api import SourceConnector, SourceRecord, SourceTask, Task


def _tables(db: str) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type IN ('table','trigger') ORDER BY name"
            )
        ]


class AuditTableConnector(SourceConnector):
    """Creates ``orders_audit`` and a trigger feeding it; ``deleted()`` removes both."""

    def start(self, props: dict[str, str]) -> None:
        self.db = props["db.path"]
        with sqlite3.connect(self.db) as conn:
            conn.execute("CREATE TABLE IF NOT EXISTS orders (id INTEGER PRIMARY KEY, item TEXT)")
            conn.execute("CREATE TABLE IF NOT EXISTS orders_audit (id INTEGER, item TEXT, at TEXT)")
            conn.execute(
                "CREATE TRIGGER IF NOT EXISTS orders_to_audit AFTER INSERT ON orders BEGIN "
                "INSERT INTO orders_audit VALUES (NEW.id, NEW.item, datetime('now')); END"
            )

    def stop(self) -> None:
        return None

    def task_class(self) -> type[Task]:
        return AuditTableTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{"db.path": self.db} for _ in range(max_tasks)]

    def deleted(self) -> None:
        db = self.context.configs()["db.path"]
        with sqlite3.connect(db) as conn:
            conn.execute("DROP TRIGGER IF EXISTS orders_to_audit")
            conn.execute("DROP TABLE IF EXISTS orders_audit")


class AuditTableTask(SourceTask):
    async def start(self, props: dict[str, str]) -> None:
        return None

    async def poll(self) -> list[SourceRecord] | None:
        return None

    async def stop(self, connector_deleted: bool = False) -> None:
        print(f"    task stop(connector_deleted={connector_deleted})")


async def _print_transitions(events: Any) -> None:
    async for event in events:
        assert isinstance(event, TransitionEvent)
        unit = event.connector if event.task is None else f"{event.connector}-{event.task}"
        print(f"  {unit:<10} {event.trigger:<8} {event.from_state:>10} -> {event.to_state}")


async def run_demo() -> None:
    """The database lives in a temporary directory that is removed when the demo ends."""
    with tempfile.TemporaryDirectory(prefix="connect-engine-demo-") as workdir:
        await _walk(str(Path(workdir) / "shop.db"))


async def _walk(db: str) -> None:
    async with Engine() as engine:
        printer = asyncio.create_task(_print_transitions(engine.transitions()))
        config = {"connector.class": f"{__name__}.AuditTableConnector", "tasks.max": "2", "db.path": db}
        print("create orders-audit")
        await engine.create_connector("orders-audit", config)
        await engine.wait_for_state("orders-audit", "RUNNING", tasks=2)
        await asyncio.sleep(0)  # let the printer drain what was published
        print(f"  sqlite objects: {_tables(db)}")
        for verb, state in (
            ("pause", "PAUSED"),
            ("resume", "RUNNING"),
            ("stop", "STOPPED"),
            ("resume", "RUNNING"),
        ):
            print(verb)
            await getattr(engine, f"{verb}_connector")("orders-audit")
            await engine.wait_for_state("orders-audit", state, tasks=0 if state == "STOPPED" else 2)
            await asyncio.sleep(0)
        print("delete (runs task stop(connector_deleted=True), stop(), then deleted())")
        outcome = await engine.delete_connector("orders-audit")
        await asyncio.sleep(0)
        print(f"  deleted() succeeded={outcome.succeeded}; sqlite objects now: {_tables(db)}")
        printer.cancel()
