"""Appends each record's value as a line to a file (or standard output), as Kafka's
``FileStreamSinkConnector`` does; ``flush`` makes what was written durable."""

from __future__ import annotations

import os
import sys
from collections.abc import Collection, Mapping
from typing import Any, ClassVar, TextIO

from engine.api import (
    ConfigDef,
    ConfigType,
    ConnectException,
    Importance,
    SinkConnector,
    SinkRecord,
    SinkTask,
    Task,
    TopicPartition,
)

FILE = "file"
CONFIG_DEF = ConfigDef().define(
    FILE,
    ConfigType.STRING,
    None,
    importance=Importance.HIGH,
    documentation="Destination filename. If not specified, the standard output will be used",
)


class FileStreamSinkConnector(SinkConnector):
    java_class: ClassVar[str | None] = "org.apache.kafka.connect.file.FileStreamSinkConnector"

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

    def alter_offsets(
        self, connector_config: Mapping[str, str], offsets: Mapping[TopicPartition, int | None]
    ) -> bool:
        """Nothing to alter outside Kafka, and no rule on the offsets: the framework's own are all there is."""
        return True


def _text(value: Any) -> str:
    """What Java's ``PrintStream.println(Object)`` prints for the common values."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class FileStreamSinkTask(SinkTask):
    java_class: ClassVar[str | None] = "org.apache.kafka.connect.file.FileStreamSinkTask"

    def start(self, props: dict[str, str]) -> None:
        filename = CONFIG_DEF.parse(props)[FILE]
        self._file: TextIO | None
        if not filename:
            self._file, self._owned = sys.stdout, False
            return
        try:
            self._file, self._owned = open(filename, "a", encoding="utf-8"), True  # noqa: SIM115
        except OSError as exc:
            raise ConnectException(
                f"Couldn't find or create file '{filename}' for FileStreamSinkTask"
            ) from exc

    def put(self, records: Collection[SinkRecord]) -> None:
        """Written through, as Java's ``PrintStream`` writes each line to the file: what was put is
        visible at once, not at the next commit (``flush`` adds the fsync)."""
        assert self._file is not None
        self._file.write("".join(_text(record.value) + "\n" for record in records))
        self._file.flush()

    def flush(self, current_offsets: Mapping[TopicPartition, object]) -> None:
        if self._file is not None:
            self._file.flush()
            if self._owned:
                os.fsync(self._file.fileno())

    def stop(self, connector_deleted: bool = False) -> None:
        file, self._file = self._file, None
        if file is not None and self._owned:
            file.close()

    def version(self) -> str:
        return "1.0.0"
