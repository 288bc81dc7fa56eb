"""The config log: Kafka Connect's config-topic records, and the logs that hold them."""

from __future__ import annotations

from engine.configlog.base import ConfigLog, LogEntry
from engine.configlog.codec import decode, encode
from engine.configlog.records import (
    ConfigRecord,
    ConnectorConfigRecord,
    ConnectorTombstone,
    IgnoredRecord,
    LoggerLevelRecord,
    PendingCleanupCleared,
    PendingCleanupRecord,
    RestartRecord,
    SessionKeyRecord,
    TargetStateRecord,
    TargetStateTombstone,
    TaskCommitRecord,
    TaskConfigRecord,
    TaskCountRecord,
    TaskRestartRecord,
)

__all__ = [
    "ConfigLog",
    "ConfigRecord",
    "ConnectorConfigRecord",
    "ConnectorTombstone",
    "IgnoredRecord",
    "LogEntry",
    "LoggerLevelRecord",
    "PendingCleanupCleared",
    "PendingCleanupRecord",
    "RestartRecord",
    "SessionKeyRecord",
    "TargetStateRecord",
    "TargetStateTombstone",
    "TaskCommitRecord",
    "TaskConfigRecord",
    "TaskCountRecord",
    "TaskRestartRecord",
    "decode",
    "encode",
]
