"""Appends each record's value as a line; ``flush`` makes what was written durable."""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping
from typing import IO

from engine.api import (
    ConfigDef,
    ConfigType,
    Importance,
    SinkConnector,
    SinkRecord,
    SinkTask,
    Task,
    TopicPartition,
)

FILE = "file"
CONFIG_DEF = ConfigDef().define(FILE, ConfigType.STRING, importance=Importance.HIGH,
                                documentation="Destination filename")


class FileStreamSinkConnector(SinkConnector):
    def start(self, props: dict[str, str]) -> None:
        CONFIG_DEF.parse(props)
        self._props = dict(props)

    def stop(self) -> None:
        return None

    def task_class(self) -> type[Task]:
        return FileStreamSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props) for _ in range(max_tasks)]

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def version(self) -> str:
        return "1.0.0"


class FileStreamSinkTask(SinkTask):
    def start(self, props: dict[str, str]) -> None:
        self._file: IO[str] | None = open(CONFIG_DEF.parse(props)[FILE], "a", encoding="utf-8")  # noqa: SIM115

    def put(self, records: Collection[SinkRecord]) -> None:
        assert self._file is not None
        for record in records:
            self._file.write(f"{record.value}\n")

    def flush(self, current_offsets: Mapping[TopicPartition, object]) -> None:
        if self._file is not None:
            self._file.flush()
            os.fsync(self._file.fileno())

    def stop(self, connector_deleted: bool = False) -> None:
        file, self._file = self._file, None
        if file is not None:
            file.close()

    def version(self) -> str:
        return "1.0.0"
