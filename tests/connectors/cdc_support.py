"""What the CDC source's tests share: a fresh table in the private cluster, the slot's state read
back from the server, the records read back from the engine's topic, and a connector whose
``deleted()`` kills its worker half-way (drops the slot, then ``os._exit``), for the pending-cleanup test."""

from __future__ import annotations

import json
import os
import uuid
from typing import Any

import psycopg

from engine import Engine
from engine.api import ConnectException
from engine.connectors.postgres_cdc import PostgresCdcSourceConnector, provisioning
from engine.connectors.postgres_cdc.config import CdcConfig
from engine.testing import eventually

CONNECTOR = "engine.connectors.postgres_cdc.PostgresCdcSourceConnector"
KILLED_IN_DELETED = "tests.connectors.cdc_support.KilledAfterDroppingTheSlot"
FAST = {
    "task.shutdown.graceful.timeout.ms": "3000",
    "connector.shutdown.graceful.timeout.ms": "3000",
    "offset.flush.interval.ms": "200",
}
JSON_PLAIN = {
    "key.converter": "org.apache.kafka.connect.json.JsonConverter",
    "key.converter.schemas.enable": "false",
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter.schemas.enable": "false",
}


class CdcTable:
    """A fresh table ``public.<name>`` in the private cluster, and the server-side state of its connector."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.name = f"orders_{uuid.uuid4().hex[:8]}"
        self.execute(f"CREATE TABLE {self.name} (id INTEGER PRIMARY KEY, item TEXT NOT NULL)")

    def execute(self, sql: str, *params: Any) -> None:
        with psycopg.connect(self.url, autocommit=True) as db:
            db.execute(sql, params)

    def query(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        with psycopg.connect(self.url, autocommit=True) as db:
            return db.execute(sql, params).fetchall()

    def config(self, **extra: str) -> dict[str, str]:
        return {
            "connector.class": CONNECTOR,
            "postgres.url": self.url,
            "table.include.list": f"public.{self.name}",
            "poll.interval.ms": "50",
            **JSON_PLAIN,
            **extra,
        }

    def slots(self, prefix: str) -> list[str]:
        """Every slot (temporary copies included) whose name starts with ``prefix``."""
        return [
            r[0]
            for r in self.query(
                "SELECT slot_name FROM pg_replication_slots WHERE starts_with(slot_name, %s) "
                "ORDER BY slot_name",
                prefix,
            )
        ]

    def publication_exists(self, name: str) -> bool:
        return bool(self.query("SELECT 1 FROM pg_publication WHERE pubname = %s", name))

    def provisioned(self, slot: str) -> tuple[bool, bool]:
        """(slot exists, publication of the same name exists)."""
        return slot in self.slots(slot), self.publication_exists(slot)

    def confirmed(self, slot: str) -> int:
        rows = self.query(
            "SELECT confirmed_flush_lsn - '0/0'::pg_lsn FROM pg_replication_slots WHERE slot_name = %s", slot
        )
        return int(rows[0][0])

    def retained(self, slot: str) -> int:
        """Bytes of WAL the slot holds back: the server's current position minus what the slot confirmed."""
        rows = self.query(
            "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn) FROM pg_replication_slots "
            "WHERE slot_name = %s",
            slot,
        )
        return int(rows[0][0])

    def wal_lsn(self) -> int:
        return int(self.query("SELECT pg_current_wal_lsn() - '0/0'::pg_lsn")[0][0])

    def drop(self) -> None:
        self.execute(f"DROP TABLE IF EXISTS {self.name}")


async def topic_values(
    engine: Engine, topic: str, count: int, *, timeout: float = 20
) -> list[dict[str, Any]]:
    """The first ``count`` record values of ``topic`` (JSON), waiting for them; more than ``count`` fails."""
    consumer = await engine.topics.consumer(f"reader-{uuid.uuid4().hex[:6]}", [topic])
    values: list[dict[str, Any]] = []
    try:

        async def enough() -> bool:
            values.extend(
                json.loads(r.value) for r in await consumer.getmany(timeout_ms=100) if r.value is not None
            )
            return len(values) >= count

        await eventually(enough, timeout=timeout, message=f"{count} records on {topic}")
        values.extend(
            json.loads(r.value) for r in await consumer.getmany(timeout_ms=300) if r.value is not None
        )
    finally:
        await consumer.close()
    assert len(values) == count, [v["after"] for v in values]
    return values


class KilledAfterDroppingTheSlot(PostgresCdcSourceConnector):
    """A real CDC connector whose worker dies inside ``deleted()``, between dropping the slot and the
    publication (once: ``test.exit.once.file`` disarms it, as for the recording connectors)."""

    def _drop(self, conn: psycopg.Connection[Any], config: CdcConfig) -> None:
        once = self.context.configs().get("test.exit.once.file")
        try:
            with open(str(once), "x", encoding="utf-8"):
                pass
        except FileExistsError:
            super()._drop(conn, config)  # the restarted worker's cleanup: the real one
            return
        provisioning.drop_slot(conn, config.slot, 10)
        os._exit(9)

    def validate(self, connector_configs: Any) -> Any:
        if "test.exit.once.file" not in connector_configs:
            raise ConnectException("test.exit.once.file is required")
        return super().validate(connector_configs)
