"""Which config log a worker uses, from its properties.

A file with ``config.storage.file.filename``; else a Kafka topic (``config.storage.topic``) with
``bootstrap.servers``; else memory.
"""

from __future__ import annotations

from engine.config.worker import WorkerConfig
from engine.configlog.base import ConfigLog
from engine.configlog.file import FileConfigLog
from engine.configlog.memory import MemoryConfigLog


def open_config_log(worker: WorkerConfig) -> ConfigLog:
    """The worker's own Kafka clients (``KafkaClients.own()``) read and write the topic."""
    if path := worker.get("config.storage.file.filename"):
        return FileConfigLog(path)
    if servers := worker.get("bootstrap.servers"):
        from engine.configlog.kafka import KafkaConfigLog

        return KafkaConfigLog(servers, worker.raw["config.storage.topic"],
                              replication_factor=int(worker.raw["config.storage.replication.factor"]),
                              client_args=worker.kafka.own())
    return MemoryConfigLog()
