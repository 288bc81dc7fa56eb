"""The file behind a file-backed in-process log: topics, records and offset commits as journal lines.

A record's offset is written for readers of the file, but replay re-derives offsets from the
records' order, so the file cannot contradict itself. Bytes are
base64 so any key, value or header survives; a torn last line (a crash mid-append) is cut by
the journal, losing only the record whose send had not been acknowledged.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import structlog

from engine.storage.journal import Journal
from engine.topics.base import ConsumedRecord, TopicPartition

log = structlog.get_logger(component="topics")

_TOPIC, _RECORD, _COMMIT = "topic", "record", "commit"


@dataclass(frozen=True, slots=True)
class TopicCreated:
    name: str
    partitions: int
    configs: dict[str, str]


@dataclass(frozen=True, slots=True)
class OffsetsCommitted:
    group: str
    offsets: dict[TopicPartition, int]


Event = TopicCreated | ConsumedRecord | OffsetsCommitted


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode()


def _unb64(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text)


def _decode(key: str, value: bytes | None) -> Event | None:
    if value is None:
        return None
    body = json.loads(value)
    if key == _TOPIC:
        return TopicCreated(str(body["name"]), int(body["partitions"]), dict(body["configs"]))
    if key == _RECORD:
        headers = tuple((str(name), _unb64(data)) for name, data in body["h"])
        return ConsumedRecord(str(body["t"]), int(body["p"]), int(body["o"]), _unb64(body["k"]),
                              _unb64(body["v"]), headers, int(body["ts"]))
    if key == _COMMIT:
        return OffsetsCommitted(str(body["g"]), {TopicPartition(str(t), int(p)): int(o) for t, p, o in body["o"]})
    return None


def _dump(body: object) -> bytes:
    return json.dumps(body, separators=(",", ":")).encode()


class TopicJournal:
    """Journals each change before the in-process log applies it (``fsync`` off by default:
    like Kafka, a record survives a process crash through the OS cache, not a power cut)."""

    def __init__(self, path: str | os.PathLike[str], *, fsync: bool = False) -> None:
        self._journal = Journal(path, fsync=fsync)

    def open(self) -> Iterator[Event]:
        """Every event in the file, in order; lines that cannot be decoded are skipped with a warning."""
        for key, value in self._journal.open():
            try:
                event = _decode(key, value)
            except (ValueError, KeyError, TypeError) as exc:
                log.warning("topics.journal_line_skipped", path=str(self._journal.path), key=key, reason=str(exc))
                continue
            if event is not None:
                yield event

    def topic(self, name: str, partitions: int, configs: Mapping[str, str]) -> None:
        self._journal.append([(_TOPIC, _dump({"name": name, "partitions": partitions, "configs": dict(configs)}))])

    def record(self, record: ConsumedRecord) -> None:
        self._journal.append([(_RECORD, _dump({
            "t": record.topic, "p": record.partition, "o": record.offset, "ts": record.timestamp,
            "k": _b64(record.key), "v": _b64(record.value),
            "h": [[name, _b64(value)] for name, value in record.headers]}))])

    def commit(self, group: str, offsets: Mapping[TopicPartition, int]) -> None:
        self._journal.append([(_COMMIT, _dump({"g": group, "o": [[tp.topic, tp.partition, offset]
                                                                  for tp, offset in offsets.items()]}))])

    def close(self) -> None:
        self._journal.close()
