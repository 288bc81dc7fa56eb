"""The cluster id and the topic ids (KIP-516) of a Kafka cluster, which aiokafka's metadata drops.

aiokafka asks Metadata at version 5 at most and keeps neither the cluster id nor any topic id, so this
module builds Metadata version 12 itself (the flexible encoding: compact strings and arrays, tagged
fields; topic ids from version 10, Kafka 2.8) and reads both from the answer. A broker older than
that gives no topic ids: ``identities`` then names none, and positions are kept without one.
"""

from __future__ import annotations

import base64
from collections.abc import Collection
from io import BytesIO
from typing import Any

from aiokafka.errors import for_code
from aiokafka.protocol.api import Request, RequestStruct, Response
from aiokafka.protocol.types import (
    Boolean,
    CompactArray,
    CompactString,
    Int16,
    Int32,
    Schema,
    TaggedFields,
)

from engine.api.identity import TopicIdentity

_NO_TOPIC_ID = bytes(16)
_UNKNOWN_TOPIC_OR_PARTITION = 3


class Uuid:
    """Kafka's UUID: 16 raw bytes on the wire."""

    @classmethod
    def encode(cls, value: bytes) -> bytes:
        return value

    @classmethod
    def decode(cls, data: BytesIO) -> bytes:
        value = data.read(16)
        if len(value) != 16:
            raise ValueError("Buffer underrun decoding a UUID")
        return value


def uuid_text(raw: bytes) -> str:
    """As Kafka's ``Uuid.toString`` prints it: URL-safe base64 without padding (22 characters)."""
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


class _MetadataResponse_v12(Response):  # type: ignore[misc]  # noqa: N801 - aiokafka's naming
    API_KEY = 3
    API_VERSION = 12
    SCHEMA = Schema(
        ("throttle_time_ms", Int32),
        (
            "brokers",
            CompactArray(
                ("node_id", Int32),
                ("host", CompactString("utf-8")),
                ("port", Int32),
                ("rack", CompactString("utf-8")),
                ("tags", TaggedFields),
            ),
        ),
        ("cluster_id", CompactString("utf-8")),
        ("controller_id", Int32),
        (
            "topics",
            CompactArray(
                ("error_code", Int16),
                ("name", CompactString("utf-8")),
                ("topic_id", Uuid),
                ("is_internal", Boolean),
                (
                    "partitions",
                    CompactArray(
                        ("error_code", Int16),
                        ("partition_index", Int32),
                        ("leader_id", Int32),
                        ("leader_epoch", Int32),
                        ("replica_nodes", CompactArray(Int32)),
                        ("isr_nodes", CompactArray(Int32)),
                        ("offline_replicas", CompactArray(Int32)),
                        ("tags", TaggedFields),
                    ),
                ),
                ("topic_authorized_operations", Int32),
                ("tags", TaggedFields),
            ),
        ),
        ("tags", TaggedFields),
    )


class _MetadataRequest_v12(RequestStruct):  # type: ignore[misc]  # noqa: N801
    API_KEY = 3
    API_VERSION = 12
    FLEXIBLE_VERSION = True
    RESPONSE_TYPE = _MetadataResponse_v12
    SCHEMA = Schema(
        (
            "topics",
            CompactArray(("topic_id", Uuid), ("name", CompactString("utf-8")), ("tags", TaggedFields)),
        ),
        ("allow_auto_topic_creation", Boolean),
        ("include_topic_authorized_operations", Boolean),
        ("tags", TaggedFields),
    )


class TopicIdsRequest(Request[_MetadataRequest_v12]):  # type: ignore[misc]
    """Metadata for ``topics`` (never creating one), for their ids and the cluster's."""

    API_KEY = 3

    def __init__(self, topics: Collection[str]) -> None:
        self._topics = sorted(set(topics))

    def build(self, request_struct_class: type[_MetadataRequest_v12]) -> _MetadataRequest_v12:
        return request_struct_class([(_NO_TOPIC_ID, name, {}) for name in self._topics], False, False, {})


def read_identities(response: Any) -> dict[str, TopicIdentity]:
    """Each existing topic's identity in a Metadata answer; a topic the broker does not know is left out."""
    cluster_id = response.cluster_id
    found: dict[str, TopicIdentity] = {}
    if not cluster_id:
        return found
    for error_code, name, topic_id, *_rest in response.topics:
        if error_code == _UNKNOWN_TOPIC_OR_PARTITION or not name or topic_id == _NO_TOPIC_ID:
            continue
        if error_code:
            raise for_code(error_code)(f"Metadata for topic {name}")
        found[name] = TopicIdentity(cluster_id, uuid_text(topic_id))
    return found


async def identities(client: Any, topics: Collection[str]) -> dict[str, TopicIdentity]:
    """The identity of each of ``topics`` that exists; ``client`` is an ``AIOKafkaClient``.

    ``IncompatibleBrokerVersion`` / ``NotImplementedError`` from a broker without Metadata v12."""
    if not topics:
        return {}
    node = client.get_random_node()
    response = await client.send(node, TopicIdsRequest(topics))
    return read_identities(response)
