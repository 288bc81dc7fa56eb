"""Provisions a publication and a logical replication slot on start, drops them when deleted.

Pausing, stopping, restarting, a rebalance or a worker shutdown leave both in place: the slot
keeps the changes made meanwhile, and the task streams them once it runs again. Only
``deleted()`` drops them (and the offsets go with them: ``offsets_removed_on_delete``), since a
slot nobody reads makes the server keep WAL until its disk fills.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import psycopg
import structlog

from engine.api import Config, ConfigDef, ConnectException, SourceConnector, Task
from engine.connectors.postgres_cdc import provisioning
from engine.connectors.postgres_cdc.config import CONFIG_DEF, TABLES, URL, CdcConfig, parse_table, server_of
from engine.connectors.postgres_cdc.task import PostgresCdcSourceTask

log = structlog.get_logger(component="postgres_cdc")

VERSION = "1.0.0"


class PostgresCdcSourceConnector(SourceConnector):
    # deleted() drops the slot the offsets are positions in: they go with it
    offsets_removed_on_delete = True

    def start(self, props: dict[str, str]) -> None:
        self._config = config = CdcConfig.parse(props)
        conn = provisioning.connect(config.url, config.drop_timeout_ms)
        try:
            if provisioning.provision(conn, config, self._owner()):
                log.info(
                    "postgres_cdc.slot_created",
                    connector=config.name,
                    slot=config.slot,
                    publication=config.publication,
                )
        finally:
            conn.close()

    def stop(self) -> None:
        return None  # the slot and publication stay: only deletion removes what start() provisioned

    def task_class(self) -> type[Task]:
        return PostgresCdcSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [
            dict(self.context.configs(), name=self._config.name)
        ]  # one slot, one ordered stream: one task

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def version(self) -> str:
        return VERSION

    def validate(self, connector_configs: Mapping[str, str]) -> Config:
        """The keys, then the server: reachable, ``wal_level=logical``, every table there."""
        result = super().validate(connector_configs)
        values = {v.name: v for v in result.config_values}
        url = connector_configs.get(URL)
        if not url or values[URL].errors:
            return result
        try:
            conn = provisioning.connect(url, 10000)
        except psycopg.Error as exc:
            values[URL].errors.append(f"Cannot connect to PostgreSQL at {server_of(url)}: {str(exc).strip()}")
            return result
        try:
            level = provisioning.wal_level(conn)
            if level != "logical":
                values[URL].errors.append(provisioning.wal_level_error(level, server_of(url)))
            if not values[TABLES].errors:
                names = [t for t in connector_configs.get(TABLES, "").split(",") if t.strip()]
                for table in provisioning.missing_tables(conn, tuple(parse_table(t) for t in names)):
                    values[TABLES].errors.append(f"Table {table} does not exist in {server_of(url)}")
        finally:
            conn.close()
        return result

    def deleted(self) -> None:
        """Drop the slot (terminating a backend still attached, bounded by ``slot.drop.timeout.ms``) and the
        publication; safe to run again after a crash. Objects another connector owns are left alone."""
        config = CdcConfig.parse(self.context.configs())
        conn = provisioning.connect(config.url, config.drop_timeout_ms)
        try:
            self._drop(conn, config)
        finally:
            conn.close()

    def _drop(self, conn: psycopg.Connection[Any], config: CdcConfig) -> None:
        """The cleanup's steps (a test kills the worker between them)."""
        if provisioning.drop(conn, config, self._owner()):
            log.info(
                "postgres_cdc.dropped",
                connector=config.name,
                slot=config.slot,
                publication=config.publication,
            )

    def _owner(self) -> dict[str, str | None]:
        try:
            incarnation: str | None = self.context.incarnation()
        except ConnectException:
            incarnation = None
        return {"connector": self.context.configs().get("name", "connector"), "incarnation": incarnation}
