"""The records connectors produce and consume (Kafka's ``ConnectRecord``, ``SourceRecord``,
``SinkRecord``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, Self


@dataclass(frozen=True, slots=True, order=True)
class TopicPartition:
    topic: str
    partition: int


@dataclass(frozen=True, slots=True)
class Header:
    key: str
    value: Any
    schema: Any = None


@dataclass(frozen=True, slots=True)
class RecordMetadata:
    """Where the broker put a source record; passed to ``SourceTask.commit_record``."""

    topic: str
    partition: int
    offset: int
    timestamp: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ConnectRecord:
    """Fields both record kinds share; SMTs build modified copies with ``new_record``."""

    topic: str
    kafka_partition: int | None = None
    key_schema: Any = None
    key: Any = None
    value_schema: Any = None
    value: Any = None
    timestamp: int | None = None
    headers: tuple[Header, ...] = ()

    def new_record(self, **changes: Any) -> Self:
        """A copy with ``changes`` (``dataclasses.replace``'s result, made by copying the slots: SMTs call
        this for every record, and ``replace`` re-runs ``__init__`` with every field by keyword)."""
        names = _FIELDS.get(type(self))
        if (
            names is None
            or not changes.keys() <= names.keys()
            or any(k.startswith("original_") for k in changes)
        ):
            return replace(
                self, **changes
            )  # a subclass, __post_init__'s defaults, or replace's error for a bad name
        record = _new(type(self))
        for name, setter in names.items():
            setter(record, changes[name] if name in changes else getattr(self, name))
        return record


@dataclass(frozen=True, slots=True, kw_only=True)
class SourceRecord(ConnectRecord):
    """A record read from an external system; ``source_offset`` is what resumes it after restart."""

    source_partition: Mapping[str, Any] = field(default_factory=dict)
    source_offset: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class SinkRecord(ConnectRecord):
    """A record read from Kafka; the ``original_*`` fields keep the pre-SMT coordinates."""

    kafka_offset: int = 0
    timestamp_type: str = "NoTimestampType"
    original_topic: str | None = None
    original_kafka_partition: int | None = None
    original_kafka_offset: int | None = None

    def __post_init__(self) -> None:
        if self.original_topic is None:
            object.__setattr__(self, "original_topic", self.topic)
        if self.original_kafka_partition is None:
            object.__setattr__(self, "original_kafka_partition", self.kafka_partition)
        if self.original_kafka_offset is None:
            object.__setattr__(self, "original_kafka_offset", self.kafka_offset)


_new = object.__new__
# the slot setters of the record classes this module defines, by field name; anything else uses replace
_FIELDS: dict[type, dict[str, Any]] = {
    cls: {f.name: getattr(cls, f.name).__set__ for f in fields(cls)} for cls in (SourceRecord, SinkRecord)
}
