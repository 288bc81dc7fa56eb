"""Creating and checking Connect's internal topics: compacted, and the config topic one partition.

Shared by the config log and the Kafka status and offset stores, which Connect checks the same
way (``TopicAdmin.verifyTopicCleanupPolicyOnlyCompact``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import Any

import structlog
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType
from aiokafka.errors import (
    ClusterAuthorizationFailedError,
    IncompatibleBrokerVersion,
    TopicAlreadyExistsError,
    TopicAuthorizationFailedError,
    UnknownTopicOrPartitionError,
    UnsupportedVersionError,
    for_code,
)
from aiokafka.protocol.metadata import MetadataRequest

from engine.config.kafka_clients.denials import denial
from engine.config.kafka_clients.starting import start_client
from engine.errors import ConfigError, ConfigLogError, InternalTopicError

log = structlog.get_logger(component="topic-admin")

CLEANUP_POLICY = "cleanup.policy"
COMPACT = "compact"
_UNVERIFIABLE = (
    UnsupportedVersionError,
    IncompatibleBrokerVersion,
    TopicAuthorizationFailedError,
    ClusterAuthorizationFailedError,
)
_CREATE_REFUSED = (TopicAuthorizationFailedError, ClusterAuthorizationFailedError)
_METADATA_WAIT_S = 10.0  # how long a topic another worker just created may stay unknown to this broker
AUTOMATIC_CREATION = "internal.topics.automatic.creation.enable"  # KIP-1209 (Kafka 4.4)
CONFIG_PROPERTY = "config.storage.topic"  # the config log's topic: its errors are ConfigLogErrors
# what each internal topic keeps, for the refusal message (Connect's wording per store)
_KEEPS = {
    CONFIG_PROPERTY: "connector configurations",
    "status.storage.topic": "connector and task statuses",
    "offset.storage.topic": "source connector offsets",
}


async def ensure_compacted_topic(
    bootstrap_servers: str,
    topic: str,
    *,
    partitions: int,
    replication_factor: int,
    property_name: str,
    client_id: str,
    single_partition: bool = False,
    client_args: Mapping[str, Any] | None = None,
    create: bool = True,
) -> int:
    """Create ``topic`` compacted if missing, else refuse a non-compacted one; returns its partition count.

    ``single_partition`` (the config topic) also refuses any count but one. ``client_args``: the
    worker's security and connection settings (``engine.config.kafka_clients``). ``create=False``
    (``internal.topics.automatic.creation.enable=false``, KIP-1209): a missing topic is an error in
    Connect's words, and the broker is never asked to create it (not even by auto-creation).
    """
    admin = AIOKafkaAdminClient(
        **{"bootstrap_servers": bootstrap_servers, "client_id": f"{client_id}-admin", **(client_args or {})}
    )
    try:
        await start_client(admin)
        refusal: BaseException | None = None
        try:
            if not create:
                await _require_existing(admin, topic, property_name)
            elif await _create(admin, topic, partitions, replication_factor, property_name):
                return partitions
        except _CREATE_REFUSED as exc:  # Connect's TopicAdmin: assume it exists, as an administrator made it
            log.info(
                "internal_topic.create_not_authorized",
                topic=topic,
                property=property_name,
                reason="falling back to assume the topic exists",
            )
            refusal = exc
        found = await _partitions(admin, topic, property_name, refusal)
        if single_partition and found != 1:
            raise ConfigError(
                f"Topic '{topic}' supplied via the '{property_name}' property is required to have a "
                "single partition in order to guarantee consistency of connector configurations, but found "
                f"{found} partitions.",
                errors={property_name: ["must have a single partition"]},
            )
        await _check_cleanup_policy(admin, topic, property_name)
        return found
    finally:
        await admin.close()


async def _require_existing(admin: Any, topic: str, property_name: str) -> None:
    """KIP-1209: refuse a missing topic with Connect's message (``KafkaTopicBasedBackingStore``)."""
    log.debug("internal_topic.creation_skipped", topic=topic, property=property_name)
    response = await admin._send_request(MetadataRequest([topic], allow_auto_topic_creation=False))
    (described,) = response.to_object()["topics"]
    if for_code(described["error_code"]) is UnknownTopicOrPartitionError:
        raise ConfigError(  # not retriable: the worker stops, as Connect's does
            f"Topic '{topic}' specified via the '{property_name}' property is missing. The config "
            f"'{AUTOMATIC_CREATION}' is set to 'false', so automatic creation of internal topics is "
            "disabled. Either enable automatic creation or create the topics manually.",
            errors={property_name: ["is missing"]},
        )


