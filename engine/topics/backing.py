"""The journal of file-backed in-process topics: topics, partition states, offset commits and the
records not yet in a segment file, as journal lines.

Every change is journaled before it applies. A torn last line (a crash mid-append) is cut by the
journal, losing only the record whose send had not been acknowledged. ``rewrite`` replaces the
file with the current state at a checkpoint (temp file, fsync, rename), so it holds the latest
commit of each group and no history; a file written before checkpoints existed replays as one.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import structlog

from engine.journal.file import Journal
from engine.topics.base import ConsumedRecord, TopicPartition
from engine.topics.codec import dump, parse_record, record_body
from engine.topics.segment import TEMP, fsync_directory

log = structlog.get_logger(component="topics")

_TOPIC, _RECORD, _COMMIT, _PARTITION = "topic", "record", "commit", "partition"
_LINE_OVERHEAD = len('{"key":"","value":""}\n')


@dataclass(frozen=True, slots=True)
class TopicCreated:
    name: str
    partitions: int
    configs: dict[str, str]


@dataclass(frozen=True, slots=True)
class OffsetsCommitted:
    group: str
    offsets: dict[TopicPartition, int]


@dataclass(frozen=True, slots=True)
class PartitionState:
    """What the segment files cannot say: where the log starts and ends, and how far it was compacted."""

    topic: str
    partition: int
    start: int
    next: int
    cleaned: int


Event = TopicCreated | ConsumedRecord | OffsetsCommitted | PartitionState


def _decode(key: str, value: bytes | None) -> Event | None:
    if value is None:
        return None
    body = json.loads(value)
    if key == _TOPIC:
        return TopicCreated(str(body["name"]), int(body["partitions"]), dict(body["configs"]))
    if key == _RECORD:
        return parse_record(body, str(body["t"]), int(body["p"]))
    if key == _COMMIT:
        return OffsetsCommitted(str(body["g"]), {TopicPartition(str(t), int(p)): int(o) for t, p, o in body["o"]})
    if key == _PARTITION:
        return PartitionState(str(body["t"]), int(body["p"]), int(body["start"]), int(body["next"]),
                              int(body["cleaned"]))
    return None


def _encode(event: Event) -> tuple[str, bytes]:
    if isinstance(event, TopicCreated):
        return _TOPIC, dump({"name": event.name, "partitions": event.partitions, "configs": dict(event.configs)})
    if isinstance(event, ConsumedRecord):
        return _RECORD, dump({"t": event.topic, "p": event.partition, **record_body(event)})
    if isinstance(event, OffsetsCommitted):
        return _COMMIT, dump({"g": event.group, "o": [[tp.topic, tp.partition, offset]
                                                      for tp, offset in event.offsets.items()]})
    return _PARTITION, dump({"t": event.topic, "p": event.partition, "start": event.start, "next": event.next,
                             "cleaned": event.cleaned})


class TopicJournal:
    """Journals each change before the in-process log applies it (``fsync`` off by default:
    like Kafka, a record survives a process crash through the OS cache, not a power cut)."""

    def __init__(self, path: str | os.PathLike[str], *, fsync: bool = False) -> None:
        self.path = Path(path)
        self._fsync = fsync
        self._journal = Journal(path, fsync=fsync)
        self.appended = 0  # bytes (about) since the last rewrite: when to checkpoint

    def open(self) -> Iterator[Event]:
        """Every event in the file, in order; lines that cannot be decoded are skipped with a warning."""
        self._temp().unlink(missing_ok=True)  # a rewrite that did not finish: the file itself is whole
        self.appended = self.path.stat().st_size if self.path.exists() else 0
        for key, value in self._journal.open():
            try:
                event = _decode(key, value)
            except (ValueError, KeyError, TypeError) as exc:
                log.warning("topics.journal_line_skipped", path=str(self.path), key=key, reason=str(exc))
                continue
            if event is not None:
                yield event

    def append(self, event: Event) -> None:
        key, value = _encode(event)
        self._journal.append([(key, value)])
        self.appended += len(value) + value.count(b'"') + len(key) + _LINE_OVERHEAD  # the journal escapes quotes

    def topic(self, name: str, partitions: int, configs: Mapping[str, str]) -> None:
        self.append(TopicCreated(name, partitions, dict(configs)))

    def record(self, record: ConsumedRecord) -> None:
        self.append(record)

    def commit(self, group: str, offsets: Mapping[TopicPartition, int]) -> None:
        self.append(OffsetsCommitted(group, dict(offsets)))

    def rewrite(self, events: Iterable[Event]) -> None:
        """Replace the file with ``events``: a crash leaves the old file or the new one, whole."""
        temp = self._temp()
        temp.unlink(missing_ok=True)
        writer = Journal(temp, fsync=True)
        writer.open()
        writer.append([_encode(event) for event in events])
        writer.close()
        self._journal.close()
        os.replace(temp, self.path)
        fsync_directory(self.path.parent)
        self._journal = Journal(self.path, fsync=self._fsync)
        self._journal.open()
        self.appended = self.path.stat().st_size

    def _temp(self) -> Path:
        return self.path.with_name(self.path.name + TEMP)

    def close(self) -> None:
        self._journal.close()
