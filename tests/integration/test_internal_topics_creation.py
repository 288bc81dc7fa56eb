"""KIP-1209 on Apache Kafka 4.1: ``internal.topics.automatic.creation.enable=false`` makes a missing
internal topic a start-up error in Connect's words (and never asks the broker to auto-create it), and
``connect-engine internal-topics create`` makes the three topics as Connect's ``connect-internal-topics.sh``
does, printing what it prints."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType
from aiokafka.protocol.metadata import MetadataRequest

from engine.config.worker import WorkerConfig
from engine.configlog.factory import open_config_log
from engine.errors import ConfigError
from engine.storage.factory import open_offset_store, open_status_store
from engine.storage.status import Status
from tests.integration.brokers import Broker

pytestmark = pytest.mark.integration

OFF = {"internal.topics.automatic.creation.enable": "false"}


async def _topic(broker: Broker, topic: str) -> tuple[int, dict[str, str]] | None:
    """The topic's partition count and its non-default configs, or None when missing; asked without the
    metadata request's auto-creation, which would make a missing topic exist."""
    admin = AIOKafkaAdminClient(bootstrap_servers=broker.bootstrap)
    await admin.start()
    try:
        response = await admin._send_request(MetadataRequest([topic], allow_auto_topic_creation=False))
        (described,) = response.to_object()["topics"]
        if described["error_code"] == 3:  # UNKNOWN_TOPIC_OR_PARTITION
            return None
        (configs,) = await admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])
    finally:
        await admin.close()
    entries = {name: value for name, value, *_ in configs.resources[0][4]}
    return len(described["partitions"]), entries


def _names() -> dict[str, str]:
    suffix = uuid.uuid4().hex[:10]
    return {
        "offset.storage.topic": f"it-offsets-{suffix}",
        "config.storage.topic": f"it-configs-{suffix}",
        "status.storage.topic": f"it-status-{suffix}",
    }


async def test_without_automatic_creation_a_missing_internal_topic_stops_the_worker_in_connects_words(
    kafka: Broker,
) -> None:
    names = _names()
    worker = {"bootstrap.servers": kafka.bootstrap, "group.id": f"g-{uuid.uuid4().hex[:6]}", **names, **OFF}
    stores = {
        "status.storage.topic": open_status_store(worker, client_id="it"),
        "offset.storage.topic": open_offset_store(worker, client_id="it"),
        "config.storage.topic": open_config_log(WorkerConfig.parse(worker)),
    }
    for property_name, store in stores.items():
        with pytest.raises(ConfigError) as refused:
            await store.open()  # type: ignore[attr-defined]
        assert str(refused.value) == (
            f"Topic '{names[property_name]}' specified via the '{property_name}' property is missing. The "
            "config 'internal.topics.automatic.creation.enable' is set to 'false', so automatic creation of "
            "internal topics is disabled. Either enable automatic creation or create the topics manually."
        )
        assert await _topic(kafka, names[property_name]) is None  # nothing created, not even by the broker


async def test_internal_topics_create_makes_them_as_connects_tool_and_a_worker_then_opens_them(
    kafka: Broker, tmp_path: Path
) -> None:
    names = _names()
    props = tmp_path / "worker.properties"
    props.write_text(
        "\n".join(
            f"{k}={v}"
            for k, v in {
                "bootstrap.servers": kafka.bootstrap,
                **names,
                "offset.storage.partitions": "3",
                "status.storage.partitions": "2",
                "config.storage.partitions": "4",
                "config.storage.cleanup.policy": "delete",
                "config.storage.min.insync.replicas": "1",
                "status.storage.retention.ms": "86400000",
            }.items()
        )
        + "\n"
    )
    command = [sys.executable, "-m", "engine", "internal-topics", "create", "--worker-config", str(props)]
    done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "Parsed arguments and loaded worker properties",
        "Subcommand: create",
        "Ignoring 'config.storage.partitions=4' setting, since config topic partitions is always 1",
        "Ignoring 'config.storage.cleanup.policy=delete' setting, since compaction is always used",
        "Running create command for internal topics",
        "Admin properties loaded for topic admin",
        f"Created internal topic: {names['offset.storage.topic']}",
        f"Created internal topic: {names['config.storage.topic']}",
        f"Created internal topic: {names['status.storage.topic']}",
        "Command executed successfully",
    ]
    found = [await _topic(kafka, names[k]) for k in names]
    offsets, configs, statuses = (topic for topic in found if topic is not None)
    assert (offsets[0], configs[0], statuses[0]) == (3, 1, 2)
    assert {offsets[1]["cleanup.policy"], configs[1]["cleanup.policy"], statuses[1]["cleanup.policy"]} == {
        "compact"
    }
    assert statuses[1]["retention.ms"] == "86400000"  # other <prefix>* keys are topic settings, as in Connect

    again = subprocess.run(command, capture_output=True, text=True, check=False, timeout=120)
    assert again.returncode == 0, again.stderr
    assert [line for line in again.stdout.splitlines() if "Internal topic" in line] == [
        f"Internal topic already exists: {names[k]}" for k in names
    ]

    worker = {"bootstrap.servers": kafka.bootstrap, "group.id": f"g-{uuid.uuid4().hex[:6]}", **names, **OFF}
    status = open_status_store(worker, client_id="it")
    await status.open()
    try:
        status.put_connector("c", Status("RUNNING", "w1:8083", 1))
        await status.flush()
    finally:
        await status.close()
    config_log = open_config_log(WorkerConfig.parse(worker))
    await config_log.open()
    try:
        assert await config_log.append([("k", b"v")]) == 0
    finally:
        await config_log.close()
