"""An application database with one fresh table, on SQLite and on the session's PostgreSQL
(``postgres_url()``); a private PostgreSQL with logical decoding for the CDC source."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.connectors.test_audit_table import Database
from tests.postgres_server import LogicalPostgres, logical_postgres
from tests.session_services import postgres_url


@pytest.fixture(params=["sqlite", "postgres"])
def app_database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    """A missing PostgreSQL server is an error, never a skip: CI runs one."""
    kind = request.param
    db = Database(f"sqlite:///{tmp_path / 'app.db'}" if kind == "sqlite" else postgres_url(), kind)
    db.execute(f"CREATE TABLE {db.table} (id INTEGER PRIMARY KEY, item TEXT NOT NULL)")
    yield db
    db.execute(
        f"DROP TABLE IF EXISTS {db.table} CASCADE"
        if kind == "postgres"
        else f"DROP TABLE IF EXISTS {db.table}"
    )


@pytest.fixture(scope="session")
def logical_pg() -> Iterator[LogicalPostgres]:
    """One private PostgreSQL with wal_level=logical for the whole session (the CDC source's tests)."""
    with logical_postgres() as cluster:
        yield cluster
