"""Reads a file (or standard input) line by line, as Kafka's ``FileStreamSourceConnector`` does.

Its Python twin: the same config keys, defaults and messages, the same source partition
(``{"filename": path}``) and offset (``{"position": n}``, the byte position after the last line
sent), the same line ends (``\\n``, ``\\r`` or ``\\r\\n``; a partial last line waits for its end) and
``STRING`` value schema, so a connector Java Connect ran resumes here at Java's committed offset and
back (docs/operating/migrating-from-java-connect.md). Without ``file`` it reads the worker's
standard input and tracks no offsets.
"""

from __future__ import annotations

import os
import select
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, BinaryIO, ClassVar

from engine.api import (
    ConfigDef,
    ConfigType,
    ConnectException,
    ExactlyOnceSupport,
    Importance,
    NonEmptyString,
    SourceConnector,
    SourceRecord,
    SourceTask,
    Task,
)
from engine.data import Schema

FILE = "file"
TOPIC = "topic"
BATCH_SIZE = "batch.size"
FILENAME_FIELD = "filename"
POSITION_FIELD = "position"
_IDLE_S = 0.1
_READ = 1 << 20

CONFIG_DEF = (
    ConfigDef()
    .define(
        FILE,
        ConfigType.STRING,
        None,
        importance=Importance.HIGH,
        documentation="Source filename. If not specified, the standard input will be used",
    )
    .define(
        TOPIC,
        ConfigType.STRING,
        validator=NonEmptyString(),
        importance=Importance.HIGH,
        documentation="The topic to publish data to",
    )
    .define(
        BATCH_SIZE,
        ConfigType.INT,
        2000,
        importance=Importance.LOW,
        documentation="The maximum number of records the source task can read from the file each time it is "
        "polled",
    )
)


class FileStreamSourceConnector(SourceConnector):
    java_class: ClassVar[str | None] = "org.apache.kafka.connect.file.FileStreamSourceConnector"

    def start(self, props: dict[str, str]) -> None:
        CONFIG_DEF.parse(props)
        self._props = dict(props)

    def stop(self) -> None:
        return None

    def task_class(self) -> type[Task]:
        return FileStreamSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props)]  # only one input stream makes sense

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def version(self) -> str:
        return "1.0.0"

    def exactly_once_support(self, connector_config: Mapping[str, str]) -> ExactlyOnceSupport | None:
        """A real file, only appended to, can be read exactly once; standard input cannot (no offsets)."""
        filename = CONFIG_DEF.parse(connector_config)[FILE]
        return ExactlyOnceSupport.SUPPORTED if filename else ExactlyOnceSupport.UNSUPPORTED

    def alter_offsets(self, connector_config: Mapping[str, str], offsets: Mapping[Any, Any]) -> bool:
        """Connect's checks, with its messages: the task checks the position against the file when it starts."""
        if not CONFIG_DEF.parse(connector_config)[FILE]:
            raise ConnectException(
                f"Offsets cannot be modified if the '{FILE}' configuration is unspecified. "
                "This is because stdin is used for input and offsets are not tracked."
            )
        for partition, offset in offsets.items():
            if offset is None:
                continue  # tombstones are allowed for anything, so garbage can be cleaned up
            if POSITION_FIELD not in offset:
                raise ConnectException(
                    f"Offset objects should either be null or contain the key '{POSITION_FIELD}'"
                )
            position = offset[POSITION_FIELD]
            if not isinstance(position, int) or isinstance(position, bool):
                raise ConnectException(
                    f"The value for the '{POSITION_FIELD}' key in the offset is expected to be a Long value"
                )
            if position < 0:
                raise ConnectException(
                    f"The value for the '{POSITION_FIELD}' key in the offset should be a non-negative value"
                )
            if partition is None:
                raise ConnectException("Partition objects cannot be null")
            if FILENAME_FIELD not in _as_mapping(partition):
                raise ConnectException(f"Partition objects should contain the key '{FILENAME_FIELD}'")
        return True


