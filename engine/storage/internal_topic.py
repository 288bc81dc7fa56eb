"""One of Connect's internal topics (config, status or offsets) and its clients: what the config log
(``engine.configlog.kafka``) and the status and offset stores (``kafka_backing``) share, as Kafka's
``KafkaBasedLog`` sits under all three stores.

Each topic is made compacted or checked to be (``ensure``), written by one producer and read back
from the beginning by consumers outside any group (``new_consumer``: the reader, and the probes
that ask for the end); a failure is explained naming the topic and, for an ACL refusal, the worker
property that chose it (``why``), and raised as that topic's error (``error``: a ``ConfigLogError``
for the config topic).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from engine.config.kafka_clients.denials import denial, is_denial
from engine.errors import InternalTopicError
from engine.storage.kafka_topic_admin import describe, ensure_compacted_topic, topic_error


class InternalTopic:
    """An internal topic named by the worker property ``property_name``, and how its clients are made."""

    def __init__(
        self,
        bootstrap_servers: str,
        topic: str,
        *,
        property_name: str,
        client_id: str,
        producer_client_id: str | None = None,
        client_args: Mapping[str, Any] | None = None,
        consumer_args: Mapping[str, Any] | None = None,
        auto_create: bool = True,
    ) -> None:
        """``client_id``: the prefix of the consumers' and the admin client's ids (the producer's too,
        unless ``producer_client_id``); ``client_args``: the worker's security settings, for every
        client (``KafkaClients.own()``); ``consumer_args``: aiokafka arguments for every consumer;
        ``auto_create``: ``internal.topics.automatic.creation.enable`` (KIP-1209)."""
        self.bootstrap_servers = bootstrap_servers
        self.topic = topic
        self.property_name = property_name
        self.client_id = client_id
        self._producer_client_id = producer_client_id or client_id
        self._client_args = dict(client_args or {})
        self._consumer_args = dict(consumer_args or {})
        self.auto_create = auto_create

    async def ensure(
        self, *, partitions: int, replication_factor: int, single_partition: bool = False
    ) -> int:
        """Create the topic compacted if missing (refuse a missing one without ``auto_create``), else
        refuse a non-compacted one; its partition count."""
        return await ensure_compacted_topic(
            self.bootstrap_servers,
            self.topic,
            partitions=partitions,
            replication_factor=replication_factor,
            property_name=self.property_name,
            client_id=self.client_id,
            single_partition=single_partition,
            client_args=self._client_args,
            create=self.auto_create,
        )

    def new_producer(self) -> Any:
        """Not started; ``acks=all`` without idempotence (tansu rejects InitProducerId)."""
        return AIOKafkaProducer(
            **{
                **self._client_args,
                "bootstrap_servers": self.bootstrap_servers,
                "client_id": self._producer_client_id,
                "acks": "all",
                "enable_idempotence": False,
            }
        )

    def new_consumer(self, role: str, **extra: Any) -> Any:
        """Not started: a consumer outside any group, reading from the beginning, never committing."""
        return AIOKafkaConsumer(
            **{
                **self._client_args,
                "bootstrap_servers": self.bootstrap_servers,
                "client_id": f"{self.client_id}-{role}",
                "group_id": None,
                "enable_auto_commit": False,
                "auto_offset_reset": "earliest",
                **self._consumer_args,
                **extra,
            }
        )

    def why(self, exc: BaseException, client: Any, operation: str) -> str:
        """The cause; for an ACL refusal the principal, the grant and the worker setting to check."""
        if client is None or not is_denial(exc):
            return describe(exc)
        refused = denial(exc, client, operation=operation, resource=self.topic)
        return f"{refused} ({self.property_name}={self.topic})"

    def error(self, message: str) -> InternalTopicError:
        return topic_error(self.property_name, self.topic, message)
