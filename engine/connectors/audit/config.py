"""The audit-table source's configuration, and the names of what it provisions.

Default names are ``connect_audit_<readable part>_<hash>``, the hash over the exact connector
name and its incarnation: two names that fold to the same text (``coll-a``/``coll_a``,
``Upper``/``upper``, long names cut at the same length) or two creations of one name never share
an object, and every name fits PostgreSQL's 63 bytes.
"""

from __future__ import annotations

import hashlib
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
DDL_TIMEOUT = "audit.ddl.timeout.ms"

MAX_AUDIT_NAME = 50  # trigger names "<audit>_<table>" are cut at 54 bytes: the "<audit>_" prefix survives
_READABLE = 24

CONFIG_DEF = (
    ConfigDef()
    .define(
        DB_URL,
        ConfigType.STRING,
        importance=Importance.HIGH,
        documentation="sqlite:///path/to.db (or a plain path) or postgresql://user@host:port/db",
    )
    .define(
        TABLES,
        ConfigType.LIST,
        importance=Importance.HIGH,
        documentation="Tables whose inserted, updated and deleted rows are captured",
    )
    .define(
        AUDIT_TABLE,
        ConfigType.STRING,
        "",
        importance=Importance.MEDIUM,
        documentation="Name of the audit table (and prefix of the triggers) this connector provisions; "
        "default connect_audit_<connector name>_<hash of the name and incarnation>. "
        f"At most {MAX_AUDIT_NAME} characters. deleted() drops it, and only if this connector "
        "incarnation created it.",
    )
    .define(
        TOPIC,
        ConfigType.STRING,
        "",
        importance=Importance.HIGH,
        documentation="Topic the change records go to; default <connector name>.audit",
    )
    .define(
        BATCH_SIZE,
        ConfigType.INT,
        500,
        Range.at_least(1),
        Importance.LOW,
        "Most audit rows returned by one poll",
    )
    .define(
        POLL_INTERVAL,
        ConfigType.INT,
        1000,
        Range.at_least(1),
        Importance.LOW,
        "How long a poll waits for new rows before returning nothing",
    )
    .define(
        DDL_TIMEOUT,
        ConfigType.INT,
        10000,
        Range.at_least(1),
        Importance.LOW,
        "Lock and statement timeout of the provisioning and dropping DDL, enforced by the database; "
        "keep it below the worker's connector.deleted.timeout.ms so a cleanup the worker stopped "
        "waiting for does not go on waiting for a lock in the database",
    )
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
    ddl_timeout_ms: int
    incarnation: str | None

    @classmethod
    def parse(cls, props: dict[str, str], incarnation: str | None = None) -> AuditConfig:
        """``incarnation`` names the default audit table; without one (a task config, which carries the
        resolved name) the name must be in ``audit.table``."""
        values: dict[str, Any] = CONFIG_DEF.parse(props)
        name = props.get("name", "connector")
        # lower case: PostgreSQL folds unquoted names, and the cleanup finds triggers by this prefix
        audit = (values[AUDIT_TABLE] or default_audit_table(name, incarnation)).strip().lower()
        return cls(
            name=name,
            db_url=values[DB_URL],
            tables=[identifier(t.strip()) for t in values[TABLES] if t.strip()],
            audit_table=identifier(audit),
            topic=values[TOPIC] or f"{name}.audit",
            batch_size=values[BATCH_SIZE],
            poll_interval_s=values[POLL_INTERVAL] / 1000,
            ddl_timeout_ms=values[DDL_TIMEOUT],
            incarnation=incarnation,
        )

    def owner(self) -> dict[str, str | None]:
        """The mark recorded on the audit table: who may use it, and drop it."""
        return {"connector": self.name, "incarnation": self.incarnation}

    def task_config(self) -> dict[str, str]:
        return {
            "name": self.name,
            DB_URL: self.db_url,
            TABLES: ",".join(self.tables),
            AUDIT_TABLE: self.audit_table,
            TOPIC: self.topic,
            BATCH_SIZE: str(self.batch_size),
            POLL_INTERVAL: str(int(self.poll_interval_s * 1000)),
            DDL_TIMEOUT: str(self.ddl_timeout_ms),
        }

    def partition(self) -> dict[str, str]:
        """The source partition: one audit table in one database (credentials left out)."""
        return {"audit_table": self.audit_table, "database": _without_password(self.db_url)}


def default_audit_table(name: str, incarnation: str | None) -> str:
    """``connect_audit_<readable>_<hash>``: injective over (exact name, incarnation), at most 49 bytes.

    Without an incarnation (a cleanup recorded before incarnations existed) it is the name older
    versions used, ``connect_audit_<name lower-cased, other characters as _>``, so that cleanup still
    finds what it has to drop.
    """
    readable = re.sub(r"[^a-z0-9_]", "_", name.lower())
    if incarnation is None:
        return "connect_audit_" + readable
    digest = hashlib.sha256(f"{name}\0{incarnation}".encode()).hexdigest()[:10]
    return f"connect_audit_{readable[:_READABLE]}_{digest}"


def _without_password(url: str) -> str:
    """The URL minus its password and query (``?password=...``): it is stored with the offsets."""
    return re.sub(r"//([^:/@]+):[^@]*@", r"//\1@", url.split("?", 1)[0])