def _line_end(data: bytes, start: int) -> tuple[int, int] | None:
    """Where the line beginning at ``start`` ends and the next begins (Connect's ``extractLine``):
    ``\\n``, ``\\r\\n`` or ``\\r``; a ``\\r`` at the very end waits, as it may be half of ``\\r\\n``."""
    newline = data.find(b"\n", start)
    carriage = data.find(b"\r", start, newline if newline >= 0 else len(data))
    if carriage < 0 or 0 <= newline < carriage:
        return None if newline < 0 else (newline, newline + 1)
    if carriage + 1 >= len(data):
        return None
    return carriage, carriage + (2 if data[carriage + 1] == 0x0A else 1)


def _as_mapping(partition: Any) -> Mapping[str, Any]:
    if isinstance(partition, Mapping):
        return partition
    import json

    decoded = json.loads(partition) if isinstance(partition, str | bytes) else {}
    return decoded if isinstance(decoded, Mapping) else {}


class FileStreamSourceTask(SourceTask):
    java_class: ClassVar[str | None] = "org.apache.kafka.connect.file.FileStreamSourceTask"
    # None until start() opens the file: a task whose start() failed is still stopped
    _stream: BinaryIO | None = None

    def start(self, props: dict[str, str]) -> None:
        values = CONFIG_DEF.parse(props)
        self._filename: str | None = values[FILE] or None
        self._topic: str = values[TOPIC]
        self._batch: int = values[BATCH_SIZE]
        self._stream = None
        self._position: int | None = None  # None: standard input, no offsets tracked
        self._pending = b""

    def _partition(self) -> dict[str, str | None]:
        return {FILENAME_FIELD: self._filename}

    def _open(self) -> bool:
        """Open the file at the committed position; False while it does not exist yet."""
        assert self._filename is not None
        try:
            stream = Path(self._filename).open("rb")  # noqa: SIM115 - kept open across polls, closed by stop()
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise ConnectException(exc) from exc
        offset = self.context.offset_storage_reader().offset(self._partition())
        last = offset.get(POSITION_FIELD) if offset else None
        if last is not None and (not isinstance(last, int) or isinstance(last, bool)):
            stream.close()
            raise ConnectException("Offset position is the incorrect type")
        self._position = last or 0
        stream.seek(self._position)
        self._stream = stream
        return True

    def _read(self) -> bytes:
        if self._filename is None:
            ready, _, _ = select.select([sys.stdin], [], [], _IDLE_S)
            return os.read(sys.stdin.fileno(), _READ) if ready else b""
        assert self._stream is not None
        return self._stream.read(_READ)

    def poll(self) -> list[SourceRecord] | None:
        """Up to ``batch.size`` complete lines; None (after a short wait) when there are none yet."""
        if self._filename is not None and self._stream is None and not self._open():
            time.sleep(_IDLE_S)
            return None
        chunk = self._read()
        self._pending += chunk
        records: list[SourceRecord] = []
        cursor = 0
        while len(records) < self._batch:
            found = _line_end(self._pending, cursor)
            if found is None:
                break
            end, following = found
            line = self._pending[cursor:end].decode("utf-8", "replace")
            if self._position is not None:
                self._position += following - cursor
            cursor = following
            records.append(
                SourceRecord(
                    topic=self._topic,
                    value_schema=Schema.STRING_SCHEMA,
                    value=line,
                    source_partition=self._partition(),
                    source_offset={POSITION_FIELD: self._position},
                    timestamp=int(time.time() * 1000),
                )
            )
        self._pending = self._pending[cursor:]
        if not records:
            if not chunk and self._filename is not None:
                time.sleep(_IDLE_S)
            return None
        return records

    def stop(self, connector_deleted: bool = False) -> None:
        stream, self._stream = self._stream, None
        if stream is not None:
            stream.close()

    def version(self) -> str:
        return "1.0.0"
