"""Source offsets on the offsets topic (``offset.storage.topic``; Kafka's ``KafkaOffsetBackingStore``),
shared by every worker.

A task that moves to another worker resumes from what its previous owner committed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.storage import record_json
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
        auto_create: bool = True,
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
            auto_create=auto_create,
        )

    def _apply(self, key: str, value: bytes | None) -> None:
        """A record read back; one Connect's readers would not take is skipped (``ValueError`` or
        ``TypeError``, logged by the log): the key is ``[connector, {partition}]`` in JSON, the value
        an object (or a tombstone)."""
        parsed_key = record_json.loads(key)
        if not (
            isinstance(parsed_key, list)
            and len(parsed_key) == 2
            and isinstance(parsed_key[0], str)
            and isinstance(parsed_key[1], dict)
        ):
            raise TypeError("an offset key is a JSON array [connector name, partition object]")
        if value is None:
            self._offsets.pop(key, None)
            return
        offset = record_json.loads(value)
        if not isinstance(offset, dict):
            raise TypeError(f"an offset is a JSON object, not {type(offset).__name__}")
        self._offsets[key] = offset

    def _persist(self, records: list[tuple[str, bytes | None]]) -> None:
        for key, value in records:
            self.log.send(key, value)
