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
from collections.abc import Iterator, Mapping, Sequence
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
from engine.topics.commit_metadata import decode
from tests.worker.probes import SINK, SINKS

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

STRINGS = {
    "value.converter": "org.apache.kafka.connect.storage.StringConverter",
    "key.converter": "org.apache.kafka.connect.storage.StringConverter",
}


@pytest.fixture(scope="module")
def three_nodes() -> Iterator[ApacheKafka]:
    """One 3-node cluster for both tests: each uses a topic of its own and leaves every node up."""
    with apache_kafka("4.1", nodes=3) as kafka:
        yield kafka


async def produce(bootstrap: str, topic: str, values: list[str], *, acks: Any) -> None:
    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap, acks=acks, enable_idempotence=False, request_timeout_ms=10_000
    )
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


BOTH = [f"both-{n}" for n in range(10)]  # offsets 0..9 on nodes 1 and 2
LOST = [f"lost-{n}" for n in range(10)]  # offsets 10..19 on node 1 only
REFILL = [f"refill-{n}" for n in range(15)]  # offsets 10..24 on node 2, after the election


def received() -> list[str]:
    return [r.value for r in SINKS["snk"].received]


async def make_topic(bootstrap: str) -> str:
    """One partition on nodes 1 (its leader) and 2, that may elect an out-of-sync replica."""
    topic = f"cut-{uuid.uuid4().hex[:8]}"
    admin = await admin_of(bootstrap)
    try:
        await admin.create_topics(
            [
                NewTopic(
                    topic,
                    -1,
                    -1,
                    replica_assignments={0: [1, 2]},
                    topic_configs={"unclean.leader.election.enable": "true", "min.insync.replicas": "1"},
                )
            ]
        )
    finally:
        await admin.close()
    return topic


def worker(bootstrap: str, tmp_path: Path, **extra: str) -> dict[str, str]:
    return {
        "bootstrap.servers": bootstrap,
        "config.storage.topic": f"configs-{uuid.uuid4().hex[:8]}",
        "offset.storage.file.filename": str(tmp_path / "offsets"),
        "offset.flush.interval.ms": "300",
        "task.shutdown.graceful.timeout.ms": "5000",
        "config.storage.replication.factor": "3",
        **extra,
    }


async def read_and_commit_what_only_node_1_has(kafka: ApacheKafka, engine: Engine, topic: str) -> None:
    bootstrap = kafka.bootstrap_servers()
    await engine.create_connector("snk", {"connector.class": SINK, "topics": topic, **STRINGS})
    await produce(bootstrap, topic, BOTH, acks="all")
    await eventually(lambda: received() == BOTH, timeout=60, message="the first records delivered")
    kafka.node(2).stop()  # a controlled shutdown: out of the ISR at once
    await produce(bootstrap, topic, LOST, acks=1)
    await eventually(lambda: received() == BOTH + LOST, timeout=60, message="node 1's records delivered")

    async def committed_20() -> tuple[int, str] | None:
        found = await committed(bootstrap, "connect-snk", topic)
        return found if found is not None and found[0] == 20 else None

    _, metadata = await poll_until(committed_20, timeout=60, what="offset 20 committed")
    assert decode(metadata).epoch >= 0  # the epoch of the last record read goes with it


async def elect_node_2_uncleanly_and_refill(kafka: ApacheKafka, topic: str) -> None:
    kafka.node(1).kill()
    kafka.start_node(2)
    node_2 = kafka.node(2).bootstrap("PLAINTEXT")

    async def node_2_leads() -> bool | None:
        try:
            return await leader_of(node_2, topic) == 2 or None
        except Exception:
            return None

    await poll_until(node_2_leads, timeout=180, what="node 2 elected (unclean)")
    await produce(node_2, topic, REFILL, acks=1)
    kafka.start_node(1)  # it truncates its log to node 2's and follows
    kafka.wait_ready()


def counted(engine: Engine) -> tuple[float, float]:
    """The task's truncations and the records it read again because of them, from ``/metrics``."""

    def value(name: str) -> float:
        prefix = f'{name}{{connector="snk",task="0"}} '
        return next(
            float(line[len(prefix) :])
            for line in engine.metrics.render().splitlines()
            if line.startswith(prefix)
        )

    return (
        value("connect_engine_sink_task_log_truncations_total"),
        value("connect_engine_sink_task_truncation_redelivered_records_total"),
    )


def the_one_warning(logged: Sequence[Mapping[str, Any]], topic: str) -> None:
    warnings = [e for e in logged if e["event"] == "task.log_truncated"]
    assert len(warnings) == 1, warnings
    (warning,) = warnings
    assert (
        warning["log_level"],
        warning["partition"],
        warning["position"],
        warning["diverged_at"],
        warning["redelivered"],
    ) == ("warning", f"{topic}-0", 20, 10, 10)
    assert not [e for e in logged if e["event"] == "topics.offset_out_of_range"]


async def test_a_restarted_sink_reads_again_what_an_unclean_leader_election_cut_from_under_it(
    three_nodes: ApacheKafka, tmp_path: Path
) -> None:
    """Checked at assignment, from the epoch committed with the offset: the worker is down meanwhile."""
    kafka = three_nodes
    SINKS.pop("snk", None)
    topic = await make_topic(kafka.bootstrap_servers())
    props = worker(kafka.bootstrap_servers(), tmp_path)
    async with Engine(props) as engine:
        await read_and_commit_what_only_node_1_has(kafka, engine, topic)
    await elect_node_2_uncleanly_and_refill(kafka, topic)
    with structlog.testing.capture_logs() as logged:
        async with Engine(props) as engine:
            await engine.wait_for_state("snk", "RUNNING", tasks=1)
            await eventually(
                lambda: len(received()) >= len(BOTH + LOST + REFILL),
                timeout=120,
                message="the refilled records delivered",
            )
            assert counted(engine) == (1, 10)
    assert received() == BOTH + LOST + REFILL  # without the check: refill-10..14 only, refill-0..9 skipped
    the_one_warning(logged, topic)


async def test_a_running_sink_reads_again_what_an_unclean_leader_election_cut_from_under_it(
    three_nodes: ApacheKafka, tmp_path: Path
) -> None:
    """Checked when a fetch returns records of a new leader epoch: the task keeps its assignment (it
    is paused while the log is cut and refilled, then resumed) and is opened once."""
    kafka = three_nodes
    SINKS.pop("snk", None)
    topic = await make_topic(kafka.bootstrap_servers())
    props = worker(kafka.bootstrap_servers(), tmp_path, **{"consumer.session.timeout.ms": "300000"})
    async with Engine(props) as engine:
        await read_and_commit_what_only_node_1_has(kafka, engine, topic)
        await engine.pause_connector("snk")
        await engine.wait_for_state("snk", "PAUSED", tasks=1)
        await elect_node_2_uncleanly_and_refill(kafka, topic)
        with structlog.testing.capture_logs() as logged:
            await engine.resume_connector("snk")
            await eventually(
                lambda: len(received()) >= len(BOTH + LOST + REFILL),
                timeout=120,
                message="the refilled records delivered",
            )
        assert received() == BOTH + LOST + REFILL
        assert len(SINKS["snk"].opened) == 1  # no reassignment: the fetch found it
        assert counted(engine) == (1, 10)
    the_one_warning(logged, topic)
