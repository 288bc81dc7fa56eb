"""Streams audit rows as records, in id order, resuming after the last id committed."""

from __future__ import annotations

import time

from engine.api import SourceRecord, SourceTask
from engine.connectors.audit.config import AuditConfig
from engine.connectors.audit.dialects import Dialect, connect

_NAP_S = 0.05  # how often an idle poll looks again (poll runs in a worker thread)


class AuditTableSourceTask(SourceTask):
    def start(self, props: dict[str, str]) -> None:
        self._config = AuditConfig.parse(props)
        self._db: Dialect | None = connect(self._config.db_url, self._config.ddl_timeout_ms)
        offset = self.context.offset_storage_reader().offset(self._config.partition())
        self._last_id = int(offset["id"]) if offset else 0

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
        return [SourceRecord(topic=config.topic, key=f"{row.table}:{row.id}",
                             value={"table": row.table, "op": row.op, "row": row.row, "audit_id": row.id},
                             source_partition=partition, source_offset={"id": row.id}) for row in rows]

    def stop(self, connector_deleted: bool = False) -> None:
        db, self._db = self._db, None
        if db is not None:
            db.close()

    def version(self) -> str:
        return "1.0.0"
