"""What differs between SQLite and PostgreSQL: connecting, the audit table, the triggers.

Everything is idempotent (``IF NOT EXISTS``, ``DROP ... IF EXISTS``), because ``start()`` runs
on every (re)start and ``deleted()`` may run again after a crash. The audit table carries its
owner (connector name and incarnation: ``COMMENT ON TABLE`` in PostgreSQL, a comment in the
table's SQL in SQLite); provisioning refuses a table someone else owns, and dropping leaves it
alone. DDL is bounded in the database (``lock_timeout``/``statement_timeout``, SQLite's busy
timeout), so a cleanup the worker stopped waiting for does not wait on in the server.
"""

from __future__ import annotations

import hashlib
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


Owner = dict[str, str | None]
_OWNER_MARK = "connect-engine owner: "
PG_MAX_NAME = 63


class ForeignAuditTable(ConnectException):
    """The audit table exists but belongs to another connector, another incarnation, or nobody we know."""

    def __init__(self, audit: str, owner: Owner | None, mine: Owner) -> None:
        whose = (
            f"connector {owner.get('connector')!r} (incarnation {owner.get('incarnation')})"
            if owner
            else "no connect-engine connector (it has no owner mark)"
        )
        super().__init__(
            f"Audit table {audit} already exists and belongs to {whose}, not to connector "
            f"{mine.get('connector')!r} (incarnation {mine.get('incarnation')}): refusing to adopt it. "
            "Drop it, or set audit.table to another name."
        )


def bounded(name: str) -> str:
    """``name`` if it fits PostgreSQL's 63 bytes, else cut and suffixed with a hash of the whole (injective)."""
    if len(name.encode()) <= PG_MAX_NAME:
        return name
    return f"{name[: PG_MAX_NAME - 9]}_{hashlib.sha256(name.encode()).hexdigest()[:8]}"


def _mark(owner: Owner) -> str:
    # "*/" must not end the SQL comment that carries it in SQLite: JSON may escape "/" as "\/"
    return _OWNER_MARK + json.dumps(owner, sort_keys=True).replace("/", "\\/")


def _owner_in(text: str | None) -> Owner | None:
    if not text or _OWNER_MARK not in text:
        return None
    raw = text.split(_OWNER_MARK, 1)[1]
    try:
        owner, _ = json.JSONDecoder().raw_decode(raw)
    except ValueError:
        return None
    return owner if isinstance(owner, dict) else None


class Dialect(Protocol):
    def provision(self, audit: str, tables: list[str], owner: Owner) -> None: ...
    def drop(self, audit: str, tables: list[str], owner: Owner | None = None) -> bool: ...
    def owner(self, audit: str) -> Owner | None: ...
    def read(self, audit: str, after: int, limit: int) -> list[AuditRow]: ...
    def triggers(self, audit: str) -> list[str]: ...
    def last_id(self, audit: str) -> int: ...
    def audit_table_exists(self, audit: str) -> bool: ...
    def close(self) -> None: ...


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _trigger(audit: str, table: str, op: str) -> str:
    return bounded(f"{audit}_{table}_{op.lower()}")


class SQLiteDialect:
    """Triggers write ``json_object`` of the row (SQLite's JSON1, built in since 3.38)."""

    def __init__(self, path: str, timeout_ms: int = 10000) -> None:
        # the busy timeout bounds how long DDL waits for another writer's lock
        self._db = sqlite3.connect(
            path, isolation_level=None, check_same_thread=False, timeout=timeout_ms / 1000
        )

    def owner(self, audit: str) -> Owner | None:
        row = self._db.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (audit,)
        ).fetchone()
        return None if row is None else _owner_in(row[0])

    def provision(self, audit: str, tables: list[str], owner: Owner) -> None:
        if self.audit_table_exists(audit) and self.owner(audit) != owner:
            raise ForeignAuditTable(audit, self.owner(audit), owner)
        self._db.execute(
            f"CREATE TABLE IF NOT EXISTS {audit} (id INTEGER PRIMARY KEY AUTOINCREMENT "
            f"/* {_mark(owner)} */, "
            "table_name TEXT NOT NULL, op TEXT NOT NULL, row_data TEXT NOT NULL, "
            "changed_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)"
        )
        if self.owner(audit) != owner:  # lost a race with another creator
            raise ForeignAuditTable(audit, self.owner(audit), owner)
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
                    "END"
                )

    def drop(self, audit: str, tables: list[str], owner: Owner | None = None) -> bool:
        """Drop the triggers and the audit table, unless ``owner`` is given and the table is someone else's."""
        if owner is not None and self.audit_table_exists(audit) and self.owner(audit) != owner:
            return False
        for table in tables:
            for op in ("INSERT", "UPDATE", "DELETE"):
                self._db.execute(f"DROP TRIGGER IF EXISTS {_trigger(audit, table, op)}")
        self._db.execute(f"DROP TABLE IF EXISTS {audit}")
        return True

    def read(self, audit: str, after: int, limit: int) -> list[AuditRow]:
        rows = self._db.execute(
            f"SELECT id, table_name, op, row_data FROM {audit} WHERE id > ? ORDER BY id LIMIT ?",
            (after, limit),
        ).fetchall()
        return [AuditRow(i, t, o, json.loads(r)) for i, t, o, r in rows]

    def triggers(self, audit: str) -> list[str]:
        rows = self._db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name"
        ).fetchall()
        return [r[0] for r in rows if r[0].startswith(audit + "_")]

    def last_id(self, audit: str) -> int:
        """The highest id ever handed out (AUTOINCREMENT never reuses one, even after rows are deleted)."""
        row = self._db.execute("SELECT seq FROM sqlite_sequence WHERE name = ?", (audit,)).fetchone()
        return int(row[0]) if row else 0

    def audit_table_exists(self, audit: str) -> bool:
        return (
            self._db.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (audit,)
            ).fetchone()
            is not None
        )

    def close(self) -> None:
        self._db.close()


