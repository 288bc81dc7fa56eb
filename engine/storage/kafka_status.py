"""Statuses on the status topic (``status.storage.topic``; Kafka's ``KafkaStatusBackingStore``), shared
by every worker.

Each worker writes its own units' statuses and reads everyone's, so ``GET .../status`` answers
alike on any worker. Local writes update the cache at once; the topic brings the others'.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from engine.storage.kafka_backing import KafkaBackingLog, TopicBacked
from engine.storage.status import MemoryStatusStore, Status, TopicStatus, topic_key

PROPERTY = "status.storage.topic"


class KafkaStatusStore(TopicBacked, MemoryStatusStore):
    _journaled = True

    def __init__(
        self,
        bootstrap_servers: str,
        topic: str,
        *,
        partitions: int = 5,
        replication_factor: int = 1,
        client_id: str = "connect-engine",
        client_args: Mapping[str, Any] | None = None,
        auto_create: bool = True,
    ) -> None:
        super().__init__()
        self.log = KafkaBackingLog(
            bootstrap_servers,
            topic,
            partitions=partitions,
            replication_factor=replication_factor,
            property_name=PROPERTY,
            client_id=f"{client_id}-status",
            on_record=self.apply_record,
            client_args=client_args,
            auto_create=auto_create,
        )

    def _persist(self, key: str, status: Status | None) -> None:
        self.log.send(key, None if status is None else json.dumps(status.to_json()).encode())

    def _persist_topic(self, connector: str, topic: str, status: TopicStatus | None) -> None:
        self.log.send(
            topic_key(connector, topic), None if status is None else json.dumps(status.to_json()).encode()
        )
