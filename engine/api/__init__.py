"""What connector authors import: the Kafka Connect API in Python form."""

from __future__ import annotations

from engine.api.config_def import (
    NO_DEFAULT,
    ConfigDef,
    ConfigKey,
    ConfigType,
    ConfigValue,
    Importance,
    Password,
    Width,
)
from engine.api.connector import Config, Connector, SinkConnector, SourceConnector
from engine.api.context import (
    ConnectorContext,
    OffsetStorageReader,
    SinkConnectorContext,
    SinkTaskContext,
    SourceConnectorContext,
    SourceTaskContext,
)
from engine.api.errors import (
    AlreadyExistsException,
    ConfigException,
    ConnectException,
    DataException,
    IllegalWorkerStateException,
    NotFoundException,
    RetriableException,
)
from engine.api.exactly_once import ConnectorTransactionBoundaries, ExactlyOnceSupport, TransactionContext
from engine.api.records import ConnectRecord, Header, RecordMetadata, SinkRecord, SourceRecord, TopicPartition
from engine.api.task import SinkTask, SourceTask, Task

__all__ = [
    "NO_DEFAULT",
    "AlreadyExistsException",
    "Config",
    "ConfigDef",
    "ConfigException",
    "ConfigKey",
    "ConfigType",
    "ConfigValue",
    "ConnectException",
    "ConnectRecord",
    "Connector",
    "ConnectorContext",
    "ConnectorTransactionBoundaries",
    "DataException",
    "ExactlyOnceSupport",
    "Header",
    "IllegalWorkerStateException",
    "Importance",
    "NotFoundException",
    "OffsetStorageReader",
    "Password",
    "RecordMetadata",
    "RetriableException",
    "SinkConnector",
    "SinkConnectorContext",
    "SinkRecord",
    "SinkTask",
    "SinkTaskContext",
    "SourceConnector",
    "SourceConnectorContext",
    "SourceRecord",
    "SourceTask",
    "SourceTaskContext",
    "Task",
    "TopicPartition",
    "TransactionContext",
    "Width",
]
