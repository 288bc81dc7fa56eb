"""The audit-table source cannot destroy a connector that was never deleted, on real SQLite and PostgreSQL.

Two paths used to: an abandoned cleanup whose ``DROP TABLE`` waited on a lock dropped the table of
the connector re-created under the same name; and names that fold to the same text shared one
audit table, trigger and function. Names now carry a hash of the exact name and the incarnation,
the audit table its owner, and DDL gives up in the database.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from engine import Engine
from engine.connectors.audit.config import default_audit_table
from engine.testing import eventually
from tests.connectors.test_audit_table import CONNECTOR, FAST, Database
from tests.session_services import postgres_url

ROOT = Path(__file__).resolve().parents[2]


def audit_config(db: Database, **extra: str) -> dict[str, str]:
    return {
        "connector.class": CONNECTOR,
        "audit.db.url": db.url,
        "audit.tables": db.table,
        "poll.interval.ms": "50",
        **extra,
    }


def rows_in(db: Database, audit: str) -> int:
    if db.kind == "sqlite":
        with sqlite3.connect(db.url.removeprefix("sqlite:///")) as conn:
            return int(conn.execute(f"SELECT count(*) FROM {audit}").fetchone()[0])
    with psycopg.connect(db.url, autocommit=True) as conn:
        row = conn.execute(f"SELECT count(*) FROM {audit}").fetchone()
        assert row is not None
        return int(row[0])


def exists(db: Database, audit: str) -> bool:
    dialect = db.dialect()
    try:
        return dialect.audit_table_exists(audit)
    finally:
        dialect.close()


def audit_of(engine: Engine, name: str) -> str:
    return default_audit_table(name, engine.herder.snapshot.incarnations[name])


def drop_audit(db: Database, *audits: str) -> None:
    dialect = db.dialect()
    try:
        for audit in audits:
            dialect.drop(audit, [db.table])
    finally:
        dialect.close()


COLLIDING = [("coll-a", "coll_a"), ("Upper", "upper"), ("n" * 49 + "-first", "n" * 49 + "-other")]


@pytest.mark.parametrize(("one", "two"), COLLIDING, ids=["dash-underscore", "case", "long-names"])
async def test_names_that_fold_alike_get_their_own_objects_and_deleting_one_leaves_the_other(
    app_database: Database, one: str, two: str
) -> None:
    async with Engine(FAST) as engine:
        # created at the same moment: neither trips over the other's objects
        await asyncio.gather(
            engine.create_connector(one, audit_config(app_database)),
            engine.create_connector(two, audit_config(app_database)),
        )
        await engine.wait_for_state(one, "RUNNING", tasks=1)
        await engine.wait_for_state(two, "RUNNING", tasks=1)
        first, second = audit_of(engine, one), audit_of(engine, two)
        try:
            assert first != second
            assert max(len(first), len(second)) <= 63
            app_database.execute(f"INSERT INTO {app_database.table} (id, item) VALUES (1, 'a')")
            assert (rows_in(app_database, first), rows_in(app_database, second)) == (1, 1)

            assert (await engine.delete_connector(one)).succeeded
            assert not exists(app_database, first)
            app_database.execute(
                f"INSERT INTO {app_database.table} (id, item) VALUES (2, 'b')"
            )  # still writable
            assert rows_in(app_database, second) == 2  # and the other connector still captures
            status = await engine.connector_status(two)
            assert [t["state"] for t in status["tasks"]] == ["RUNNING"]
        finally:
            drop_audit(app_database, first, second)


async def test_an_audit_table_owned_by_another_connector_is_never_adopted_nor_dropped(
    app_database: Database,
) -> None:
    shared = f"shared_{app_database.table}"
    async with Engine(FAST) as engine:
        await engine.create_connector("owner", audit_config(app_database, **{"audit.table": shared}))
        await engine.wait_for_state("owner", "RUNNING", tasks=1)
        try:
            await engine.create_connector("intruder", audit_config(app_database, **{"audit.table": shared}))
            status = await engine.wait_for_state("intruder", "FAILED")
            assert status is not None
            trace = status["connector"]["trace"]
            assert f"Audit table {shared} already exists and belongs to connector 'owner'" in trace
            assert (await engine.delete_connector("intruder")).succeeded  # its cleanup leaves the table alone
            assert exists(app_database, shared)
            app_database.execute(f"INSERT INTO {app_database.table} (id, item) VALUES (1, 'a')")
            assert rows_in(app_database, shared) == 1
        finally:
            drop_audit(app_database, shared)


class LockHolder:
    """An application transaction that holds a lock on the audited table (the DROP TRIGGER waits)."""

    def __init__(self, db: Database) -> None:
        self._conn = psycopg.connect(db.url)
        self._conn.execute(f"LOCK TABLE {db.table} IN ACCESS SHARE MODE")

    def release(self) -> None:
        self._conn.commit()
        self._conn.close()


def check_writable_and_captured(db: Database, audit: str) -> None:
    """The bug's symptom was UndefinedTable on every write to the application table."""
    db.execute(f"INSERT INTO {db.table} (id, item) VALUES (100, 'x')")
    db.execute(f"UPDATE {db.table} SET item = 'y' WHERE id = 100")
    db.execute(f"DELETE FROM {db.table} WHERE id = 100")
    assert rows_in(db, audit) == 3