class PostgresDialect:
    """One trigger function per audit table, ``to_jsonb`` of the row; the triggers call it."""

    def __init__(self, url: str, timeout_ms: int = 10000) -> None:
        import psycopg  # optional dependency: only PostgreSQL users need it

        self._db = psycopg.connect(url, autocommit=True)
        # bounded in the server: a DROP waiting for an application's lock gives up there too, even
        # when this process is long gone (killed mid-cleanup)
        self._db.execute(f"SET lock_timeout = {int(timeout_ms)}")
        self._db.execute(f"SET statement_timeout = {int(timeout_ms)}")

    def owner(self, audit: str) -> Owner | None:
        row = self._db.execute("SELECT obj_description(to_regclass(%s), 'pg_class')", (audit,)).fetchone()
        return None if row is None else _owner_in(row[0])

    def provision(self, audit: str, tables: list[str], owner: Owner) -> None:
        if self.audit_table_exists(audit) and self.owner(audit) != owner:
            raise ForeignAuditTable(audit, self.owner(audit), owner)
        with self._db.transaction():  # created and marked at once: nobody sees an unmarked table
            self._db.execute(
                f"CREATE TABLE IF NOT EXISTS {audit} (id BIGSERIAL PRIMARY KEY, "
                "table_name TEXT NOT NULL, op TEXT NOT NULL, row_data JSONB NOT NULL, "
                "changed_at TIMESTAMPTZ NOT NULL DEFAULT now())"
            )
            if self.owner(audit) is None:
                self._db.execute(f"COMMENT ON TABLE {audit} IS {_literal(_mark(owner))}")
        if self.owner(audit) != owner:  # lost a race with another creator
            raise ForeignAuditTable(audit, self.owner(audit), owner)
        self._db.execute(
            f"CREATE OR REPLACE FUNCTION {audit}_capture() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            f"IF TG_OP = 'DELETE' THEN INSERT INTO {audit} (table_name, op, row_data) "
            "VALUES (TG_TABLE_NAME, TG_OP, to_jsonb(OLD)); RETURN OLD; END IF; "
            f"INSERT INTO {audit} (table_name, op, row_data) VALUES (TG_TABLE_NAME, TG_OP, to_jsonb(NEW)); "
            "RETURN NEW; END $$"
        )
        for table in tables:
            exists = self._db.execute("SELECT to_regclass(%s)", (table,)).fetchone()
            if exists is None or exists[0] is None:
                raise ConnectException(f"Table {table} does not exist")
            self._db.execute(
                f"CREATE OR REPLACE TRIGGER {bounded(f'{audit}_{table}')} AFTER INSERT OR UPDATE OR "
                f"DELETE ON {table} FOR EACH ROW EXECUTE FUNCTION {audit}_capture()"
            )

    def drop(self, audit: str, tables: list[str], owner: Owner | None = None) -> bool:
        """Drop the triggers, function and audit table, unless ``owner`` is given and the table is someone else's."""
        if owner is not None and self.audit_table_exists(audit) and self.owner(audit) != owner:
            return False
        for table in tables:
            if self._db.execute("SELECT to_regclass(%s)", (table,)).fetchone() != (None,):
                self._db.execute(f"DROP TRIGGER IF EXISTS {bounded(f'{audit}_{table}')} ON {table}")
        self._db.execute(f"DROP FUNCTION IF EXISTS {audit}_capture() CASCADE")
        self._db.execute(f"DROP TABLE IF EXISTS {audit}")
        return True

    def read(self, audit: str, after: int, limit: int) -> list[AuditRow]:
        rows = self._db.execute(
            f"SELECT id, table_name, op, row_data FROM {audit} WHERE id > %s ORDER BY id LIMIT %s",
            (after, limit),
        ).fetchall()
        return [AuditRow(int(i), t, o, dict(r)) for i, t, o, r in rows]

    def triggers(self, audit: str) -> list[str]:
        rows = self._db.execute(
            "SELECT tgname FROM pg_trigger WHERE NOT tgisinternal ORDER BY tgname"
        ).fetchall()
        return [r[0] for r in rows if r[0].startswith(audit + "_")]

    def last_id(self, audit: str) -> int:
        """The highest id the BIGSERIAL sequence handed out (0 before the first)."""
        row = self._db.execute("SELECT pg_get_serial_sequence(%s, 'id')", (audit,)).fetchone()
        if row is None or row[0] is None:
            return 0
        value = self._db.execute(f"SELECT last_value, is_called FROM {row[0]}").fetchone()
        return int(value[0]) if value is not None and value[1] else 0

    def audit_table_exists(self, audit: str) -> bool:
        return self._db.execute("SELECT to_regclass(%s)", (audit,)).fetchone() != (None,)

    def close(self) -> None:
        self._db.close()


def connect(url: str, timeout_ms: int = 10000) -> Dialect:
    """``sqlite:///path/to.db`` (or a bare path) or ``postgresql://user@host:port/db``; DDL waits at most
    ``timeout_ms`` for a lock."""
    scheme = urlsplit(url).scheme
    if scheme in ("postgresql", "postgres"):
        return PostgresDialect(url, timeout_ms)
    if scheme == "sqlite" and url.startswith("sqlite:///"):
        return SQLiteDialect(
            url.removeprefix("sqlite:///"), timeout_ms
        )  # sqlite:////abs/path keeps its leading /
    if scheme == "":
        return SQLiteDialect(url, timeout_ms)
    raise ConnectException(f"Unsupported database URL {url!r}: use sqlite:///path or postgresql://...")
