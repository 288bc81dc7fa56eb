"""The audit-table source's configuration."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from engine.api import ConfigDef, ConfigType, Importance, Range
from engine.connectors.audit.dialects import identifier

DB_URL = "audit.db.url"
TABLES = "audit.tables"
AUDIT_TABLE = "audit.table"
TOPIC = "topic"
BATCH_SIZE = "batch.size"
POLL_INTERVAL = "poll.interval.ms"

CONFIG_DEF = (
    ConfigDef()
    .define(DB_URL, ConfigType.STRING, importance=Importance.HIGH,
            documentation="sqlite:///path/to.db (or a plain path) or postgresql://user@host:port/db")
    .define(TABLES, ConfigType.LIST, importance=Importance.HIGH,
            documentation="Tables whose inserted, updated and deleted rows are captured")
    .define(AUDIT_TABLE, ConfigType.STRING, "", importance=Importance.MEDIUM,
            documentation="Name of the audit table (and prefix of the triggers) this connector provisions; "
                          "default connect_audit_<connector name>. deleted() drops it.")
    .define(TOPIC, ConfigType.STRING, "", importance=Importance.HIGH,
            documentation="Topic the change records go to; default <connector name>.audit")
    .define(BATCH_SIZE, ConfigType.INT, 500, Range.at_least(1), Importance.LOW,
            "Most audit rows returned by one poll")
    .define(POLL_INTERVAL, ConfigType.INT, 1000, Range.at_least(1), Importance.LOW,
            "How long a poll waits for new rows before returning nothing")
)


@dataclass(frozen=True, slots=True)
class AuditConfig:
    name: str
    db_url: str
    tables: list[str]
    audit_table: str
    topic: str
    batch_size: int
    poll_interval_s: float

    @classmethod
    def parse(cls, props: dict[str, str]) -> AuditConfig:
        values: dict[str, Any] = CONFIG_DEF.parse(props)
        name = props.get("name", "connector")
        default_audit = "connect_audit_" + re.sub(r"[^A-Za-z0-9_]", "_", name).lower()
        return cls(
            name=name,
            db_url=values[DB_URL],
            tables=[identifier(t.strip()) for t in values[TABLES] if t.strip()],
            # lower case: PostgreSQL folds unquoted names, and the cleanup finds triggers by this prefix
            audit_table=identifier((values[AUDIT_TABLE] or default_audit).strip().lower()),
            topic=values[TOPIC] or f"{name}.audit",
            batch_size=values[BATCH_SIZE],
            poll_interval_s=values[POLL_INTERVAL] / 1000,
        )

    def task_config(self) -> dict[str, str]:
        return {"name": self.name, DB_URL: self.db_url, TABLES: ",".join(self.tables), AUDIT_TABLE: self.audit_table,
                TOPIC: self.topic, BATCH_SIZE: str(self.batch_size), POLL_INTERVAL: str(int(self.poll_interval_s * 1000))}

    def partition(self) -> dict[str, str]:
        """The source partition: one audit table in one database (credentials left out)."""
        return {"audit_table": self.audit_table, "database": _without_password(self.db_url)}


def _without_password(url: str) -> str:
    """The URL minus its password and query (``?password=...``): it is stored with the offsets."""
    return re.sub(r"//([^:/@]+):[^@]*@", r"//\1@", url.split("?", 1)[0])
