"""Topics on a Kafka-protocol broker through aiokafka: ``KafkaTopics``, the facade that shares the
clients, over one module per role (``admin``, ``producer``, ``consumer``).

Lessons from ``engine.configlog.kafka`` that apply here: ``acks=all`` without idempotence
(tansu rejects InitProducerId); never trust ListOffsets on tansu (this layer exposes no end
offsets); tansu holds a waiting fetch until ``fetch_max_wait_ms`` runs out even when records
arrive, so that bound is also the worst added latency on it; it rebalances in about half a
session timeout, so tests pass a short ``session_timeout_ms``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Collection, Mapping
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.coordinator.assignors.range import RangePartitionAssignor
from aiokafka.errors import KafkaError

from engine.config.kafka_clients.starting import start_client
from engine.errors import EngineNotRunning
from engine.topics.base import NO_CALLBACK, RebalanceCallback, TopicPartition
from engine.topics.kafka.admin import KafkaAdmin
from engine.topics.kafka.consumer import KafkaConsumer, RebalanceListener
from engine.topics.kafka.failures import topics_error
from engine.topics.kafka.producer import KafkaProducer

__all__ = ["KafkaConsumer", "KafkaProducer", "KafkaTopics"]


class KafkaTopics:
    """One admin client and one ``AIOKafkaProducer`` shared by every ``producer()``; one
    ``AIOKafkaConsumer`` per ``consumer()``.

    ``open`` starts only the admin client (the top-level and ``admin.*`` settings, as the worker's);
    the shared producer, made with connectors' ``producer.*`` settings, starts on first use
    (``open_producer``), so a producer that cannot connect fails the task that needs it, not the
    worker, as in Connect, where each task's producer is its own."""

    def __init__(
        self,
        bootstrap_servers: str,
        *,
        client_id: str = "connect-engine",
        replication_factor: int = 1,
        session_timeout_ms: int = 10_000,
        fetch_max_wait_ms: int = 100,
        producer_config: Mapping[str, Any] | None = None,
        consumer_config: Mapping[str, Any] | None = None,
        admin_config: Mapping[str, Any] | None = None,
    ) -> None:
        """``*_config``: aiokafka arguments for connectors' clients (``engine.config.kafka_clients``),
        applied over this class's defaults, as Connect applies ``producer.*`` over its own."""
        self.bootstrap_servers = bootstrap_servers
        self.client_id = client_id
        self.replication_factor = replication_factor
        self.session_timeout_ms = session_timeout_ms
        self.fetch_max_wait_ms = fetch_max_wait_ms
        self._producer_config = dict(producer_config or {})
        self._consumer_config = dict(consumer_config or {})
        self._admin_config = dict(admin_config or {})
        self._dedicated: dict[KafkaProducer, Any] = {}  # producers of their own (connector overrides)
        self._stopping: set[asyncio.Task[None]] = set()
        self._admin: KafkaAdmin | None = None
        self._producer: Any = None  # the shared aiokafka producer, once started
        self._producer_lock = asyncio.Lock()
        self._producers: set[KafkaProducer] = set()
        self._consumers: set[KafkaConsumer] = set()

    async def open(self) -> None:
        if self._admin is not None:
            return
        admin = KafkaAdmin(self.bootstrap_servers, self.client_id, self._admin_config)
        await admin.start()
        self._admin = admin

    async def lookup_cluster_id(self) -> str | None:
        """The cluster's id, as Connect's ``lookupKafkaClusterId`` asks the admin client."""
        admin = self._require(self._admin)
        try:
            description = await admin._client.describe_cluster()
        except KafkaError as exc:
            raise topics_error(exc, f"describe the cluster at {self.bootstrap_servers}") from exc
        return str(description["cluster_id"])

    async def open_producer(self) -> None:
        """Start the shared producer unless it runs; its failure is the caller's (a task's)."""
        await self._shared_client()

    async def _shared_client(self) -> Any:
        self._require(self._admin)
        async with self._producer_lock:
            if self._producer is None:
                producer = self._new_producer(self._producer_config)
                try:
                    await start_client(producer)
                except KafkaError as exc:
                    with contextlib.suppress(KafkaError):
                        await producer.stop()
                    raise topics_error(exc, f"connect to {self.bootstrap_servers}") from exc
                self._producer = producer
            return self._producer

    def _new_producer(self, config: Mapping[str, Any]) -> Any:
        return AIOKafkaProducer(
            **{
                "bootstrap_servers": self.bootstrap_servers,
                "client_id": self.client_id,
                "acks": "all",
                "enable_idempotence": False,
                **config,
            }
        )

    async def producer_with(self, client_config: Mapping[str, Any]) -> KafkaProducer:
        """A producer with its own aiokafka client (a connector's ``producer.override.*``), stopped when
        the returned producer is closed."""
        self._require(self._admin)
        client = self._new_producer(client_config)
        try:
            await start_client(client)
        except KafkaError as exc:
            with contextlib.suppress(KafkaError):
                await client.stop()
            raise topics_error(
                exc, f"connect to {client_config.get('bootstrap_servers', self.bootstrap_servers)}"
            ) from exc
        wrapper = KafkaProducer(client, self._forget_dedicated, prefix="producer.override.")
        self._dedicated[wrapper] = client
        return wrapper

    def _forget_dedicated(self, wrapper: KafkaProducer) -> None:
        client = self._dedicated.pop(wrapper, None)
        if client is not None:
            task = asyncio.get_running_loop().create_task(_stop_quietly(client), name="topics-producer-stop")
            self._stopping.add(task)
            task.add_done_callback(self._stopping.discard)

    async def close(self) -> None:
        """Flush and close producers, leave groups, stop the clients; idempotent."""
        for consumer in list(self._consumers):
            await consumer.close()
        for wrapper in [*self._producers, *self._dedicated]:
            await wrapper.close()
        if self._stopping:
            await asyncio.wait(list(self._stopping))
        admin, producer = self._admin, self._producer
        self._admin = self._producer = None
        if producer is not None:
            with contextlib.suppress(KafkaError):
                await producer.stop()
        if admin is not None:
            await admin.close()

    def _require(self, admin: KafkaAdmin | None) -> KafkaAdmin:
        if admin is None:
            raise EngineNotRunning("The topics are not open")
        return admin

    async def create_topic(
        self,
        name: str,
        partitions: int = 1,
        configs: Mapping[str, str] | None = None,
        client_config: Mapping[str, Any] | None = None,
        *,
        replication_factor: int | None = None,
    ) -> bool:
        """``client_config``: a connector's admin settings (``admin.override.*``), used by an admin client
        made for this call; ``replication_factor``: None for this instance's own, -1 for the broker's."""
        admin = self._require(self._admin)
        replicas = self.replication_factor if replication_factor is None else replication_factor
        return await admin.create_topic(name, partitions, configs, replicas, client_config)

    async def list_topics(self) -> list[str]:
        return await self._require(self._admin).list_topics()

    async def partitions(self, name: str) -> int:
        return await self._require(self._admin).partitions(name)

    def producer(self) -> KafkaProducer:
        self._require(self._admin)
        wrapper = KafkaProducer(self._producer, self._producers.discard, start=self._shared_client)
        self._producers.add(wrapper)
        return wrapper

    async def consumer(
        self,
        group_id: str,
        topics: Collection[str],
        on_assign: RebalanceCallback = NO_CALLBACK,
        on_revoke: RebalanceCallback = NO_CALLBACK,
        client_config: Mapping[str, Any] | None = None,
    ) -> KafkaConsumer:
        """``client_config`` (a connector's worker-level and override settings) replaces ``consumer_config``."""
        self._require(self._admin)
        chosen = self._consumer_config if client_config is None else client_config
        session = int(chosen.get("session_timeout_ms", self.session_timeout_ms))
        client = AIOKafkaConsumer(
            **{
                "bootstrap_servers": self.bootstrap_servers,
                "client_id": f"{self.client_id}-{group_id}",
                "enable_auto_commit": False,
                "auto_offset_reset": "earliest",
                "session_timeout_ms": session,
                "heartbeat_interval_ms": max(session // 3, 100),
                "fetch_max_wait_ms": self.fetch_max_wait_ms,
                # Kafka's default partition.assignment.strategy starts with RangeAssignor (aiokafka's default is
                # round robin): sharing "range" lets a sink's group take over from Java consumers still in it
                "partition_assignment_strategy": (RangePartitionAssignor,),
                **chosen,
                "group_id": group_id,
            }
        )
        consumer = KafkaConsumer(
            client,
            group_id,
            self._consumers.discard,
            prefix="consumer." if client_config is None else "consumer.override.",
        )
        try:
            await start_client(client)
            client.subscribe(
                topics=list(topics),
                listener=RebalanceListener(group_id, on_assign, on_revoke, consumer.validate_assigned),
            )
        except KafkaError as exc:
            with contextlib.suppress(KafkaError):
                await client.stop()
            raise topics_error(exc, f"join group '{group_id}'") from exc
        self._consumers.add(consumer)
        return consumer

    # ---- group administration (KIP-875 sink offsets) ----------------------------------------

    async def group_offsets(self, group_id: str) -> dict[TopicPartition, int]:
        return await self._require(self._admin).group_offsets(group_id)

    async def alter_group_offsets(self, group_id: str, offsets: Mapping[TopicPartition, int | None]) -> None:
        await self._require(self._admin).alter_group_offsets(group_id, offsets)

    async def delete_group(self, group_id: str) -> None:
        await self._require(self._admin).delete_group(group_id)


async def _stop_quietly(client: Any) -> None:
    with contextlib.suppress(KafkaError):
        await client.stop()
