"""The Spark Parquet sink's configuration."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.api import ConfigDef, ConfigType, Importance, NonEmptyString, Range

PATH = "path"
PARTITION_BY = "partition.by"
FLUSH_RECORDS = "flush.records"
DELETE_OUTPUT = "delete.output.on.delete"
TASK_ID = "task.id"
CRASH_AT = "test.crash.at"

CONFIG_DEF = (
    ConfigDef()
    .define(
        PATH,
        ConfigType.STRING,
        validator=NonEmptyString(),
        importance=Importance.HIGH,
        documentation="Output root (any Hadoop URI the Spark cluster can write): _batches (the Parquet data) and "
        "_manifests (the commit log) live under it",
    )
    .define(
        PARTITION_BY,
        ConfigType.STRING,
        "",
        importance=Importance.MEDIUM,
        documentation="A value field to partition the Parquet output by (<field>=<value>/ directories)",
    )
    .define(
        FLUSH_RECORDS,
        ConfigType.INT,
        10000,
        Range.at_least(1),
        Importance.LOW,
        "Buffered records after which the task asks for an early commit (which writes them)",
    )
    .define(
        DELETE_OUTPUT,
        ConfigType.BOOLEAN,
        False,
        importance=Importance.MEDIUM,
        documentation="Whether deleting the connector also removes its Parquet data and manifests "
        "(batches no manifest names are always removed)",
    )
    .define_internal(TASK_ID, ConfigType.INT, 0, documentation="Set by the connector for each task")
    .define_internal(
        CRASH_AT,
        ConfigType.STRING,
        "",
        documentation="TEST HOOK ONLY: '<point>[:<n>]' kills the process (os._exit) at the n-th "
        "time the task reaches <point>; see task.CRASH_POINTS",
    )
)


@dataclass(frozen=True, slots=True)
class SparkSinkConfig:
    connector: str
    task_id: int
    path: str
    partition_by: str | None
    flush_records: int
    delete_output: bool
    crash_at: str

    @classmethod
    def parse(cls, props: dict[str, str]) -> SparkSinkConfig:
        values: dict[str, Any] = CONFIG_DEF.parse(props)
        return cls(
            connector=props.get("name", "connector"),
            task_id=values[TASK_ID],
            path=values[PATH],
            partition_by=values[PARTITION_BY].strip() or None,
            flush_records=values[FLUSH_RECORDS],
            delete_output=values[DELETE_OUTPUT],
            crash_at=values[CRASH_AT].strip(),
        )
