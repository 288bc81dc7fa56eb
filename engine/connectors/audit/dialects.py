"""What differs between SQLite and PostgreSQL: connecting, the audit table, the triggers.

Everything is idempotent (``IF NOT EXISTS``, ``DROP ... IF EXISTS``), because ``start()`` runs
on every (re)start and ``deleted()`` may run again after a crash.
"""

from __future__ import annotations

import json
import re
import sqlite3
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlsplit

from engine.api import ConnectException

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def identifier(name: str) -> str:
    """Table and trigger names are interpolated into DDL, so only plain identifiers are accepted."""
    if not _IDENTIFIER.fullmatch(name):  # fullmatch: "$" alone would let a trailing newline through
        raise ConnectException(f"{name!r} is not a plain SQL identifier (letters, digits, underscore)")
    return name


@dataclass(frozen=True, slots=True)
class AuditRow:
    id: int
    table: str
    op: str
    row: dict[str, Any]


class Dialect(Protocol):
    def provision(self, audit: str, tables: list[str]) -> None: ...
    def drop(self, audit: str, tables: list[str]) -> None: ...
    def read(self, audit: str, after: int, limit: int) -> list[AuditRow]: ...
    def triggers(self, audit: str) -> list[str]: ...
    def audit_table_exists(self, audit: str) -> bool: ...
    def close(self) -> None: ...


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _trigger(audit: str, table: str, op: str) -> str:
    return f"{audit}_{table}_{op.lower()}"


class SQLiteDialect:
    """Triggers write ``json_object`` of the row (SQLite's JSON1, built in since 3.38)."""

    def __init__(self, path: str) -> None:
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)

    def provision(self, audit: str, tables: list[str]) -> None:
        self._db.execute(f"CREATE TABLE IF NOT EXISTS {audit} (id INTEGER PRIMARY KEY AUTOINCREMENT, "
                         "table_name TEXT NOT NULL, op TEXT NOT NULL, row_data TEXT NOT NULL, "
                         "changed_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)")
        for table in tables:
            columns = [row[1] for row in self._db.execute(f"PRAGMA table_info({table})")]
            if not columns:
                raise ConnectException(f"Table {table} does not exist")
            for op, ref in (("INSERT", "NEW"), ("UPDATE", "NEW"), ("DELETE", "OLD")):
                # column names come from the schema, not from us: quoted as literal and as identifier
                row = ", ".join(f"{_literal(c)}, {ref}.{_quoted(c)}" for c in columns)
                self._db.execute(
                    f"CREATE TRIGGER IF NOT EXISTS {_trigger(audit, table, op)} AFTER {op} ON {table} BEGIN "
                    f"INSERT INTO {audit} (table_name, op, row_data) VALUES ('{table}', '{op}', json_object({row})); "
                    "END")

    def drop(self, audit: str, tables: list[str]) -> None:
        for table in tables:
            for op in ("INSERT", "UPDATE", "DELETE"):
                self._db.execute(f"DROP TRIGGER IF EXISTS {_trigger(audit, table, op)}")
        self._db.execute(f"DROP TABLE IF EXISTS {audit}")

    def read(self, audit: str, after: int, limit: int) -> list[AuditRow]:
        rows = self._db.execute(f"SELECT id, table_name, op, row_data FROM {audit} WHERE id > ? ORDER BY id LIMIT ?",
                                (after, limit)).fetchall()
        return [AuditRow(i, t, o, json.loads(r)) for i, t, o, r in rows]

    def triggers(self, audit: str) -> list[str]:
        rows = self._db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name").fetchall()
        return [r[0] for r in rows if r[0].startswith(audit + "_")]

    def audit_table_exists(self, audit: str) -> bool:
        return self._db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                                (audit,)).fetchone() is not None

    def close(self) -> None:
        self._db.close()


class PostgresDialect:
    """One trigger function per audit table, ``to_jsonb`` of the row; the triggers call it."""

    def __init__(self, url: str) -> None:
        import psycopg  # optional dependency: only PostgreSQL users need it

        self._db = psycopg.connect(url, autocommit=True)

    def provision(self, audit: str, tables: list[str]) -> None:
        self._db.execute(f"CREATE TABLE IF NOT EXISTS {audit} (id BIGSERIAL PRIMARY KEY, table_name TEXT NOT NULL, "
                         "op TEXT NOT NULL, row_data JSONB NOT NULL, changed_at TIMESTAMPTZ NOT NULL DEFAULT now())")
        self._db.execute(
            f"CREATE OR REPLACE FUNCTION {audit}_capture() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            f"IF TG_OP = 'DELETE' THEN INSERT INTO {audit} (table_name, op, row_data) "
            "VALUES (TG_TABLE_NAME, TG_OP, to_jsonb(OLD)); RETURN OLD; END IF; "
            f"INSERT INTO {audit} (table_name, op, row_data) VALUES (TG_TABLE_NAME, TG_OP, to_jsonb(NEW)); "
            "RETURN NEW; END $$")
        for table in tables:
            exists = self._db.execute("SELECT to_regclass(%s)", (table,)).fetchone()
            if exists is None or exists[0] is None:
                raise ConnectException(f"Table {table} does not exist")
            self._db.execute(f"CREATE OR REPLACE TRIGGER {audit}_{table} AFTER INSERT OR UPDATE OR DELETE ON {table} "
                             f"FOR EACH ROW EXECUTE FUNCTION {audit}_capture()")

    def drop(self, audit: str, tables: list[str]) -> None:
        for table in tables:
            if self._db.execute("SELECT to_regclass(%s)", (table,)).fetchone() != (None,):
                self._db.execute(f"DROP TRIGGER IF EXISTS {audit}_{table} ON {table}")
        self._db.execute(f"DROP FUNCTION IF EXISTS {audit}_capture() CASCADE")
        self._db.execute(f"DROP TABLE IF EXISTS {audit}")

    def read(self, audit: str, after: int, limit: int) -> list[AuditRow]:
        rows = self._db.execute(f"SELECT id, table_name, op, row_data FROM {audit} WHERE id > %s ORDER BY id LIMIT %s",
                                (after, limit)).fetchall()
        return [AuditRow(int(i), t, o, dict(r)) for i, t, o, r in rows]

    def triggers(self, audit: str) -> list[str]:
        rows = self._db.execute("SELECT tgname FROM pg_trigger WHERE NOT tgisinternal ORDER BY tgname").fetchall()
        return [r[0] for r in rows if r[0].startswith(audit + "_")]

    def audit_table_exists(self, audit: str) -> bool:
        return self._db.execute("SELECT to_regclass(%s)", (audit,)).fetchone() != (None,)

    def close(self) -> None:
        self._db.close()


def connect(url: str) -> Dialect:
    """``sqlite:///path/to.db`` (or a bare path) or ``postgresql://user@host:port/db``."""
    scheme = urlsplit(url).scheme
    if scheme in ("postgresql", "postgres"):
        return PostgresDialect(url)
    if scheme == "sqlite" and url.startswith("sqlite:///"):
        return SQLiteDialect(url.removeprefix("sqlite:///"))  # sqlite:////abs/path keeps its leading /
    if scheme == "":
        return SQLiteDialect(url)
    raise ConnectException(f"Unsupported database URL {url!r}: use sqlite:///path or postgresql://...")
