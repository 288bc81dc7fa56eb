"""A sink on a partition whose log was truncated and refilled past its committed offset (an unclean
leader election on a real 3-node Apache Kafka 4.1) reads again from the divergence point, says so
once, and counts it, as Kafka's own consumer does with leader epochs (KIP-320).

The recipe: the topic's two replicas are nodes 1 (leader) and 2; node 2 stops, so node 1 alone has
the next records (acks=1); the sink reads and commits them; node 1 dies, node 2 comes back and is
elected although out of sync (``unclean.leader.election.enable``); new records refill its shorter
log past the sink's committed offset; node 1 comes back (and truncates its log to node 2's). A plain
position check sees nothing wrong there: the committed offset is inside the log.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog
from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.structs import TopicPartition as KafkaTopicPartition

from engine import Engine
from engine.testing import eventually
from engine.testing.cluster import poll_until
from engine.testing.kafka import ApacheKafka, apache_kafka
from tests.worker.probes import SINK, SINKS

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

STRINGS = {"value.converter": "org.apache.kafka.connect.storage.StringConverter",
           "key.converter": "org.apache.kafka.connect.storage.StringConverter"}


@pytest.fixture
def three_nodes() -> Iterator[ApacheKafka]:
    with apache_kafka("4.1", nodes=3) as kafka:
        yield kafka


async def produce(bootstrap: str, topic: str, values: list[str], *, acks: Any) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks=acks, enable_idempotence=False,
                                request_timeout_ms=10_000)
    await producer.start()
    try:
        for value in values:
            await producer.send_and_wait(topic, value.encode(), partition=0)
    finally:
        await producer.stop()


async def admin_of(bootstrap: str) -> AIOKafkaAdminClient:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10_000)
    await admin.start()
    return admin


async def leader_of(bootstrap: str, topic: str) -> int:
    admin = await admin_of(bootstrap)
    try:
        (described,) = await admin.describe_topics([topic])
        return int(described["partitions"][0]["leader"])
    finally:
        await admin.close()


async def committed(bootstrap: str, group: str, topic: str) -> tuple[int, str] | None:
    admin = await admin_of(bootstrap)
    try:
        offsets = await admin.list_consumer_group_offsets(group)
    finally:
        await admin.close()
    meta = offsets.get(KafkaTopicPartition(topic, 0))
    return None if meta is None else (meta.offset, meta.metadata)


async def test_a_sink_reads_again_what_an_unclean_leader_election_cut_from_under_it(
        three_nodes: ApacheKafka, tmp_path: Path) -> None:
    kafka = three_nodes
    bootstrap = kafka.bootstrap_servers()
    topic = f"cut-{uuid.uuid4().hex[:8]}"
    SINKS.pop("snk", None)
    admin = await admin_of(bootstrap)
    try:
        await admin.create_topics([NewTopic(topic, -1, -1, replica_assignments={0: [1, 2]}, topic_configs={
            "unclean.leader.election.enable": "true", "min.insync.replicas": "1"})])
    finally:
        await admin.close()
    props = {"bootstrap.servers": bootstrap, "config.storage.topic": f"configs-{uuid.uuid4().hex[:8]}",
             "offset.storage.file.filename": str(tmp_path / "offsets"), "offset.flush.interval.ms": "300",
             "task.shutdown.graceful.timeout.ms": "5000"}
    both = [f"both-{n}" for n in range(10)]  # offsets 0..9 on nodes 1 and 2
    lost = [f"lost-{n}" for n in range(10)]  # offsets 10..19 on node 1 only
    refill = [f"refill-{n}" for n in range(15)]  # offsets 10..24 on node 2, after the election

    def received() -> list[str]:
        return [r.value for r in SINKS["snk"].received]

    async with Engine(props) as engine:
        await engine.create_connector("snk", {"connector.class": SINK, "topics": topic, **STRINGS})
        await produce(bootstrap, topic, both, acks="all")
        await eventually(lambda: received() == both, timeout=60, message="the first records delivered")
        kafka.node(2).stop()  # a controlled shutdown: out of the ISR at once
        await produce(bootstrap, topic, lost, acks=1)
        await eventually(lambda: received() == both + lost, timeout=60, message="node 1's records delivered")

        async def committed_20() -> tuple[int, str] | None:
            found = await committed(bootstrap, "connect-snk", topic)
            return found if found is not None and found[0] == 20 else None

        _, metadata = await poll_until(committed_20, timeout=60, what="offset 20 committed")
        assert metadata.startswith("leader_epoch=")  # the epoch of the last record read goes with it
    kafka.node(1).kill()
    kafka.start_node(2)

    async def node_2_leads() -> bool | None:
        try:
            return await leader_of(kafka.node(2).bootstrap("PLAINTEXT"), topic) == 2 or None
        except Exception:
            return None

    await poll_until(node_2_leads, timeout=180, what="node 2 elected (unclean)")
    await produce(kafka.node(2).bootstrap("PLAINTEXT"), topic, refill, acks=1)
    kafka.start_node(1)
    kafka.wait_ready()

    with structlog.testing.capture_logs() as logged:
        async with Engine(props) as engine:
            await engine.wait_for_state("snk", "RUNNING", tasks=1)
            await eventually(lambda: len(received()) >= len(both + lost + refill), timeout=120,
                             message="the refilled records delivered")
    assert received() == both + lost + refill  # without the check: refill-10..14 only, refill-0..9 skipped
    warnings = [e for e in logged if e["event"] == "task.log_truncated"]
    assert len(warnings) == 1, warnings
    (warning,) = warnings
    assert (warning["log_level"], warning["partition"], warning["position"], warning["diverged_at"],
            warning["redelivered"]) == ("warning", f"{topic}-0", 20, 10, 10)
    assert not [e for e in logged if e["event"] == "task.offset_beyond_log_end"]
