"""The CDC source's configuration (key names as Debezium's PostgreSQL connector has them), and the
names of what it provisions: a publication and a logical replication slot."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from engine.api import (
    ConfigDef,
    ConfigDefError,
    ConfigException,
    ConfigType,
    Importance,
    LambdaValidator,
    Range,
)

URL = "postgres.url"
TABLES = "table.include.list"
SLOT = "slot.name"
PUBLICATION = "publication.name"
TOPIC_PREFIX = "topic.prefix"
BATCH_SIZE = "max.batch.size"
POLL_INTERVAL = "poll.interval.ms"
DROP_TIMEOUT = "slot.drop.timeout.ms"

MAX_NAME = 63  # PostgreSQL's NAMEDATALEN - 1, for slots and publications alike
_SLOT_NAME = re.compile(r"[a-z0-9_]{1,63}")


def _invalid(name: str, value: Any, why: str) -> ConfigDefError:
    return ConfigDefError(f"Invalid value {value} for configuration {name}: {why}", name=name, value=value)


def _slot(name: str, value: Any) -> None:
    if value and not _SLOT_NAME.fullmatch(str(value)):
        raise _invalid(
            name, value, "a replication slot name has 1 to 63 lower-case letters, digits or underscores"
        )


def _publication(name: str, value: Any) -> None:
    if value and len(str(value).encode()) > MAX_NAME:
        raise _invalid(name, value, f"a publication name has at most {MAX_NAME} bytes")


def _url(name: str, value: Any) -> None:
    if value is not None and urlsplit(str(value)).scheme not in ("postgresql", "postgres"):
        raise _invalid(name, value, "expected postgresql://user@host:port/database")


def _tables(name: str, value: Any) -> None:
    for text in value or []:
        if not text.strip().rpartition(".")[2]:
            raise _invalid(name, value, f"{text!r} is not schema.table")


_check_slot = LambdaValidator(_slot, "lower-case letters, digits, underscores; at most 63")
_check_publication = LambdaValidator(_publication, f"at most {MAX_NAME} bytes")
_check_url = LambdaValidator(_url, "postgresql://user@host:port/database")
_check_tables = LambdaValidator(_tables, "schema.table, ...")


CONFIG_DEF = (
    ConfigDef()
    .define(
        URL,
        ConfigType.STRING,
        importance=Importance.HIGH,
        validator=_check_url,
        documentation="postgresql://user[:password]@host:port/database of a server with wal_level=logical",
    )
    .define(
        TABLES,
        ConfigType.LIST,
        validator=_check_tables,
        importance=Importance.HIGH,
        documentation="Tables whose row changes are captured, comma-separated schema.table (exact names; "
        "a name without a schema is in public)",
    )
    .define(
        SLOT,
        ConfigType.STRING,
        "",
        importance=Importance.MEDIUM,
        validator=_check_slot,
        documentation="Logical replication slot this connector creates and, when deleted, drops; default "
        "connect_<connector name> lower-cased, other characters PostgreSQL refuses as _",
    )
    .define(
        PUBLICATION,
        ConfigType.STRING,
        "",
        importance=Importance.MEDIUM,
        validator=_check_publication,
        documentation="Publication this connector creates for the tables and, when deleted, drops; default "
        "the slot name",
    )
    .define(
        TOPIC_PREFIX,
        ConfigType.STRING,
        "",
        importance=Importance.HIGH,
        documentation="Records go to <prefix>.<schema>.<table>; default the connector name",
    )
    .define(
        BATCH_SIZE,
        ConfigType.INT,
        2048,
        Range.at_least(1),
        Importance.LOW,
        "Changes decoded by one poll (whole transactions: a larger one comes in one batch)",
    )
    .define(
        POLL_INTERVAL,
        ConfigType.INT,
        500,
        Range.at_least(1),
        Importance.LOW,
        "How long a poll that found no change waits before returning nothing",
    )
    .define(
        DROP_TIMEOUT,
        ConfigType.INT,
        10000,
        Range.at_least(1),
        Importance.LOW,
        "How long deleted() keeps terminating a backend still attached to the slot and retrying the drop "
        "(and the statement and lock timeout of its SQL); keep it below connector.deleted.timeout.ms",
    )
)


@dataclass(frozen=True, slots=True)
class Table:
    schema: str
    name: str

    def __str__(self) -> str:
        return f"{self.schema}.{self.name}"


@dataclass(frozen=True, slots=True)
class CdcConfig:
    name: str
    url: str
    tables: tuple[Table, ...]
    slot: str
    publication: str
    topic_prefix: str
    batch_size: int
    poll_interval_s: float
    drop_timeout_ms: int

    @classmethod
    def parse(cls, props: dict[str, str]) -> CdcConfig:
        values: dict[str, Any] = CONFIG_DEF.parse(props)
        name = props.get("name", "connector")
        slot = values[SLOT] or default_slot(name)
        tables = tuple(parse_table(t) for t in values[TABLES] if t.strip())
        if not tables:
            raise ConfigException(TABLES, props.get(TABLES), "name at least one table (schema.table)")
        return cls(
            name=name,
            url=values[URL],
            tables=tables,
            slot=slot,
            publication=values[PUBLICATION] or slot,
            topic_prefix=values[TOPIC_PREFIX] or name,
            batch_size=values[BATCH_SIZE],
            poll_interval_s=values[POLL_INTERVAL] / 1000,
            drop_timeout_ms=values[DROP_TIMEOUT],
        )

    def partition(self) -> dict[str, str]:
        """The source partition: one slot on one server (credentials left out: offsets are stored in the clear)."""
        return {"server": server_of(self.url), "slot": self.slot}


def parse_table(text: str) -> Table:
    schema, _, name = text.strip().rpartition(".")
    if not name:
        raise ConfigException(TABLES, text, "expected schema.table")
    return Table(schema or "public", name)


def default_slot(connector: str) -> str:
    """``connect_<name>``, lower-cased, other characters a slot name may not have as ``_``; a name longer
    than 63 characters is cut and suffixed with a hash of the whole, so it stays distinct."""
    slot = "connect_" + re.sub(r"[^a-z0-9_]", "_", connector.lower())
    if len(slot) <= MAX_NAME:
        return slot
    return f"{slot[: MAX_NAME - 9]}_{hashlib.sha256(connector.encode()).hexdigest()[:8]}"


def server_of(url: str) -> str:
    """``host:port/database`` of a URL, without user or password."""
    parts = urlsplit(url)
    return f"{parts.hostname or 'localhost'}:{parts.port or 5432}{parts.path or '/'}"
