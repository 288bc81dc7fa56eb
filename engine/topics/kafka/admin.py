"""The Kafka admin role: topics (create, list, describe) and the KIP-875 group administration a sink's
offsets need (list, alter, delete), over one ``AIOKafkaAdminClient``."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

import structlog
from aiokafka import AIOKafkaConsumer
from aiokafka import TopicPartition as KafkaTopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import (
    GroupIdNotFound,
    IncompatibleBrokerVersion,
    KafkaError,
    TopicAlreadyExistsError,
    UnknownTopicOrPartitionError,
    for_code,
)
from aiokafka.protocol.admin import DeleteGroupsRequest

from engine.config.kafka_clients.starting import start_client
from engine.topics.base import TopicPartition
from engine.topics.commit_metadata import CommitMetadata
from engine.topics.errors import GroupNotEmpty, TopicsError, UnknownTopic
from engine.topics.kafka.failures import topics_error
from engine.topics.kafka.identity import identities

log = structlog.get_logger(component="topics")

_INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})


class KafkaAdmin:
    """The worker's admin client (the top-level and ``admin.*`` settings) and what it is asked."""

    def __init__(self, bootstrap_servers: str, client_id: str, admin_config: Mapping[str, Any]) -> None:
        self.bootstrap_servers = bootstrap_servers
        self.client_id = client_id
        self._admin_config = dict(admin_config)
        self._client = self._new_client(self._admin_config)

    def _new_client(self, config: Mapping[str, Any]) -> Any:
        return AIOKafkaAdminClient(
            **{"bootstrap_servers": self.bootstrap_servers, "client_id": f"{self.client_id}-admin", **config}
        )

    async def start(self) -> None:
        """Connect; a failure closes the client and says which cluster could not be reached."""
        try:
            await start_client(self._client)
        except KafkaError as exc:
            await self._client.close()
            raise topics_error(exc, f"connect to {self.bootstrap_servers}") from exc

    async def close(self) -> None:
        await self._client.close()

    # ---- topics ---------------------------------------------------------------------------------

    async def create_topic(
        self,
        name: str,
        partitions: int,
        configs: Mapping[str, str] | None,
        replicas: int,
        client_config: Mapping[str, Any] | None = None,
    ) -> bool:
        """``client_config``: a connector's admin settings (``admin.override.*``), used by an admin client
        made for this call; ``replicas``: -1 for the broker's default."""
        if client_config is None:
            return await self._create_topic(self._client, name, partitions, configs, replicas)
        own = self._new_client(client_config)
        try:
            await start_client(own)
            return await self._create_topic(own, name, partitions, configs, replicas)
        except KafkaError as exc:
            raise topics_error(exc, f"create topic '{name}'") from exc
        finally:
            await own.close()

    async def _create_topic(
        self, admin: Any, name: str, partitions: int, configs: Mapping[str, str] | None, replicas: int
    ) -> bool:
        # -1 means "broker default"; aiokafka accepts it only alongside an (empty) assignment
        assignments: dict[int, list[int]] | None = {} if replicas == -1 else None
        new = NewTopic(
            name, partitions, replicas, replica_assignments=assignments, topic_configs=dict(configs or {})
        )
        try:
            response = await admin.create_topics([new])
        except KafkaError as exc:
            raise topics_error(exc, f"create topic '{name}'") from exc
        for _, code, *rest in response.topic_errors:
            if code == 0:
                log.info(
                    "topics.topic_created", topic=name, partitions=partitions, replication_factor=replicas
                )
                return True
            error = for_code(code)
            if error is TopicAlreadyExistsError:
                return False
            message = rest[0] if rest and rest[0] else error.__name__
            raise TopicsError(f"Could not create topic '{name}': {message}", retriable=bool(error.retriable))
        raise TopicsError(
            f"Could not create topic '{name}': the broker did not answer for it", retriable=True
        )

    async def list_topics(self) -> list[str]:
        admin = self._client
        try:
            names = await admin.list_topics()
        except KafkaError as exc:
            raise topics_error(exc, "list topics") from exc
        return sorted(n for n in names if n not in _INTERNAL_TOPICS)

    async def partitions(self, name: str) -> int:
        admin = self._client
        try:
            (described,) = await admin.describe_topics([name])
        except KafkaError as exc:
            raise topics_error(exc, f"describe topic '{name}'") from exc
        error = for_code(described["error_code"])
        if error is UnknownTopicOrPartitionError:
            raise UnknownTopic(name)
        if described["error_code"] != 0:
            raise TopicsError(
                f"Could not describe topic '{name}': {error.__name__}", retriable=bool(error.retriable)
            )
        return len(described["partitions"])

    # ---- groups (KIP-875 sink offsets) ----------------------------------------------------------

    async def group_offsets(self, group_id: str) -> dict[TopicPartition, int]:
        admin = self._client
        try:
            listed = await admin.list_consumer_group_offsets(group_id)
        except KafkaError as exc:
            raise topics_error(exc, f"list the offsets of group '{group_id}'") from exc
        return {
            TopicPartition(tp.topic, tp.partition): meta.offset
            for tp, meta in listed.items()
            if meta.offset >= 0
        }

    async def alter_group_offsets(self, group_id: str, offsets: Mapping[TopicPartition, int | None]) -> None:
        """aiokafka's admin client has no ``alterConsumerGroupOffsets``/``deleteConsumerGroupOffsets``: the
        offsets are committed by a consumer of the (empty) group, the fallback Kafka documents; a removed
        offset is committed as the partition's log start, which a consumer resumes from just as it
        would with no offset under ``auto.offset.reset=earliest``. Each carries the identity of the
        topic as it is now (``engine.topics.commit_metadata``): the operator set it for this one."""
        await self._require_empty(group_id)
        tps = [KafkaTopicPartition(tp[0], tp[1]) for tp in offsets]
        client = AIOKafkaConsumer(
            **{
                "bootstrap_servers": self.bootstrap_servers,
                "client_id": f"{self.client_id}-offsets-admin",
                **self._admin_config,
                "group_id": group_id,
                "enable_auto_commit": False,
            }
        )
        try:
            await start_client(client)
            client.assign(tps)
            earliest = await client.beginning_offsets(
                [tp for tp, o in zip(tps, offsets.values(), strict=True) if o is None]
            )
            try:
                found = await identities(client._client, {tp.topic for tp in tps})
            except (IncompatibleBrokerVersion, NotImplementedError):
                found = {}
            await client.commit(
                {
                    tp: (
                        earliest[tp] if offset is None else offset,
                        CommitMetadata(identity=found.get(tp.topic)).encode(),
                    )
                    for tp, offset in zip(tps, offsets.values(), strict=True)
                }
            )
        except KafkaError as exc:
            raise topics_error(exc, f"alter the offsets of group '{group_id}'") from exc
        finally:
            with contextlib.suppress(KafkaError):
                await client.stop()

    async def delete_group(self, group_id: str) -> None:
        """Kafka's ``Admin.deleteConsumerGroups``, as Connect resets a sink's offsets; a group that never
        existed is already gone."""
        await self._require_empty(group_id)
        admin = self._client
        try:
            coordinator = await admin.find_coordinator(group_id)
            response = await admin._send_request(DeleteGroupsRequest([group_id]), coordinator)
        except KafkaError as exc:
            raise topics_error(exc, f"delete group '{group_id}'") from exc
        for _, code in response.results:
            error = for_code(code)
            if code and error is not GroupIdNotFound:
                raise TopicsError(
                    f"Could not delete group '{group_id}': {error.__name__}", retriable=bool(error.retriable)
                )

    async def _require_empty(self, group_id: str) -> None:
        admin = self._client
        try:
            (described,) = await admin.describe_consumer_groups([group_id])
        except KafkaError as exc:
            raise topics_error(exc, f"describe group '{group_id}'") from exc
        if _has_members(described):
            raise GroupNotEmpty(group_id)


def _has_members(described: Any) -> bool:
    """Whether a DescribeGroups answer (aiokafka's raw response) shows a live group: its state
    (third field in every version) is neither ``Empty`` nor ``Dead`` (a group never seen)."""
    return any(group[2] not in ("Empty", "Dead", "") for group in getattr(described, "groups", ()))
