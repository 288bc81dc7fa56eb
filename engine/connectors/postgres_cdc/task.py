"""Streams the slot's changes as records; confirms the slot only up to what Connect committed.

How it reads (why SQL functions, not the replication protocol: psycopg 3 and asyncpg, the
maintained async drivers, have no replication-protocol support; psycopg2 has, but is sync).
``start()`` copies the connector's slot into a *temporary* slot (``pg_copy_logical_replication_slot``)
and each ``poll`` consumes the copy with ``pg_logical_slot_get_binary_changes`` and ``pgoutput``:
every change is decoded once, and the connector's slot does not move. ``commit()`` runs after
the worker made the source offsets durable; it reads the committed offset back and advances the
connector's slot to it (``pg_replication_slot_advance``), so WAL is released only for delivered
data. The copy dies with the task's session (stop, crash, kill -9).

Offsets. The source offset of a change is ``{"lsn": <commit LSN of its transaction>, "event": n,
"last": <its last change?>, "end_lsn": <end of the commit record>, "txId": xid}``, all integers but
``last``. The slot is confirmed to ``end_lsn`` once a transaction's last change is committed, to
``lsn`` while only part of it is (the transaction is then decoded again after a restart, and the
first ``event`` changes are skipped). A restart skips every transaction committed before the
offset's. When every change handed out is committed and the stream is idle, the slot moves on to
where the copy read (past transactions that touched none of the tables), so an idle connector
holds no WAL.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import Mapping
from typing import Any

import psycopg
import structlog

from engine.api import ConnectException, SourceRecord, SourceTask
from engine.connectors.postgres_cdc import pgoutput
from engine.connectors.postgres_cdc.config import CdcConfig
from engine.connectors.postgres_cdc.provisioning import reader_prefix

log = structlog.get_logger(component="postgres_cdc")

Offset = Mapping[str, Any]


class Position:
    """Where the stream is: the last change handed out (or committed), as its source offset."""

    def __init__(self, offset: Offset | None) -> None:
        self.lsn = int(offset["lsn"]) if offset else 0
        self.event = int(offset["event"]) if offset else 0
        self.last = bool(offset["last"]) if offset else True

    def skips(self, final_lsn: int, event: int) -> bool:
        """Whether change number ``event`` (1-based) of the transaction committed at ``final_lsn`` was handed out."""
        if final_lsn != self.lsn:
            return final_lsn < self.lsn
        return self.last or event <= self.event


def confirm_lsn(offset: Offset | None) -> int:
    """How far the slot may be confirmed once ``offset`` is committed (0: nowhere yet)."""
    if not offset:
        return 0
    return int(offset["end_lsn"]) if offset["last"] else int(offset["lsn"])


class PostgresCdcSourceTask(SourceTask):
    async def start(self, props: dict[str, str]) -> None:
        self._config = config = CdcConfig.parse(props)
        self._partition = config.partition()
        committed = self.context.offset_storage_reader().offset(self._partition)
        self._position = Position(committed)
        self._handed_out: Offset | None = (
            committed  # the newest offset poll() returned (or committed at start)
        )
        self._confirmed = 0  # how far this session confirmed the slot
        self._idle_lsn = 0  # where the copy read to when a fetch found nothing new, since the last hand-out
        self._relations: dict[int, pgoutput.Relation] = {}
        self._lost: ConnectException | None = None
        self._fetch: asyncio.Task[list[tuple[str, int, bytes]]] | None = None
        self._reader = reader_prefix(config.slot) + secrets.token_hex(4)
        self._conn: psycopg.AsyncConnection[Any] | None = await psycopg.AsyncConnection.connect(
            config.url, autocommit=True, connect_timeout=10
        )
        try:
            await self._conn.execute(
                "SELECT pg_copy_logical_replication_slot(%s, %s, true)", (config.slot, self._reader)
            )
        except psycopg.errors.UndefinedObject:
            await self._close()
            raise ConnectException(
                f"Replication slot {config.slot} does not exist: it was dropped outside this "
                "connector (restart the connector to create it again)"
            ) from None

    async def poll(self) -> list[SourceRecord] | None:
        """The changes of the transactions decoded next, or None after ``poll.interval.ms`` without any."""
        if self._lost is not None:
            raise self._lost
        if self._conn is None:
            return None
        fetch = self._fetch = self._fetch or asyncio.ensure_future(self._read())
        # shielded: a poll cancelled by pause or stop must not lose what the copy already consumed;
        # the next poll picks the same fetch up
        rows = await asyncio.shield(fetch)
        # read ahead: the server decodes the next batch while the worker sends this one (lost with the
        # session if the task stops: the next one reads again from the connector's slot)
        self._fetch = asyncio.ensure_future(self._read()) if rows else None
        records = self._records(rows)
        if records:
            self._handed_out = records[-1].source_offset
            self._idle_lsn = 0
            return records
        if not rows:
            await self._note_idle()
            await asyncio.sleep(self._config.poll_interval_s)
        return None

    async def _read(self) -> list[tuple[str, int, bytes]]:
        assert self._conn is not None
        cursor = await self._conn.execute(
            "SELECT lsn::text, xid::text::bigint, data FROM pg_logical_slot_get_binary_changes("
            "%s, NULL, %s, 'proto_version', '1', 'publication_names', %s)",
            (self._reader, self._config.batch_size, self._config.publication),
        )
        return [(lsn, int(xid), bytes(data)) for lsn, xid, data in await cursor.fetchall()]

    async def _note_idle(self) -> None:
        """Everything up to the copy's confirmed position is handed out or touched none of the tables."""
        assert self._conn is not None
        cursor = await self._conn.execute(
            "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = %s", (self._reader,)
        )
        row = await cursor.fetchone()
        if row is not None and row[0] is not None:
            self._idle_lsn = pgoutput.lsn_int(row[0])

    def _records(self, rows: list[tuple[str, int, bytes]]) -> list[SourceRecord]:
        """Decode whole transactions (a fetch ends at a commit) into records, skipping what was handed out."""
        records: list[SourceRecord] = []
        begin: pgoutput.Begin | None = None
        pending: list[tuple[str, pgoutput.Change | pgoutput.Truncate]] = []
        for lsn, _xid, data in rows:
            message = pgoutput.decode(data)
            if isinstance(message, pgoutput.Relation):
                self._relations[message.relid] = message
            elif isinstance(message, pgoutput.Begin):
                begin, pending = message, []
            elif isinstance(message, pgoutput.Change | pgoutput.Truncate):
                pending.append((lsn, message))
            elif isinstance(message, pgoutput.Commit):
                if begin is None:
                    raise ConnectException("pgoutput: Commit without Begin")
                records.extend(self._transaction(begin, message, pending))
                begin, pending = None, []
        if begin is not None:
            raise ConnectException(f"pgoutput: transaction {begin.xid} not complete in one fetch")
        return records

    def _transaction(
        self,
        begin: pgoutput.Begin,
        commit: pgoutput.Commit,
        changes: list[tuple[str, pgoutput.Change | pgoutput.Truncate]],
    ) -> list[SourceRecord]:
        events: list[
            tuple[str, str, pgoutput.Relation, dict[str, Any] | None, dict[str, Any] | None, Any]
        ] = []
        for lsn, change in changes:
            if isinstance(change, pgoutput.Truncate):
                events.extend((lsn, "t", self._relation(relid), None, None, None) for relid in change.relids)
                continue
            relation = self._relation(change.relid)
            before = None
            if change.old is not None:
                before = pgoutput.row(relation, change.old, key_only=change.old_kind == "K")
            after = None if change.new is None else pgoutput.row(relation, change.new)
            key_source = after if after is not None else before
            key = {c.name: key_source.get(c.name) for c in relation.columns if c.key} if key_source else None
            events.append((lsn, change.op, relation, before, after, key or None))
        position, records = self._position, []
        ts_ms = int(begin.commit_ts.timestamp() * 1000)
        for number, (lsn, op, relation, before, after, key) in enumerate(events, start=1):
            if position.skips(begin.final_lsn, number):
                continue
            offset = {
                "lsn": begin.final_lsn,
                "event": number,
                "last": number == len(events),
                "end_lsn": commit.end_lsn,
                "txId": begin.xid,
            }
            source = {
                "connector": "postgresql",
                "name": self._config.name,
                "db": self._partition["server"],
                "schema": relation.schema,
                "table": relation.table,
                "txId": begin.xid,
                "lsn": lsn,
                "commit_lsn": pgoutput.lsn_text(begin.final_lsn),
                "ts_ms": ts_ms,
            }
            records.append(
                SourceRecord(
                    topic=f"{self._config.topic_prefix}.{relation.schema}.{relation.table}",
                    key=key,
                    value={"op": op, "before": before, "after": after, "source": source, "ts_ms": ts_ms},
                    source_partition=self._partition,
                    source_offset=offset,
                    timestamp=ts_ms,
                )
            )
        if events:
            self._position = Position({"lsn": begin.final_lsn, "event": len(events), "last": True})
        return records

    def _relation(self, relid: int) -> pgoutput.Relation:
        relation = self._relations.get(relid)
        if relation is None:
            raise ConnectException(f"pgoutput: change for relation {relid} before its Relation message")
        return relation

    async def commit(self) -> None:
        """Runs once the worker's offsets are durable: confirm the slot up to what they say (never further)."""
        conn = self._conn
        if conn is None:
            return
        committed = self.context.offset_storage_reader().offset(self._partition)
        target = confirm_lsn(committed)
        if self._idle_lsn and _same(committed, self._handed_out):
            target = max(
                target, self._idle_lsn
            )  # nothing handed out is uncommitted: skip the idle stretch too
        if target <= self._confirmed:
            return
        try:
            await conn.execute(
                "SELECT pg_replication_slot_advance(%s, %s::pg_lsn)",
                (self._config.slot, pgoutput.lsn_text(target)),
            )
        except psycopg.errors.UndefinedObject:
            log.error("postgres_cdc.slot_lost", connector=self._config.name, slot=self._config.slot)
            # commit() errors are only logged: the next poll fails the task instead
            self._lost = ConnectException(
                f"Replication slot {self._config.slot} was dropped outside this connector "
                "(restart the connector to create it again)"
            )
            raise self._lost from None
        self._confirmed = target

    async def stop(self, connector_deleted: bool = False) -> None:
        """Close the session (its temporary copy goes with it); the connector's slot stays unless deleted()."""
        await self._close()

    async def _close(self) -> None:
        fetch, self._fetch = self._fetch, None
        if fetch is not None:
            fetch.cancel()
            with contextlib.suppress(BaseException):
                await fetch
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                await conn.close()

    def version(self) -> str:
        return "1.0.0"


def _same(committed: Offset | None, handed_out: Offset | None) -> bool:
    if not committed or not handed_out:
        return not handed_out  # nothing handed out in this session or before: nothing to wait for
    return all(committed.get(k) == handed_out.get(k) for k in ("lsn", "event", "last"))
