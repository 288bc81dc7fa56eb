"""Streams audit rows as records, in id order, resuming after the last id committed."""

from __future__ import annotations

import time

import structlog

from engine.api import ConnectException, SourceRecord, SourceTask
from engine.connectors.audit.config import AuditConfig
from engine.connectors.audit.dialects import Dialect, connect

log = structlog.get_logger(component="audit")

_NAP_S = 0.05  # how often an idle poll looks again (poll runs in a worker thread)


class AuditTableSourceTask(SourceTask):
    def start(self, props: dict[str, str]) -> None:
        self._config = AuditConfig.parse(props)
        self._db: Dialect | None = connect(self._config.db_url, self._config.ddl_timeout_ms)
        offset = self.context.offset_storage_reader().offset(self._config.partition())
        self._last_id = int(offset["id"]) if offset else 0
        newest = self._db.last_id(self._config.audit_table)
        if self._last_id > newest:
            # the audit table was dropped and created again under this name: every new row has an id
            # below the offset, and resuming after it would skip them all without a word
            message = (
                f"The committed offset (id {self._last_id}) is beyond the last id audit table "
                f"{self._config.audit_table} ever handed out ({newest}): the table was re-created. Reset "
                "this connector's offsets (stop it, then DELETE /connectors/<name>/offsets) to read it "
                "from the start."
            )
            log.warning(
                "audit.offset_beyond_table",
                audit_table=self._config.audit_table,
                offset=self._last_id,
                last_id=newest,
            )
            raise ConnectException(message)

    def poll(self) -> list[SourceRecord] | None:
        """A batch of rows, or None after ``poll.interval.ms`` without changes."""
        config, db = self._config, self._db
        if db is None:
            return None
        deadline = time.monotonic() + config.poll_interval_s
        while True:
            rows = db.read(config.audit_table, self._last_id, config.batch_size)
            if rows or time.monotonic() >= deadline:
                break
            time.sleep(_NAP_S)
        if not rows:
            return None
        self._last_id = rows[-1].id
        partition = config.partition()
        return [
            SourceRecord(
                topic=config.topic,
                key=f"{row.table}:{row.id}",
                value={"table": row.table, "op": row.op, "row": row.row, "audit_id": row.id},
                source_partition=partition,
                source_offset={"id": row.id},
            )
            for row in rows
        ]

    def stop(self, connector_deleted: bool = False) -> None:
        db, self._db = self._db, None
        if db is not None:
            db.close()

    def version(self) -> str:
        return "1.0.0"
