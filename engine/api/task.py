"""Tasks: the units that move data, started from the configs their connector generated."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection, Mapping
from typing import Any, ClassVar

from engine.api._inline import inline
from engine.api._invoke import invoke
from engine.api.context import SinkTaskContext, SourceTaskContext
from engine.api.records import RecordMetadata, SinkRecord, SourceRecord, TopicPartition


class Task(ABC):
    """Base of every task. Any method may be written ``def`` or ``async def``.

    ``stop(connector_deleted=True)`` is called exactly when the task's connector is being
    deleted; every other stop passes False. A ``stop`` that takes no parameter is called as
    ``stop()``.
    """

    java_class: ClassVar[str | None] = None
    """Our addition: the Java task class this one is a twin of (its connector's ``java_class`` names the
    connector), so task configs Java Connect wrote (``task.class``) run this class."""

    @inline
    def version(self) -> str:
        return "unknown"

    @abstractmethod
    def start(self, props: dict[str, str]) -> Any: ...

    @abstractmethod
    def stop(self, connector_deleted: bool = False) -> Any: ...


class SourceTask(Task):
    TRANSACTION_BOUNDARY_CONFIG = "transaction.boundary"
    context: SourceTaskContext

    @inline
    def initialize(self, context: SourceTaskContext) -> None:
        self.context = context

    @abstractmethod
    def poll(self) -> Any:
        """Return a list of SourceRecord, or None/[] when there is nothing yet."""

    @inline
    def commit(self) -> Any:
        return None

    @inline
    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> Any:
        return None


class SinkTask(Task):
    TOPICS_CONFIG = "topics"
    TOPICS_REGEX_CONFIG = "topics.regex"
    context: SinkTaskContext

    @inline
    def initialize(self, context: SinkTaskContext) -> None:
        self.context = context

    @abstractmethod
    def put(self, records: Collection[SinkRecord]) -> Any: ...

    @inline
    def flush(self, current_offsets: Mapping[TopicPartition, int]) -> Any:
        return None

    async def pre_commit(self, current_offsets: Mapping[TopicPartition, int]) -> Mapping[TopicPartition, int]:
        """Default: ``flush`` then commit everything consumed; return {} to disable commits."""
        await invoke(self.flush, current_offsets)
        return current_offsets

    @inline
    def open(self, partitions: Collection[TopicPartition]) -> Any:
        return None

    @inline
    def close(self, partitions: Collection[TopicPartition]) -> Any:
        return None
