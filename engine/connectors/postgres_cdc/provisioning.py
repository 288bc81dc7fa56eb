"""The publication and the logical replication slot: checked, created, and dropped.

Ownership. A slot cannot carry a comment, a publication can: the publication's comment is the
mark ``connect-engine owner: {"connector", "incarnation", "slot"}``, written in the transaction
that creates it, *before* the slot is created. So a slot is ours exactly when our marked
publication claims it, and nothing we create is ever unmarked (a crash between the two steps
leaves a claim on a slot that does not exist yet; the next ``start()`` creates it). ``start()``
refuses a publication marked by someone else and a slot that existed before our claim (another
connector's, Debezium's, a user's); ``deleted()`` drops only a slot its own mark claims and no
other mark claims, slot first, then the publication, so a crash half-way leaves the mark that
lets the retry finish.

Every statement is bounded in the server (``statement_timeout``, ``lock_timeout``), so a cleanup
the worker stopped waiting for does not go on in the database.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from dataclasses import dataclass
from typing import Any

import psycopg
import psycopg.errors
import structlog
from psycopg import sql

from engine.api import ConnectException
from engine.connectors.postgres_cdc.config import CdcConfig, Table

log = structlog.get_logger(component="postgres_cdc")

Owner = dict[str, str | None]
_MARK = "connect-engine owner: "
_CONNECT_TIMEOUT_S = 10
_TERMINATE_NAP_S = 0.1


@dataclass(frozen=True, slots=True)
class Claim:
    publication: str
    owner: Owner
    slot: str | None


class ForeignObject(ConnectException):
    """A publication or slot under our name that this connector (incarnation) did not create."""


def connect(url: str, timeout_ms: int = 10000) -> psycopg.Connection[Any]:
    conn = psycopg.connect(url, autocommit=True, connect_timeout=_CONNECT_TIMEOUT_S)
    conn.execute(sql.SQL("SET statement_timeout = {}").format(sql.Literal(int(timeout_ms))))
    conn.execute(sql.SQL("SET lock_timeout = {}").format(sql.Literal(int(timeout_ms))))
    return conn


def _mark(owner: Owner, slot: str) -> str:
    return _MARK + json.dumps({**owner, "slot": slot}, sort_keys=True)


def _parse_mark(text: str | None) -> tuple[Owner, str | None] | None:
    if not text or not text.startswith(_MARK):
        return None
    try:
        mark = json.loads(text.removeprefix(_MARK))
    except ValueError:
        return None
    if not isinstance(mark, dict):
        return None
    slot = mark.pop("slot", None)
    return {k: (None if v is None else str(v)) for k, v in mark.items()}, slot


def claims(conn: psycopg.Connection[Any]) -> list[Claim]:
    """Every publication in this database that carries a connect-engine mark."""
    rows = conn.execute(
        "SELECT pubname, obj_description(oid, 'pg_publication') FROM pg_publication"
    ).fetchall()
    found = []
    for name, comment in rows:
        parsed = _parse_mark(comment)
        if parsed is not None:
            found.append(Claim(name, parsed[0], parsed[1]))
    return found


def publication_mark(conn: psycopg.Connection[Any], publication: str) -> tuple[bool, Owner | None]:
    """(exists, owner) of a publication; owner None when it has no mark."""
    row = conn.execute(
        "SELECT obj_description(oid, 'pg_publication') FROM pg_publication WHERE pubname = %s", (publication,)
    ).fetchone()
    if row is None:
        return False, None
    parsed = _parse_mark(row[0])
    return True, None if parsed is None else parsed[0]


def slot_exists(conn: psycopg.Connection[Any], slot: str) -> bool:
    return (
        conn.execute("SELECT 1 FROM pg_replication_slots WHERE slot_name = %s", (slot,)).fetchone()
        is not None
    )


def wal_level(conn: psycopg.Connection[Any]) -> str:
    row = conn.execute("SHOW wal_level").fetchone()
    return str(row[0]) if row else "unknown"


def missing_tables(conn: psycopg.Connection[Any], tables: tuple[Table, ...]) -> list[Table]:
    missing = []
    for table in tables:
        row = conn.execute(
            "SELECT 1 FROM pg_tables WHERE schemaname = %s AND tablename = %s", (table.schema, table.name)
        ).fetchone()
        if row is None:
            missing.append(table)
    return missing


def wal_level_error(level: str, server: str) -> str:
    return (
        f"wal_level is {level} on {server}: logical decoding needs wal_level=logical (set it in "
        "postgresql.conf and restart the server)"
    )


def _whose(owner: Owner | None) -> str:
    if owner is None:
        return "nobody this engine knows (it has no connect-engine mark)"
    return f"connector {owner.get('connector')!r} (incarnation {owner.get('incarnation')})"


def _table_list(tables: tuple[Table, ...]) -> sql.Composable:
    return sql.SQL(", ").join(sql.Identifier(t.schema, t.name) for t in tables)


def provision(conn: psycopg.Connection[Any], config: CdcConfig, owner: Owner) -> bool:
    """Create (or find ours) the publication for the tables, then the slot; True when the slot was created now."""
    level = wal_level(conn)
    if level != "logical":
        raise ConnectException(wal_level_error(level, config.partition()["server"]))
    missing = missing_tables(conn, config.tables)
    if missing:
        raise ConnectException(f"Table {missing[0]} does not exist (table.include.list)")
    others = [c for c in claims(conn) if c.slot == config.slot and c.owner != owner]
    if others:
        raise ForeignObject(
            f"Replication slot {config.slot} is claimed by publication {others[0].publication} of "
            f"{_whose(others[0].owner)}: set slot.name to another name"
        )
    exists, mark = publication_mark(conn, config.publication)
    pub = sql.Identifier(config.publication)
    if exists and mark != owner:
        raise ForeignObject(
            f"Publication {config.publication} already exists and belongs to {_whose(mark)}, not to "
            f"connector {owner.get('connector')!r} (incarnation {owner.get('incarnation')}): refusing "
            "to adopt it. Drop it, or set publication.name to another name."
        )
    if not exists:
        if slot_exists(conn, config.slot):
            raise ForeignObject(
                f"Replication slot {config.slot} already exists and was not created by connector "
                f"{owner.get('connector')!r}: refusing to adopt it (its position is someone else's). "
                "Drop it, or set slot.name to another name."
            )
        with conn.transaction():  # created and marked at once: nobody sees an unmarked publication of ours
            conn.execute(
                sql.SQL("CREATE PUBLICATION {} FOR TABLE {}").format(pub, _table_list(config.tables))
            )
            conn.execute(
                sql.SQL("COMMENT ON PUBLICATION {} IS {}").format(pub, sql.Literal(_mark(owner, config.slot)))
            )
    else:
        conn.execute(sql.SQL("ALTER PUBLICATION {} SET TABLE {}").format(pub, _table_list(config.tables)))
    if slot_exists(conn, config.slot):
        return False
    try:
        conn.execute("SELECT pg_create_logical_replication_slot(%s, 'pgoutput')", (config.slot,))
    except psycopg.errors.DuplicateObject:
        # someone created it between our check and now: not ours, and our claim must not say so
        conn.execute(sql.SQL("COMMENT ON PUBLICATION {} IS {}").format(pub, sql.Literal(_mark(owner, ""))))
        raise ForeignObject(
            f"Replication slot {config.slot} was created by someone else while this connector "
            "provisioned it: set slot.name to another name"
        ) from None
    return True


def drop(conn: psycopg.Connection[Any], config: CdcConfig, owner: Owner) -> bool:
    """Drop our slot (terminating a backend still attached to it, bounded) and our publication.

    Idempotent. False when the publication is someone else's: nothing is dropped then.
    """
    exists, mark = publication_mark(conn, config.publication)
    if not exists:
        return True  # dropped already (the slot goes first, so it is gone too), or never created
    if mark != owner:
        log.warning(
            "postgres_cdc.publication_not_ours",
            connector=owner.get("connector"),
            publication=config.publication,
            owner=mark,
        )
        return False
    claimants = [c for c in claims(conn) if c.slot == config.slot]
    if all(c.owner == owner for c in claimants):
        drop_slot(conn, config.slot, config.drop_timeout_ms / 1000, connector=owner.get("connector"))
    else:
        log.warning(
            "postgres_cdc.slot_claimed_twice",
            connector=owner.get("connector"),
            slot=config.slot,
            claims=[c.publication for c in claimants],
        )
    conn.execute(sql.SQL("DROP PUBLICATION IF EXISTS {}").format(sql.Identifier(config.publication)))
    return True


def drop_slot(
    conn: psycopg.Connection[Any], slot: str, timeout_s: float, *, connector: str | None = None
) -> None:
    """Drop ``slot`` and the temporary reading copies of it (``reader_prefix``), terminating the backends that
    hold them; gives up with ConnectException after ``timeout_s`` (the engine retries the cleanup)."""
    deadline = time.monotonic() + timeout_s
    prefix = reader_prefix(slot)
    while True:
        rows = conn.execute(
            "SELECT slot_name, active_pid, temporary FROM pg_replication_slots "
            "WHERE slot_name = %s OR (temporary AND starts_with(slot_name, %s))",
            (slot, prefix),
        ).fetchall()
        if not rows:
            return
        for name, pid, _temporary in rows:
            if pid is not None:
                log.info("postgres_cdc.terminating_backend", connector=connector, slot=name, pid=pid)
                conn.execute("SELECT pg_terminate_backend(%s)", (pid,))
            else:
                # attached again meanwhile, or gone: look again
                with contextlib.suppress(psycopg.errors.ObjectInUse, psycopg.errors.UndefinedObject):
                    conn.execute("SELECT pg_drop_replication_slot(%s)", (name,))
        if time.monotonic() > deadline:
            raise ConnectException(
                f"Replication slot {slot} could not be dropped within slot.drop.timeout.ms: "
                f"still held by {[(n, p) for n, p, _ in rows]}"
            )
        time.sleep(_TERMINATE_NAP_S)


def reader_prefix(slot: str) -> str:
    """The prefix of the temporary slots a task reads through: ``<slot cut to 40>_r<hash of the slot>_``
    (the hash: no other slot's readers share it)."""
    return f"{slot[:40]}_r{hashlib.sha256(slot.encode()).hexdigest()[:8]}_"
