"""The audit-table source on real SQLite and PostgreSQL: triggers outlive pause, stop and restart,
deletion removes them, re-creation provisions them again; rows stream in order and resume."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from engine import Engine
from engine.api.context import SourceTaskContext
from engine.connectors.audit import AuditTableSourceTask
from engine.connectors.audit.dialects import Dialect, connect
from engine.storage.offsets import MemoryOffsetStore
from tests.session_services import postgres_url

CONNECTOR = "engine.connectors.audit.AuditTableSourceConnector"
FAST = {"task.shutdown.graceful.timeout.ms": "2000", "connector.shutdown.graceful.timeout.ms": "2000"}


class Database:
    """A real database with one fresh table, cleaned up afterwards; SQL in the dialect's style."""

    def __init__(self, url: str, kind: str) -> None:
        self.url, self.kind = url, kind
        self.table = f"orders_{uuid.uuid4().hex[:8]}"
        self.audit = f"connect_audit_{self.table}"

    def execute(self, sql: str, *params: Any) -> None:
        if self.kind == "sqlite":
            with sqlite3.connect(self.url.removeprefix("sqlite:///"), isolation_level=None) as db:
                db.execute(sql.replace("%s", "?"), params)
        else:
            with psycopg.connect(self.url, autocommit=True) as db:
                db.execute(sql, params)

    def dialect(self) -> Dialect:
        return connect(self.url)

    def state(self) -> tuple[list[str], bool]:
        db = self.dialect()
        try:
            return db.triggers(self.audit), db.audit_table_exists(self.audit)
        finally:
            db.close()


@pytest.fixture(params=["sqlite", "postgres"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    """A missing PostgreSQL server is an error, never a skip: CI runs one."""
    kind = request.param
    db = Database(f"sqlite:///{tmp_path / 'app.db'}" if kind == "sqlite" else postgres_url(), kind)
    db.execute(f"CREATE TABLE {db.table} (id INTEGER PRIMARY KEY, item TEXT NOT NULL)")
    yield db
    dialect = db.dialect()
    try:
        dialect.drop(db.audit, [db.table])
    finally:
        dialect.close()
    db.execute(f"DROP TABLE IF EXISTS {db.table}")


def config(db: Database) -> dict[str, str]:
    return {
        "connector.class": CONNECTOR,
        "audit.db.url": db.url,
        "audit.tables": db.table,
        "audit.table": db.audit,
        "poll.interval.ms": "50",
    }


async def test_triggers_outlive_pause_stop_restart_and_deletion_removes_them(database: Database) -> None:
    async with Engine(FAST) as engine:
        await engine.create_connector("audit", config(database))
        await engine.wait_for_state("audit", "RUNNING", tasks=1)
        provisioned = database.state()
        assert len(provisioned[0]) >= 1
        assert provisioned[1] is True
        for operation, state in (
            ("pause_connector", "PAUSED"),
            ("resume_connector", "RUNNING"),
            ("stop_connector", "STOPPED"),
            ("resume_connector", "RUNNING"),
        ):
            await getattr(engine, operation)("audit")
            await engine.wait_for_state("audit", state)
            assert database.state() == provisioned
        await engine.restart_connector("audit", include_tasks=True)
        await engine.wait_for_state("audit", "RUNNING", tasks=1)
        assert database.state() == provisioned

        outcome = await engine.delete_connector("audit")
        assert outcome.succeeded
        assert database.state() == ([], False)

        await engine.create_connector("audit", config(database))  # re-created: provisioned again
        await engine.wait_for_state("audit", "RUNNING", tasks=1)
        assert database.state() == provisioned
        await engine.delete_connector("audit")
        assert database.state() == ([], False)


async def test_a_connector_whose_start_failed_halfway_is_still_cleaned_up_on_delete(
    database: Database,
) -> None:
    async with Engine(FAST) as engine:
        # the first table is provisioned, then start() fails on the missing one: FAILED, half provisioned
        await engine.create_connector(
            "audit", {**config(database), "audit.tables": f"{database.table},missing_t"}
        )
        status = await engine.wait_for_state("audit", "FAILED")
        assert status is not None
        assert "missing_t does not exist" in status["connector"]["trace"]
        assert database.state()[1] is True
        outcome = await engine.delete_connector("audit")
        assert outcome.succeeded  # deleted() read what to drop from its context's config, not from start()
        assert database.state() == ([], False)


def start_task(db: Database, offsets: MemoryOffsetStore) -> AuditTableSourceTask:
    task = AuditTableSourceTask()
    props = {**config(db), "name": "audit"}
    task.initialize(SourceTaskContext(props, offset_reader=offsets.reader("audit")))
    task.start(props)
    return task


def test_rows_stream_in_order_with_offsets_and_resume(database: Database) -> None:
    dialect = database.dialect()
    try:
        dialect.provision(database.audit, [database.table], {"connector": "t", "incarnation": "0"})
    finally:
        dialect.close()
    database.execute(f"INSERT INTO {database.table} (id, item) VALUES (1, 'apple')")
    database.execute(f"UPDATE {database.table} SET item = 'pear' WHERE id = 1")
    database.execute(f"DELETE FROM {database.table} WHERE id = 1")
    offsets = MemoryOffsetStore()
    task = start_task(database, offsets)
    records = task.poll() or []
    assert [(r.value["op"], r.value["row"]) for r in records] == [
        ("INSERT", {"id": 1, "item": "apple"}),
        ("UPDATE", {"id": 1, "item": "pear"}),
        ("DELETE", {"id": 1, "item": "pear"}),
    ]
    assert all(r.value["table"] == database.table for r in records)
    ids = [r.source_offset["id"] for r in records]
    assert ids == sorted(ids)
    assert task.poll() is None  # nothing new within poll.interval.ms
    task.stop()

    offsets.write(
        "audit", [(records[0].source_partition, records[1].source_offset)]
    )  # committed up to UPDATE
    resumed = start_task(database, offsets)
    again = resumed.poll() or []
    assert [r.value["op"] for r in again] == ["DELETE"]
    resumed.stop()


def test_awkward_column_names_are_captured(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'odd.db'}"
    with sqlite3.connect(tmp_path / "odd.db", isolation_level=None) as db:
        db.execute('CREATE TABLE things (id INTEGER PRIMARY KEY, "order" TEXT, "it\'s" TEXT, "a ""b""" TEXT)')
    dialect = connect(url)
    try:
        dialect.provision("audit_odd", ["things"], {"connector": "t", "incarnation": "0"})
        with sqlite3.connect(tmp_path / "odd.db", isolation_level=None) as db:
            db.execute("""INSERT INTO things VALUES (1, 'x', 'y', 'z')""")
        (row,) = dialect.read("audit_odd", 0, 10)
        assert row.row == {"id": 1, "order": "x", "it's": "y", 'a "b"': "z"}
    finally:
        dialect.drop("audit_odd", ["things"])
        dialect.close()


def test_only_plain_identifiers_name_tables() -> None:
    from engine.api.errors import ConnectException
    from engine.connectors.audit.dialects import identifier

    for bad in ("orders\n", "x; DROP TABLE y", "1abc", ""):
        with pytest.raises(ConnectException, match="not a plain SQL identifier"):
            identifier(bad)
