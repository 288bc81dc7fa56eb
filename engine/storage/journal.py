"""An append-only JSON-lines file of key/value records; the durable shape every file store shares.

A record whose line is torn (the process died mid-write) is dropped with a warning and cut off,
never raised: the file is still readable and appendable afterwards.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import structlog

log = structlog.get_logger(component="journal")


def _line(key: str, value: bytes | None) -> bytes:
    if value is None:
        body: dict[str, str | None] = {"key": key, "value": None}
    else:
        try:
            body = {"key": key, "value": value.decode()}
        except UnicodeDecodeError:
            body = {"key": key, "value_b64": base64.b64encode(value).decode()}
    return json.dumps(body, separators=(",", ":")).encode() + b"\n"


def _parse(line: bytes) -> tuple[str, bytes | None]:
    body = json.loads(line)
    key = body["key"]
    if not isinstance(key, str):
        raise TypeError("key is not a string")
    if "value_b64" in body:
        return key, base64.b64decode(body["value_b64"])
    value = body["value"]
    return key, None if value is None else str(value).encode()


class Journal:
    """Key/value records appended to one file, read back in order on open."""

    def __init__(self, path: str | os.PathLike[str], *, fsync: bool = True) -> None:
        self.path = Path(path)
        self._fsync = fsync
        self._file: IO[bytes] | None = None
        self.skipped = 0

    def open(self) -> list[tuple[str, bytes | None]]:
        """Read every whole record, cut a torn tail, and open for appending."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        records: list[tuple[str, bytes | None]] = []
        good_end = 0
        if self.path.exists():
            data = self.path.read_bytes()
            for start, line in _lines(data):
                end = start + len(line)
                if not line.endswith(b"\n"):
                    log.warning("journal.torn_record_dropped", path=str(self.path), offset=start)
                    break
                try:
                    records.append(_parse(line))
                except (ValueError, KeyError, TypeError) as exc:
                    self.skipped += 1
                    log.warning("journal.record_skipped", path=str(self.path), offset=start, reason=str(exc))
                good_end = end
            if good_end < len(data):
                with self.path.open("r+b") as f:
                    f.truncate(good_end)
        self._file = self.path.open("ab")
        return records

    def append(self, records: list[tuple[str, bytes | None]]) -> None:
        if self._file is None:
            raise RuntimeError(f"journal {self.path} is not open")
        self._file.write(b"".join(_line(k, v) for k, v in records))
        self._file.flush()
        if self._fsync:
            os.fsync(self._file.fileno())

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def _lines(data: bytes) -> Iterator[tuple[int, bytes]]:
    start = 0
    while start < len(data):
        end = data.find(b"\n", start)
        stop = len(data) if end < 0 else end + 1
        yield start, data[start:stop]
        start = stop
