"""Which topics a worker's data plane uses, from its properties.

Kafka with ``bootstrap.servers``; else in memory (a file with ``topics.storage.file.filename``,
so records survive a restart; ``topics.retention.ms``, ``topics.retention.bytes`` and
``topics.segment.bytes`` are its topics' defaults).
"""

from __future__ import annotations

from engine.config.worker import WorkerConfig
from engine.topics.base import Topics
from engine.topics.log_config import retention_check_interval_ms, worker_defaults
from engine.topics.memory import MemoryTopics


def open_topics(worker: WorkerConfig) -> Topics:
    if servers := worker.get("bootstrap.servers"):
        from engine.topics.kafka import KafkaTopics

        session = worker.get("consumer.session.timeout.ms")
        # Connect's precedence: connectors' producers get producer.*, consumers consumer.*, admins the
        # top level + admin.* (engine.config.kafka_clients); per-connector overrides come on top
        return KafkaTopics(servers, client_id=f"connect-engine-{worker.worker_id}",
                           session_timeout_ms=int(session) if session else 10_000,
                           producer_config=worker.kafka.worker_level("producer"),
                           consumer_config=worker.kafka.worker_level("consumer"),
                           admin_config=worker.kafka.worker_level("admin"))
    return MemoryTopics(worker.get("topics.storage.file.filename"), topic_defaults=worker_defaults(worker.raw),
                        retention_check_interval_ms=retention_check_interval_ms(worker.raw))