async def create_internal_topic(
    bootstrap_servers: str,
    topic: str,
    *,
    partitions: int,
    replication_factor: int,
    property_name: str,
    client_id: str,
    settings: Mapping[str, str] | None = None,
    client_args: Mapping[str, Any] | None = None,
) -> bool:
    """Create ``topic`` compacted, with the extra topic ``settings``; False if it already existed (left as
    it is). For ``connect-engine internal-topics create``, as Connect's ``ConnectInternalTopics``."""
    admin = AIOKafkaAdminClient(
        **{"bootstrap_servers": bootstrap_servers, "client_id": f"{client_id}-admin", **(client_args or {})}
    )
    try:
        await start_client(admin)
        return await _create(admin, topic, partitions, replication_factor, property_name, settings)
    finally:
        await admin.close()


async def _create(
    admin: Any,
    topic: str,
    partitions: int,
    replication_factor: int,
    property_name: str,
    settings: Mapping[str, str] | None = None,
) -> bool:
    """Create the topic with Connect's settings; False if it already existed."""
    # -1 is Connect's "broker default"; aiokafka accepts it only alongside an (empty) assignment
    assignments: dict[int, list[int]] | None = {} if replication_factor == -1 else None
    new = NewTopic(
        topic,
        partitions,
        replication_factor,
        replica_assignments=assignments,
        topic_configs={**(settings or {}), CLEANUP_POLICY: COMPACT},
    )
    response = await admin.create_topics([new])
    for _, code, *rest in response.topic_errors:
        error = for_code(code)
        if error in _CREATE_REFUSED:
            raise error()
        if code == 0:
            log.info(
                "internal_topic.created",
                topic=topic,
                property=property_name,
                partitions=partitions,
                replication_factor=replication_factor,
                cleanup_policy=COMPACT,
            )
            return True
        if error is TopicAlreadyExistsError:
            return False
        message = rest[0] if rest and rest[0] else error.__name__
        raise topic_error(
            property_name, topic, f"Could not create {_kind(property_name)} topic '{topic}': {message}"
        )
    raise topic_error(
        property_name,
        topic,
        f"Could not create {_kind(property_name)} topic '{topic}': the broker did not answer for it",
    )


async def _partitions(
    admin: Any, topic: str, property_name: str, refusal: BaseException | None = None
) -> int:
    (described,) = await admin.describe_topics([topic])
    deadline = time.monotonic() + (_METADATA_WAIT_S if refusal is None else 0.0)
    # another worker's creation reached the controller, not yet this broker's metadata (KRaft): ask again
    while for_code(described["error_code"]) is UnknownTopicOrPartitionError and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
        (described,) = await admin.describe_topics([topic])
    if refusal is not None and for_code(described["error_code"]) in (
        UnknownTopicOrPartitionError,
        TopicAuthorizationFailedError,
    ):
        # (a metadata request for a missing topic asks the broker to create it: refused the same way)
        raise topic_error(
            property_name,
            topic,
            f"Could not create {_kind(property_name)} topic '{topic}', and it does not exist: "
            f"{denial(refusal, admin, operation='CREATE', resource=topic)} ({property_name}={topic}; "
            "or have an administrator create it, compacted)",
        )
    if for_code(described["error_code"]) is TopicAuthorizationFailedError:
        raise topic_error(
            property_name,
            topic,
            f"Could not describe {_kind(property_name)} topic '{topic}': "
            f"{denial(TopicAuthorizationFailedError(topic), admin, operation='DESCRIBE', resource=topic)}"
            f" ({property_name}={topic})",
        )
    if described["error_code"] != 0:
        error = for_code(described["error_code"]).__name__
        raise topic_error(
            property_name, topic, f"Could not describe {_kind(property_name)} topic '{topic}': {error}"
        )
    return len(described["partitions"])


