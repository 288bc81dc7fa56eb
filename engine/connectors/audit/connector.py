"""Provisions the audit table and triggers on start, and removes them when the connector is deleted.

Pausing, stopping, restarting or reconfiguring leaves them in place: rows changed meanwhile are
captured and streamed once the task runs again. Only ``deleted()`` drops them, and only what this
incarnation of the connector created: the names carry the incarnation, the audit table its owner.
"""

from __future__ import annotations

import structlog

from engine.api import ConfigDef, ConnectException, SourceConnector, Task
from engine.connectors.audit.config import CONFIG_DEF, MAX_AUDIT_NAME, AuditConfig
from engine.connectors.audit.dialects import connect
from engine.connectors.audit.task import AuditTableSourceTask

log = structlog.get_logger(component="audit")

VERSION = "1.0.0"


class AuditTableSourceConnector(SourceConnector):
    # deleted() drops the audit table its offsets point into: they go with it
    offsets_removed_on_delete = True

    def start(self, props: dict[str, str]) -> None:
        self._config = config = AuditConfig.parse(props, self._incarnation())
        if len(config.audit_table) > MAX_AUDIT_NAME:
            raise ConnectException(
                f"audit.table {config.audit_table!r} is longer than {MAX_AUDIT_NAME} characters"
            )
        db = connect(config.db_url, config.ddl_timeout_ms)
        try:
            db.provision(config.audit_table, config.tables, config.owner())
        finally:
            db.close()

    def stop(self) -> None:
        return None  # triggers stay: only deletion removes what start() provisioned

    def task_class(self) -> type[Task]:
        return AuditTableSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [self._config.task_config()]  # one ordered change stream: one task

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def version(self) -> str:
        return VERSION

    def deleted(self) -> None:
        """Drop this incarnation's triggers and audit table; safe to run again (after a crash, or twice).

        A table owned by another connector or incarnation is left alone; DDL gives up in the database
        after ``audit.ddl.timeout.ms`` (the engine then retries the cleanup).
        """
        incarnation = self._incarnation()
        config = AuditConfig.parse(self.context.configs(), incarnation)
        db = connect(config.db_url, config.ddl_timeout_ms)
        try:
            # a cleanup recorded before incarnations existed drops what older versions provisioned
            if not db.drop(
                config.audit_table, config.tables, config.owner() if incarnation is not None else None
            ):
                log.warning(
                    "audit.table_not_ours", audit_table=config.audit_table, owner=db.owner(config.audit_table)
                )
        finally:
            db.close()

    def _incarnation(self) -> str | None:
        try:
            return self.context.incarnation()
        except ConnectException:
            return None
