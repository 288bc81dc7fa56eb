"""Which status and offset stores a worker uses, from its properties.

Kafka topics in a cluster (``group.id``) or when a topic is named explicitly with
``bootstrap.servers``; else files when a filename is given; else memory.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.config.worker import bool_setting, int_setting
from engine.storage.base import OffsetStore, StatusStore
from engine.storage.kafka_topic_admin import AUTOMATIC_CREATION
from engine.storage.offsets import FileOffsetStore, MemoryOffsetStore
from engine.storage.status import FileStatusStore, MemoryStatusStore

DEFAULT_STATUS_TOPIC = "connect-status"
DEFAULT_OFFSETS_TOPIC = "connect-offsets"


def _on_kafka(worker: Mapping[str, str], topic_key: str) -> str | None:
    servers = worker.get("bootstrap.servers", "").strip()
    if not servers:
        return None
    if worker.get("group.id", "").strip() or worker.get(topic_key, "").strip():
        return servers
    return None


def _count(worker: Mapping[str, str], key: str, default: int) -> int:
    """Partitions and replication factors: at least 1 (-1, the broker's default, for a factor)."""
    if key.endswith("replication.factor") and worker.get(key, "").strip() == "-1":
        return -1
    return int_setting(worker, key, default, minimum=1)


def auto_create(worker: Mapping[str, str]) -> bool:
    """``internal.topics.automatic.creation.enable`` (KIP-1209, default true): false makes a missing
    internal topic an error instead of creating it (``connect-engine internal-topics create`` does)."""
    return bool_setting(worker, AUTOMATIC_CREATION, default="true")


def open_status_store(
    worker: Mapping[str, str], *, client_id: str, client_args: Mapping[str, Any] | None = None
) -> StatusStore:
    """``client_args``: the worker's own clients' security settings (``KafkaClients.own()``)."""
    if servers := _on_kafka(worker, "status.storage.topic"):
        from engine.storage.kafka_status import KafkaStatusStore

        return KafkaStatusStore(
            servers,
            worker.get("status.storage.topic", "").strip() or DEFAULT_STATUS_TOPIC,
            partitions=_count(worker, "status.storage.partitions", 5),
            replication_factor=_count(worker, "status.storage.replication.factor", 1),
            client_id=client_id,
            client_args=client_args,
            auto_create=auto_create(worker),
        )
    if path := worker.get("status.storage.file.filename"):
        return FileStatusStore(path)
    return MemoryStatusStore()


def open_offset_store(
    worker: Mapping[str, str], *, client_id: str, client_args: Mapping[str, Any] | None = None
) -> OffsetStore:
    if servers := _on_kafka(worker, "offset.storage.topic"):
        from engine.storage.kafka_offsets import KafkaOffsetStore

        return KafkaOffsetStore(
            servers,
            worker.get("offset.storage.topic", "").strip() or DEFAULT_OFFSETS_TOPIC,
            partitions=_count(worker, "offset.storage.partitions", 25),
            replication_factor=_count(worker, "offset.storage.replication.factor", 1),
            client_id=client_id,
            # offsets of exactly-once tasks' aborted transactions must stay unseen
            read_committed=worker.get("exactly.once.source.support", "").strip() == "enabled",
            client_args=client_args,
            auto_create=auto_create(worker),
        )
    if path := worker.get("offset.storage.file.filename"):
        return FileOffsetStore(path)
    return MemoryOffsetStore()