async def _check_cleanup_policy(admin: Any, topic: str, property_name: str) -> None:
    """Refuse anything but ``compact``; warn and go on when the broker cannot say (as Connect does)."""
    policy = None
    try:
        # unfiltered: tansu drops the connection when asked for named configs
        deadline = time.monotonic() + _METADATA_WAIT_S
        while True:
            (response,) = await admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])
            ((code, _, _, _, config_entries),) = response.resources
            if for_code(code) is UnknownTopicOrPartitionError and time.monotonic() < deadline:
                await asyncio.sleep(0.2)  # another broker, not told of the topic yet
                continue
            if code != 0:
                raise for_code(code)()
            policy = next((value for name, value, *_ in config_entries if name == CLEANUP_POLICY), None)
            break
    except _UNVERIFIABLE as exc:
        log.warning("internal_topic.cleanup_policy_unverified", topic=topic, reason=describe(exc))
        return
    if policy is None:
        log.warning(
            "internal_topic.cleanup_policy_unverified",
            topic=topic,
            reason="the broker did not report cleanup.policy",
        )
        return
    policies = sorted({p.strip() for p in policy.split(",") if p.strip()})
    if policies != [COMPACT]:
        found = ",".join(policies)
        keeps = _KEEPS.get(property_name, "its records")
        raise ConfigError(
            f"Topic '{topic}' supplied via the '{property_name}' property is required to have "
            f"'{CLEANUP_POLICY}={COMPACT}' to guarantee consistency and durability of {keeps}, but "
            f"found the topic currently has '{CLEANUP_POLICY}={found}'. Continuing "
            f"would likely result in eventually losing {keeps} and problems restarting "
            f"this Connect cluster in the future. Change the '{property_name}' property in the Connect "
            f"worker configurations to use a topic with '{CLEANUP_POLICY}={COMPACT}'.",
            errors={property_name: [f"must have {CLEANUP_POLICY}={COMPACT}"]},
        )


def _kind(property_name: str) -> str:
    return property_name.split(".")[0]


def topic_error(property_name: str, topic: str, message: str) -> InternalTopicError:
    """The error of the internal topic ``property_name`` names: the config topic's is the config log's
    (``ConfigLogError``), the status and offset topics' an ``InternalTopicError``."""
    kind = ConfigLogError if property_name == CONFIG_PROPERTY else InternalTopicError
    return kind(message, topic=topic)


def describe(exc: BaseException) -> str:
    """The error's class and message once (aiokafka's messages often start with the class already)."""
    name, text = type(exc).__name__, str(exc)
    if not text:
        return name
    return text if text.startswith(name) else f"{name}: {text}"


async def kafka_cluster_id(
    bootstrap_servers: str, *, client_id: str, client_args: Mapping[str, Any] | None = None
) -> str:
    """The Kafka cluster's id, as Connect's ``ConnectUtils.lookupKafkaClusterId`` asks the admin client."""
    admin = AIOKafkaAdminClient(
        **{"bootstrap_servers": bootstrap_servers, "client_id": f"{client_id}-admin", **(client_args or {})}
    )
    try:
        await start_client(admin)
        description = await admin.describe_cluster()
        return str(description["cluster_id"])
    finally:
        await admin.close()
