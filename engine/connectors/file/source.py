"""Reads a file line by line; the offset is the byte position after the last line sent.

As in Kafka's FileStreamSourceTask: a partial last line waits for its newline, and a restart
resumes from the committed position (``{"position": n}`` for partition ``{"filename": path}``).
"""

from __future__ import annotations

import time
from pathlib import Path

from engine.api import (
    ConfigDef,
    ConfigType,
    ConnectException,
    Importance,
    Range,
    SourceConnector,
    SourceRecord,
    SourceTask,
    Task,
)

FILE = "file"
TOPIC = "topic"
BATCH_SIZE = "batch.size"
_IDLE_S = 0.1

CONFIG_DEF = (
    ConfigDef()
    .define(FILE, ConfigType.STRING, importance=Importance.HIGH, documentation="Source filename")
    .define(TOPIC, ConfigType.LIST, importance=Importance.HIGH, documentation="The topic to publish data to")
    .define(BATCH_SIZE, ConfigType.INT, 2000, Range.at_least(1), Importance.LOW,
            "The maximum number of records the source task can read from the file each time it is polled")
)


class FileStreamSourceConnector(SourceConnector):
    def start(self, props: dict[str, str]) -> None:
        values = CONFIG_DEF.parse(props)
        if len(values[TOPIC]) != 1:
            raise ConnectException("'topic' in FileStreamSourceConnector configuration requires definition of a "
                                   "single topic")
        self._props = dict(props)

    def stop(self) -> None:
        return None

    def task_class(self) -> type[Task]:
        return FileStreamSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props)]  # one file, one reader

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def version(self) -> str:
        return "1.0.0"


class FileStreamSourceTask(SourceTask):
    def start(self, props: dict[str, str]) -> None:
        values = CONFIG_DEF.parse(props)
        self._path = Path(values[FILE])
        self._topic = values[TOPIC][0]
        self._batch = values[BATCH_SIZE]
        offset = self.context.offset_storage_reader().offset(self._partition())
        self._position = int(offset["position"]) if offset else 0

    def _partition(self) -> dict[str, str]:
        return {"filename": str(self._path)}

    def poll(self) -> list[SourceRecord] | None:
        """Up to ``batch.size`` complete lines; None (after a short wait) when there are none yet."""
        try:
            with self._path.open("rb") as f:
                f.seek(self._position)
                chunk = f.read(1 << 20)
        except FileNotFoundError:
            time.sleep(_IDLE_S)
            return None
        records: list[SourceRecord] = []
        start = 0
        while len(records) < self._batch:
            end = chunk.find(b"\n", start)
            if end < 0:
                break
            line = chunk[start:end].rstrip(b"\r").decode("utf-8", "replace")
            start = end + 1
            records.append(SourceRecord(topic=self._topic, value=line, source_partition=self._partition(),
                                        source_offset={"position": self._position + start}))
        if not records:
            time.sleep(_IDLE_S)
            return None
        self._position += start
        return records

    def stop(self, connector_deleted: bool = False) -> None:
        return None

    def version(self) -> str:
        return "1.0.0"
