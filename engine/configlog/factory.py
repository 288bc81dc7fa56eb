"""Which config log a worker uses, from its properties.

A file with ``config.storage.file.filename``; a Kafka topic in a cluster (``group.id``), or for a
standalone worker whose ``config.storage.topic`` is named; else, for a standalone worker on a broker,
a file beside its offsets (``offset.storage.file.filename`` + ``.configs``); else memory, as
Connect's ``connect-standalone`` keeps them. A standalone worker
never shares a default topic: two of them on one broker would run each other's connectors.
"""

from __future__ import annotations

from pathlib import Path

from engine.config.worker import WorkerConfig
from engine.configlog.base import ConfigLog
from engine.configlog.file import FileConfigLog
from engine.configlog.memory import MemoryConfigLog
from engine.storage.factory import auto_create

DEFAULT_TOPIC = "connect-configs"  # a cluster's config topic unless named
SHARED_TOPIC_KEY = "config.storage.topic"


def beside_offsets(worker: WorkerConfig) -> Path | None:
    """Where a standalone worker on a broker keeps its connector configs when no topic is named."""
    offsets = worker.get("offset.storage.file.filename")
    return None if offsets is None else Path(f"{offsets}.configs")


def open_config_log(worker: WorkerConfig) -> ConfigLog:
    """The worker's own Kafka clients (``KafkaClients.own()``) read and write the topic."""
    if path := worker.get("config.storage.file.filename"):
        return FileConfigLog(path)
    servers, topic = worker.get("bootstrap.servers"), worker.get(SHARED_TOPIC_KEY)
    if servers and (topic or worker.get("group.id")):
        from engine.configlog.kafka import KafkaConfigLog

        return KafkaConfigLog(
            servers,
            (topic or DEFAULT_TOPIC).strip(),
            replication_factor=int(worker.raw["config.storage.replication.factor"]),
            client_args=worker.kafka.own(),
            auto_create=auto_create(worker.raw),
        )
    if servers and (beside := beside_offsets(worker)) is not None:
        return FileConfigLog(str(beside))  # what the shared default topic held, this worker's alone
    return MemoryConfigLog()


def standalone_notice(worker: WorkerConfig) -> str | None:
    """The one start-up line for a standalone worker on a broker that names no config topic: where
    its connector configs are now, and the key that shares the topic as earlier releases did."""
    if worker.get("group.id") or worker.get("config.storage.file.filename") or worker.get(SHARED_TOPIC_KEY):
        return None
    if not worker.get("bootstrap.servers"):
        return None
    beside = beside_offsets(worker)
    where = f"the file {beside}" if beside is not None else "memory"
    return (
        f"connector configs are kept in {where}, this worker's alone; set "
        f"{SHARED_TOPIC_KEY}={DEFAULT_TOPIC} to share that topic as before (two standalone workers "
        "sharing it run each other's connectors)"
    )
