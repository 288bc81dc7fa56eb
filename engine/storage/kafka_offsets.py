"""Source offsets on the offsets topic (``offset.storage.topic``; Kafka's ``KafkaOffsetBackingStore``),
shared by every worker.

A task that moves to another worker resumes from what its previous owner committed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from engine.storage.kafka_backing import KafkaBackingLog, TopicBacked
from engine.storage.offsets import MemoryOffsetStore

PROPERTY = "offset.storage.topic"


class KafkaOffsetStore(TopicBacked, MemoryOffsetStore):
    def __init__(
        self,
        bootstrap_servers: str,
        topic: str,
        *,
        partitions: int = 25,
        replication_factor: int = 1,
        client_id: str = "connect-engine",
        read_committed: bool = False,
        client_args: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__()
        self.log = KafkaBackingLog(
            bootstrap_servers,
            topic,
            partitions=partitions,
            replication_factor=replication_factor,
            property_name=PROPERTY,
            client_id=f"{client_id}-offsets",
            on_record=self._apply,
            isolation_level="read_committed" if read_committed else "read_uncommitted",
            client_args=client_args,
        )

    def _apply(self, key: str, value: bytes | None) -> None:
        json.loads(key)  # a key that is not Connect's JSON array is skipped (ValueError), not kept
        if value is None:
            self._offsets.pop(key, None)
        else:
            self._offsets[key] = json.loads(value)

    def _persist(self, records: list[tuple[str, bytes | None]]) -> None:
        for key, value in records:
            self.log.send(key, value)
