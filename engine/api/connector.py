"""Connectors: the unit a user configures, which splits work into tasks (Kafka's ``Connector``,
``SourceConnector``, ``SinkConnector``)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from engine.api._inline import inline
from engine.api.config_def import ConfigDef, ConfigValue
from engine.api.context import ConnectorContext, SinkConnectorContext, SourceConnectorContext
from engine.api.exactly_once import ConnectorTransactionBoundaries, ExactlyOnceSupport
from engine.api.records import TopicPartition
from engine.api.task import Task


@dataclass
class Config:
    """The result of ``Connector.validate``: one ConfigValue per key, each with its errors."""

    config_values: list[ConfigValue] = field(default_factory=list)

    @property
    def error_count(self) -> int:
        return sum(len(v.errors) for v in self.config_values)


class Connector(ABC):
    """Base of every connector. Any method may be written ``def`` or ``async def``.

    Lifecycle: ``initialize`` once per instance; ``start`` on start and on every resume;
    ``stop`` on pause, stop, restart, reconfiguration and shutdown; ``deleted`` exactly when the
    connector is deleted (after its tasks and its own ``stop``), so it can drop what it
    provisioned. ``deleted`` may run again after a crash, so it must be idempotent.
    """

    context: ConnectorContext

    java_class: ClassVar[str | None] = None
    """Our addition: the Java connector class this one is a twin of (same config keys, partitions and
    offsets), e.g. ``org.apache.kafka.connect.file.FileStreamSourceConnector``. A ``connector.class``
    naming it runs this class, so connectors Java Connect wrote to a shared config topic run here."""

    @inline
    def initialize(self, context: ConnectorContext) -> None:
        self.context = context

    @abstractmethod
    def start(self, props: dict[str, str]) -> Any: ...

    @abstractmethod
    def stop(self) -> Any: ...

    @abstractmethod
    def task_class(self) -> type[Task]: ...

    @abstractmethod
    def task_configs(self, max_tasks: int) -> Any:
        """Return at most ``max_tasks`` task configurations (a list of string dicts)."""

    @inline
    def config(self) -> ConfigDef:
        return ConfigDef()

    def validate(self, connector_configs: Mapping[str, str]) -> Config:
        """Default: validate against ``config()``; override for cross-key rules."""
        return Config(self.config().validate(connector_configs))

    @inline
    def version(self) -> str:
        return "unknown"

    @inline
    def deleted(self) -> Any:
        """Called once the connector is deleted; drop what it provisioned. Default: nothing."""
        return None


class SourceConnector(Connector):
    context: SourceConnectorContext

    offsets_removed_on_delete: ClassVar[bool] = False
    """Our addition to Connect: True removes this connector's source offsets once its ``deleted()``
    succeeded, so a connector that drops what it read from (a table, a slot) never leaves offsets
    that point past a re-created one. The connector config ``offsets.reset.on.delete`` overrides it."""

    @inline
    def alter_offsets(self, connector_config: Mapping[str, str], offsets: Mapping[Any, Any]) -> bool:
        return False

    def exactly_once_support(self, connector_config: Mapping[str, str]) -> ExactlyOnceSupport | None:
        """KIP-618: None (unknown) unless the connector says; ``exactly.once.support=required`` needs SUPPORTED."""
        return None

    def can_define_transaction_boundaries(
        self, connector_config: Mapping[str, str]
    ) -> ConnectorTransactionBoundaries:
        """KIP-618: whether ``transaction.boundary=connector`` may be used with this connector."""
        return ConnectorTransactionBoundaries.UNSUPPORTED


class SinkConnector(Connector):
    TOPICS_CONFIG = "topics"
    context: SinkConnectorContext

    @inline
    def alter_offsets(
        self, connector_config: Mapping[str, str], offsets: Mapping[TopicPartition, int | None]
    ) -> bool:
        return False
