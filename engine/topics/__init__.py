"""The data plane: topics that source tasks write and sink tasks read (``docs/ARCHITECTURE.md``,
"Data plane")."""

from __future__ import annotations

from engine.topics.base import (
    BatchAck,
    ConsumedRecord,
    Consumer,
    OffsetReset,
    OutgoingRecord,
    Producer,
    RebalanceCallback,
    RecordMetadata,
    TopicPartition,
    Topics,
)
from engine.topics.errors import NotAssigned, TopicsError, UnknownTopic
from engine.topics.memory import MemoryTopics
from engine.topics.partitioner import Partitioner, murmur2

__all__ = [
    "BatchAck",
    "ConsumedRecord",
    "Consumer",
    "MemoryTopics",
    "NotAssigned",
    "OffsetReset",
    "OutgoingRecord",
    "Partitioner",
    "Producer",
    "RebalanceCallback",
    "RecordMetadata",
    "TopicPartition",
    "Topics",
    "TopicsError",
    "UnknownTopic",
    "murmur2",
]