@pytest.fixture
def postgres(tmp_path: Path) -> Iterator[Database]:
    db = Database(postgres_url(), "postgres")
    db.execute(f"CREATE TABLE {db.table} (id INTEGER PRIMARY KEY, item TEXT NOT NULL)")
    yield db
    db.execute(f"DROP TABLE IF EXISTS {db.table} CASCADE")


async def test_a_cleanup_stuck_on_a_lock_never_drops_the_recreated_connectors_table(
    postgres: Database,
) -> None:
    """Thread variant: deleted() outlives its timeout in its thread while an application holds a lock."""
    db = postgres
    config = audit_config(db, **{"audit.ddl.timeout.ms": "8000"})  # longer than the engine waits, on purpose
    async with Engine({**FAST, "connector.deleted.timeout.ms": "1500"}) as engine:
        await engine.create_connector("z", config)
        await engine.wait_for_state("z", "RUNNING", tasks=1)
        old = audit_of(engine, "z")
        blocker = LockHolder(db)
        try:
            outcome = await engine.delete_connector("z")
            assert outcome.timed_out
            assert not outcome.succeeded
            with pytest.raises(Exception, match="still being cleaned up"):
                await engine.create_connector("z", config)
        finally:
            blocker.release()
        # the old DROP goes through now; the same name may then be created again
        await engine.create_connector("z", config)
        await engine.wait_for_state("z", "RUNNING", tasks=1)
        new = audit_of(engine, "z")
        try:
            assert new != old
            assert not exists(db, old)
            check_writable_and_captured(db, new)
            status = await engine.connector_status("z")
            assert status["connector"]["state"] == "RUNNING"
            assert [t["state"] for t in status["tasks"]] == ["RUNNING"]
        finally:
            await engine.delete_connector("z")
    assert not exists(db, new)


KILLED_IN_CLEANUP = textwrap.dedent("""
    import asyncio, json, sys
    from engine import Engine

    async def main(worker, config):
        async with Engine(worker) as engine:
            await engine.create_connector("z", config)
            await engine.wait_for_state("z", "RUNNING", tasks=1)
            print("INCARNATION", engine.herder.snapshot.incarnations["z"], flush=True)
            await engine.delete_connector("z")  # killed while deleted() waits for the lock

    asyncio.run(main(json.loads(sys.argv[1]), json.loads(sys.argv[2])))
""")


async def test_a_worker_killed_mid_cleanup_leaves_nothing_that_hurts_the_next_incarnation(
    postgres: Database, tmp_path: Path
) -> None:
    """kill -9 variant: the killed worker's DROP gives up in the server (statement/lock timeout)."""
    db = postgres
    worker = {
        **FAST,
        "connector.deleted.timeout.ms": "20000",
        "config.storage.file.filename": str(tmp_path / "configs.log"),
        "status.storage.file.filename": str(tmp_path / "status.log"),
        "offset.storage.file.filename": str(tmp_path / "offsets.log"),
    }
    config = audit_config(db, **{"audit.ddl.timeout.ms": "6000"})
    blocker = LockHolder(db)
    released = False
    child = subprocess.Popen(
        [sys.executable, "-c", KILLED_IN_CLEANUP, json.dumps(worker), json.dumps(config)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=ROOT,
    )
    try:
        assert child.stdout is not None
        line = ""
        while not line.startswith("INCARNATION "):
            line = await asyncio.to_thread(child.stdout.readline)
            assert line, "the child worker ended early"
        old = default_audit_table("z", line.split()[1])
        await asyncio.sleep(1.0)  # its deleted() is now waiting on the lock
        assert _backends_waiting_on(db.table)  # the DROP waits for the application's lock
        os.kill(child.pid, signal.SIGKILL)
        await asyncio.to_thread(child.wait)
        # the dead worker's backend gives up by itself (audit.ddl.timeout.ms), lock still held
        await eventually(
            lambda: not _backends_waiting_on(db.table),
            timeout=20,
            message="the killed worker's DROP gave up in the server",
        )
        async with Engine({**worker, "connector.deleted.retry.backoff.ms": "200"}) as engine:
            # the pending cleanup of the old incarnation runs again here; the name waits for it
            recreate = asyncio.ensure_future(engine.create_connector("z", config))
            await asyncio.sleep(0.5)
            assert not recreate.done()
            blocker.release()
            released = True
            await recreate
            await engine.wait_for_state("z", "RUNNING", tasks=1)
            new = audit_of(engine, "z")
            try:
                assert new != old
                assert not exists(db, old)
                check_writable_and_captured(db, new)
                assert engine.connector_cleanups() == []
            finally:
                await engine.delete_connector("z")
    finally:
        if not released:
            blocker.release()
        if child.poll() is None:
            child.kill()
        if child.stdout is not None:
            child.stdout.close()
    assert not exists(db, new)


def _backends_waiting_on(table: str) -> list[Any]:
    with psycopg.connect(postgres_url(), autocommit=True) as conn:
        return conn.execute(
            "SELECT pid, query FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE %s",
            (f"%{table}%",),
        ).fetchall()
