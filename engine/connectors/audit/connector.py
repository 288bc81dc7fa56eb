"""Provisions the audit table and triggers on start, and removes them when the connector is deleted.

Pausing, stopping, restarting or reconfiguring leaves them in place: rows changed meanwhile are
captured and streamed once the task runs again. Only ``deleted()`` (KIP-883) drops them.
"""

from __future__ import annotations

from engine.api import ConfigDef, SourceConnector, Task
from engine.connectors.audit.config import CONFIG_DEF, AuditConfig
from engine.connectors.audit.dialects import connect
from engine.connectors.audit.task import AuditTableSourceTask

VERSION = "1.0.0"


class AuditTableSourceConnector(SourceConnector):
    def start(self, props: dict[str, str]) -> None:
        self._config = AuditConfig.parse(props)
        db = connect(self._config.db_url)
        try:
            db.provision(self._config.audit_table, self._config.tables)
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
        """Drop the triggers and the audit table; safe to run again (after a crash, or twice)."""
        config = AuditConfig.parse(self.context.configs())
        db = connect(config.db_url)
        try:
            db.drop(config.audit_table, config.tables)
        finally:
            db.close()
