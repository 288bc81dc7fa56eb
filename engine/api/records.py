"""The records connectors produce and consume (Kafka's ``ConnectRecord``, ``SourceRecord``,
``SinkRecord``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
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
        copier = _COPIERS.get(type(self))
        if copier is None or not changes.keys() <= copier[0]:
            return replace(
                self, **changes
            )  # a subclass, __post_init__'s defaults (original_*), or replace's error for a bad name
        if self is DRAFT.record:  # the chain's own copy, seen by nothing else: changed where it is
            setters = _SETTERS[type(self)]
            for name, value in changes.items():
                setters[name](self, value)
            return self
        return copier[1](self, changes)  # type: ignore[no-any-return]


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


class DRAFT:
    """The record a ``TransformationChain`` made in this ``apply`` and handed only to shipped SMTs, which
    keep no record and end with ``record.new_record(...)``: that call may change it in place instead of
    copying it (one copy per chain rather than one per SMT). None when there is no such record.

    Only identity counts (``self is DRAFT.record``), so a record anyone else holds is never changed: a
    chain on another thread overwriting the slot makes a draft be copied, never another record edited.
    """

    record: ConnectRecord | None = None


def _copier(cls: type) -> tuple[frozenset[str], Callable[[Any, dict[str, Any]], Any]]:
    """The fields ``new_record`` may change on ``cls`` without ``replace``, and a function made for
    ``cls`` that copies a record slot by slot with the changes: one line per field, no loop, no
    attribute looked up by name (2x faster than a loop over the slots; three SMTs make three copies
    of every record)."""
    setters = {f.name: getattr(cls, f.name).__set__ for f in fields(cls)}
    scope: dict[str, Any] = {"_new": object.__new__, "cls": cls}
    body = ["def copy(self, c):", "    r = _new(cls)"]
    for name, setter in setters.items():
        scope[f"set_{name}"] = setter
        body.append(f"    set_{name}(r, c['{name}'] if '{name}' in c else self.{name})")
    body.append("    return r")
    exec("\n".join(body), scope)  # source built above from the dataclass's own field names
    return frozenset(n for n in setters if not n.startswith("original_")), scope["copy"]


# the record classes this module defines; anything else (a subclass) goes through ``replace``
_COPIERS: dict[type, tuple[frozenset[str], Callable[[Any, dict[str, Any]], Any]]] = {
    cls: _copier(cls) for cls in (SourceRecord, SinkRecord)
}
# each field's slot setter (past the frozen __setattr__), for a draft changed in place
_SETTERS: dict[type, dict[str, Callable[[Any, Any], None]]] = {
    cls: {f.name: getattr(cls, f.name).__set__ for f in fields(cls)} for cls in (SourceRecord, SinkRecord)
}
