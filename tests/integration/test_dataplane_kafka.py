"""Records flow source -> topic -> sink through a real broker, and resume after an engine restart."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType

from engine import Engine
from engine.testing import eventually
from tests.integration.brokers import Broker
from tests.rest.sink_offsets_walk import walk_sink_offsets
from tests.worker.probes import SINK, SINKS, SOURCE, SOURCES, records

pytestmark = pytest.mark.integration

STRINGS = {
    "value.converter": "org.apache.kafka.connect.storage.StringConverter",
    "key.converter": "org.apache.kafka.connect.storage.StringConverter",
}


@pytest.fixture(autouse=True)
def _fresh_probes() -> None:
    SOURCES.clear()
    SINKS.clear()


def worker(broker: Broker, tmp_path: Path, suffix: str) -> dict[str, str]:
    return {
        "bootstrap.servers": broker.bootstrap,
        "config.storage.topic": f"configs-{suffix}",
        "offset.storage.file.filename": str(tmp_path / "offsets"),
        "consumer.session.timeout.ms": "6000",
        "task.shutdown.graceful.timeout.ms": "5000",
    }


async def test_records_flow_through_the_broker_and_resume_after_a_restart(
    broker: Broker, tmp_path: Path
) -> None:
    suffix = uuid.uuid4().hex[:10]
    topic = f"orders-{suffix}"
    props = worker(broker, tmp_path, suffix)
    async with Engine(props) as engine:
        await engine.topics.create_topic(topic, 1)
        await engine.create_connector("src", {"connector.class": SOURCE, **STRINGS})
        await engine.create_connector("snk", {"connector.class": SINK, "topics": topic, **STRINGS})
        await engine.wait_for_state("src", "RUNNING", tasks=1)
        SOURCES["src"].feed.put_nowait(records(topic, ["a", "b", "c"]))
        await eventually(lambda: [r.value for r in SINKS["snk"].received] == ["a", "b", "c"], timeout=30)
        metas = [m for _, m in SOURCES["src"].committed_records]
        assert [m.offset for m in metas if m is not None] == [0, 1, 2]
    SOURCES.clear()
    SINKS.clear()
    async with Engine(props) as engine:
        await engine.wait_for_state("src", "RUNNING", tasks=1)
        await eventually(lambda: len(SOURCES["src"].starts) == 1)
        assert SOURCES["src"].starts == [{"n": 3}]
        SOURCES["src"].feed.put_nowait(records(topic, ["d"], start=3))
        await eventually(lambda: [r.value for r in SINKS["snk"].received] == ["d"], timeout=30)
        assert await engine.connector_active_topics("snk") == [topic]


async def broker_group_offsets(broker: Broker, group: str) -> dict[tuple[str, int], int]:
    """The group's committed offsets as the broker itself lists them (OffsetFetch)."""
    admin = AIOKafkaAdminClient(bootstrap_servers=broker.bootstrap)
    await admin.start()
    try:
        listed = await admin.list_consumer_group_offsets(group)
    finally:
        await admin.close()
    return {(tp.topic, tp.partition): meta.offset for tp, meta in listed.items() if meta.offset >= 0}


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", ["kafka", "kafka-3.9"])
async def test_sink_offsets_are_listed_rewound_and_reset_on_a_broker(
    name: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """On Apache Kafka only: tansu's admin ``list_consumer_group_offsets`` breaks the connection (its
    bug), and GET/PATCH/DELETE must agree with the group offsets the broker itself holds."""
    real: Broker = request.getfixturevalue("kafka" if name == "kafka" else "kafka_3_9")
    await walk_sink_offsets(
        tmp_path,
        f"bootstrap.servers={real.bootstrap}\n",
        group_offsets=lambda group: broker_group_offsets(real, group),
    )


async def test_a_source_creates_its_topics_per_kip_158_groups(kafka: Broker, tmp_path: Path) -> None:
    """Partitions, replication factor (-1: the broker's) and topic configs from the first matching group."""
    suffix = uuid.uuid4().hex[:10]
    wide, narrow = f"wide-{suffix}", f"narrow-{suffix}"
    async with Engine(worker(kafka, tmp_path, suffix)) as engine:
        await engine.create_connector(
            "src",
            {
                "connector.class": SOURCE,
                **STRINGS,
                "topic.creation.groups": "wide",
                "topic.creation.wide.include": "wide-.*",
                "topic.creation.wide.partitions": "3",
                "topic.creation.wide.retention.ms": "3600000",
                "topic.creation.default.partitions": "1",
                "topic.creation.default.replication.factor": "-1",
            },
        )
        await engine.wait_for_state("src", "RUNNING", tasks=1)
        SOURCES["src"].feed.put_nowait(records(wide, ["a"]) + records(narrow, ["b"], start=1))
        await eventually(lambda: len(SOURCES["src"].committed_records) == 2, timeout=30)
    admin = AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap)
    await admin.start()
    try:
        described = {t["topic"]: t for t in await admin.describe_topics([wide, narrow])}
        (configs,) = await admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, wide)])
    finally:
        await admin.close()
    assert [len(described[t]["partitions"]) for t in (wide, narrow)] == [3, 1]
    assert {len(p["replicas"]) for t in (wide, narrow) for p in described[t]["partitions"]} == {
        1
    }  # one broker
    retention = next(value for name, value, *_ in configs.resources[0][4] if name == "retention.ms")
    assert retention == "3600000"
