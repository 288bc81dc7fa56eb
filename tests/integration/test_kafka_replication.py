"""Broker faults, for real: a 3-node Apache Kafka 4.1 cluster, replication factor 3 everywhere
(``min.insync.replicas=2``; the worker's config, offset and status topics created with replication
factor 3 by its ``*.storage.replication.factor`` keys, the data topic by KIP-158 topic creation), and
a distributed worker moving lines FileStreamSource -> topic -> FileStreamSink while a file writer
keeps appending. The leader of the data partition, and separately the leader of the config topic,
is killed with SIGKILL under that load, and started again later.

What must hold, with no help from the test (no restart call, no config change):
- 0 records lost: every line the source's committed offset covers is on the topic (read back from
  the earliest offset), and the sink wrote every one of them at least once;
- the worker and its tasks recover by themselves, and none stays RUNNING while stuck: once the
  killed broker is back, the source's committed offset and the sink's output both advance again
  (progress is the test, not the reported state), and every task ends RUNNING.

And a sink never rewinds: over six rounds under a faster load, the data partition's leader and the
sink group's coordinator are killed in turn; a sink that records the offset of every put may read
again only from where its group had committed before the round (a leader change is no reason to
move a position), and nothing is skipped.

Slow by nature (a 3-node cluster, a broker fenced after ``broker.session.timeout.ms``): about a
minute per test on the 2-core machine, plus the cluster's start.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient

from engine.testing import eventually
from engine.testing.cluster import WorkerCluster, WorkerProcess, poll_until, request, worker_cluster
from engine.testing.kafka import ApacheKafka, apache_kafka

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

STRINGS = {
    "value.converter": "org.apache.kafka.connect.storage.StringConverter",
    "key.converter": "org.apache.kafka.connect.storage.StringConverter",
}
REPLICATED = {f"{store}.storage.replication.factor": "3" for store in ("config", "offset", "status")}
WRITE_EVERY_S = 0.02  # the writer's pace: ~50 lines a second
PROGRESS_TIMEOUT_S = 120.0  # fencing the dead broker, electing leaders, the client's retries


@pytest.fixture(scope="module")
def three_nodes() -> Iterator[ApacheKafka]:
    with apache_kafka(
        "4.1", nodes=3, broker_config={"min.insync.replicas": "2", "unclean.leader.election.enable": "false"}
    ) as kafka:
        yield kafka


@dataclass
class Writer:
    """Appends ``line-N`` to a file at a steady pace until stopped: ``per_tick`` lines a tick."""

    path: Path
    per_tick: int = 1
    written: int = 0
    task: asyncio.Task[None] | None = field(default=None, repr=False)

    async def run(self) -> None:
        with self.path.open("a") as out:
            while True:
                for _ in range(self.per_tick):
                    out.write(f"line-{self.written}\n")
                    self.written += 1
                out.flush()
                await asyncio.sleep(WRITE_EVERY_S)

    def lines(self) -> list[str]:
        return [f"line-{n}" for n in range(self.written)]


@dataclass
class Pipeline:
    kafka: ApacheKafka
    cluster: WorkerCluster
    worker: WorkerProcess
    writer: Writer
    topic: str
    out: Path
    recorded: bool = False  # the sink writes each record's offset with its line (RECORD_OFFSETS)

    def output(self) -> list[str]:
        return self.out.read_text().splitlines() if self.out.exists() else []

    def delivered(self) -> list[str]:
        if not self.recorded:
            return self.output()
        return [m.group(1) for m in map(RECORDED.search, self.output()) if m]

    def delivered_offsets(self) -> list[int]:
        """The topic offset of every record the sink was given, in the order it wrote them."""
        return [int(m.group(2)) for m in map(RECORDED.search, self.output()) if m]

    async def committed_position(self) -> int:
        """The byte position the source's committed offset says was written (0 before any commit)."""
        code, body = await request(self.worker, "GET", "/connectors/src/offsets")
        assert code == 200, body
        return int(body["offsets"][0]["offset"]["position"]) if body["offsets"] else 0

    async def progress(self, what: str) -> None:
        """New data flows end to end: the source commits past the file's end as it is now, and the sink
        writes a line written from now on (what was in flight at the call does not count)."""
        mark, size = self.writer.written, self.writer.path.stat().st_size

        async def moved() -> bool:
            if await self.committed_position() <= size:
                return False
            numbers = [line[5:] for line in self.delivered()[-200:]]  # the last one may be half written
            return any(n.isdigit() and int(n) >= mark for n in numbers)

        await poll_until(moved, timeout=PROGRESS_TIMEOUT_S, interval=0.5, what=what)

    async def states(self) -> dict[str, list[str]]:
        found = {}
        for name in ("src", "snk"):
            code, body = await request(self.worker, "GET", f"/connectors/{name}/status")
            assert code == 200, body
            found[name] = [body["connector"]["state"], *(t["state"] for t in body["tasks"])]
        return found


async def leader_of(kafka: ApacheKafka, topic: str) -> int:
    admin = AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap_servers())
    await admin.start()
    try:
        (described,) = await admin.describe_topics([topic])
    finally:
        await admin.close()
    (partition,) = [p for p in described["partitions"] if p["partition"] == 0]
    return int(partition["leader"])


async def replication_factor(kafka: ApacheKafka, topic: str) -> int:
    admin = AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap_servers())
    await admin.start()
    try:
        (described,) = await admin.describe_topics([topic])
    finally:
        await admin.close()
    return len(described["partitions"][0]["replicas"])


async def topic_values(kafka: ApacheKafka, topic: str) -> list[str]:
    """Everything on partition 0 of ``topic``, from its earliest offset to its end."""
    partition = TopicPartition(topic, 0)
    consumer = AIOKafkaConsumer(
        bootstrap_servers=kafka.bootstrap_servers(),
        enable_auto_commit=False,
        group_id=None,
        auto_offset_reset="earliest",
    )
    await consumer.start()
    try:
        consumer.assign([partition])
        end = (await consumer.end_offsets([partition]))[partition]
        values: list[str] = []
        while await consumer.position(partition) < end:
            for batch in (await consumer.getmany(timeout_ms=500)).values():
                values.extend(r.value.decode() for r in batch)
        return values
    finally:
        await consumer.stop()


# The sink's value becomes a Struct of the line and its topic offset (Connect's own SMTs), which
# FileStreamSink writes as Java prints it, Struct{line=line-N,offset=M}: a sink that records where
# every put came from.
RECORD_OFFSETS = {
    "transforms": "hoist,offset",
    "transforms.hoist.type": "org.apache.kafka.connect.transforms.HoistField$Value",
    "transforms.hoist.field": "line",
    "transforms.offset.type": "org.apache.kafka.connect.transforms.InsertField$Value",
    "transforms.offset.offset.field": "offset",
}
RECORDED = re.compile(r"line=([^,]*),offset=(\d+)")


@contextlib.asynccontextmanager
async def pipeline(
    kafka: ApacheKafka, directory: Path, *, per_tick: int = 1, record_offsets: bool = False
) -> AsyncIterator[Pipeline]:
    tag = uuid.uuid4().hex[:8]
    topic, source_file, out = f"lines-{tag}", directory / "in.txt", directory / "out.txt"
    source_file.touch()
    writer = Writer(source_file, per_tick)
    extra = {**REPLICATED, "offset.flush.interval.ms": "500"}
    with worker_cluster(kafka.bootstrap_servers(), directory, extra=extra) as cluster:
        worker = cluster.start_worker()
        await cluster.started(worker)
        flow = Pipeline(kafka, cluster, worker, writer, topic, out, record_offsets)
        code, body = await request(
            worker,
            "POST",
            "/connectors",
            {
                "name": "src",
                "config": {
                    "connector.class": "FileStreamSource",
                    "file": str(source_file),
                    "topic": topic,
                    **STRINGS,
                    "topic.creation.default.replication.factor": "3",
                    "topic.creation.default.partitions": "1",
                },
            },
        )
        assert code == 201, body
        code, body = await request(
            worker,
            "POST",
            "/connectors",
            {
                "name": "snk",
                "config": {
                    "connector.class": "FileStreamSink",
                    "file": str(out),
                    "topics": topic,
                    **STRINGS,
                    **(RECORD_OFFSETS if record_offsets else {}),
                },
            },
        )
        assert code == 201, body
        writer.task = asyncio.create_task(writer.run())
        try:
            await eventually(
                lambda: len(flow.delivered()) >= 50, timeout=60, what="the first lines through the pipeline"
            )
            yield flow
        finally:
            writer.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await writer.task


async def nothing_lost(flow: Pipeline) -> None:
    """With the writer stopped: the source commits everything written, the topic holds every line
    its committed offset covers, and the sink wrote each of them at least once."""
    assert flow.writer.task is not None
    flow.writer.task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await flow.writer.task
    size = flow.writer.path.stat().st_size

    async def all_committed() -> bool:
        return await flow.committed_position() == size

    await poll_until(
        all_committed,
        timeout=PROGRESS_TIMEOUT_S,
        interval=0.5,
        what="the source's offset committed at the end of the file",
    )
    written = flow.writer.lines()  # the committed position is the file's end: every line is covered
    on_topic = await topic_values(flow.kafka, flow.topic)
    assert [line for line in written if line not in set(on_topic)] == [], "lines lost on the topic"

    async def all_delivered() -> bool:
        return set(written) <= set(flow.delivered())

    await poll_until(
        all_delivered, timeout=PROGRESS_TIMEOUT_S, interval=0.5, what="the sink wrote every line"
    )
    assert await flow.states() == {"src": ["RUNNING", "RUNNING"], "snk": ["RUNNING", "RUNNING"]}
    assert flow.worker.alive, "the worker process itself carried on"


async def survive_the_loss_of(flow: Pipeline, topic: str) -> dict[str, Any]:
    """Kill -9 the leader of ``topic``'s partition 0 under load, let the pipeline carry on with two
    nodes, start the node again, and check progress after each step."""
    victim = await leader_of(flow.kafka, topic)
    flow.kafka.node(victim).kill()
    await flow.progress(f"progress with node {victim} (leader of {topic}) dead")
    new_leader = await leader_of(flow.kafka, topic)
    await asyncio.to_thread(flow.kafka.start_node, victim)
    await flow.progress(f"progress after node {victim} came back")
    return {"killed": victim, "new_leader": new_leader}


async def test_killing_the_leader_of_the_data_partition_loses_nothing(
    three_nodes: ApacheKafka, tmp_path: Path
) -> None:
    async with pipeline(three_nodes, tmp_path) as flow:
        assert await replication_factor(three_nodes, flow.topic) == 3  # KIP-158 topic creation
        for store in ("config", "offset", "status"):
            assert await replication_factor(three_nodes, flow.cluster.topics[f"{store}.storage.topic"]) == 3
        moved = await survive_the_loss_of(flow, flow.topic)
        assert moved["new_leader"] != moved["killed"]
        await nothing_lost(flow)


async def test_killing_the_leader_of_the_config_topic_loses_nothing(
    three_nodes: ApacheKafka, tmp_path: Path
) -> None:
    async with pipeline(three_nodes, tmp_path) as flow:
        config_topic = flow.cluster.topics["config.storage.topic"]
        victim = await leader_of(three_nodes, config_topic)
        three_nodes.node(victim).kill()
        # the config topic is written while its old leader is dead: a pause and a resume go through
        code, body = await request(flow.worker, "PUT", "/connectors/snk/pause", timeout=PROGRESS_TIMEOUT_S)
        assert code == 202, body

        async def paused() -> bool:
            return (await flow.states())["snk"] == ["PAUSED", "PAUSED"]

        await poll_until(
            paused, timeout=PROGRESS_TIMEOUT_S, what="the sink paused with its config leader dead"
        )
        code, body = await request(flow.worker, "PUT", "/connectors/snk/resume", timeout=PROGRESS_TIMEOUT_S)
        assert code == 202, body
        await flow.progress(f"progress with node {victim} (leader of the config topic) dead")
        await asyncio.to_thread(three_nodes.start_node, victim)
        await flow.progress(f"progress after node {victim} came back")
        await nothing_lost(flow)


SINK_GROUP = "connect-snk"
ROUNDS = 6  # three of each kind (ten took 9 of CI's 40 minutes under load)


def java_string_hash(text: str) -> int:
    """``String.hashCode()``: how Kafka places a group on a partition of ``__consumer_offsets``."""
    h = 0
    for char in text.encode("utf-16-be").hex(" ", 2).split():
        h = (31 * h + int(char, 16)) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


async def describe(kafka: ApacheKafka, topics: list[str] | None = None) -> list[dict[str, Any]]:
    admin = AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap_servers())
    await admin.start()
    try:
        return list(await admin.describe_topics(topics))
    finally:
        await admin.close()


async def coordinator_of(kafka: ApacheKafka, group: str) -> int:
    """The node leading the ``__consumer_offsets`` partition of ``group``: its group coordinator."""
    (offsets_topic,) = await describe(kafka, ["__consumer_offsets"])
    count = len(offsets_topic["partitions"])
    hashed = java_string_hash(group)
    partition = 0 if hashed == -(1 << 31) else abs(hashed) % count  # Kafka's Utils.abs
    (found,) = [p for p in offsets_topic["partitions"] if p["partition"] == partition]
    return int(found["leader"])


async def committed_offset(kafka: ApacheKafka, group: str, topic: str) -> int:
    admin = AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap_servers())
    await admin.start()
    try:
        offsets = await admin.list_consumer_group_offsets(group)
    finally:
        await admin.close()
    found = offsets.get(TopicPartition(topic, 0))
    return 0 if found is None or found.offset < 0 else int(found.offset)


async def fully_replicated(kafka: ApacheKafka) -> bool:
    """Every partition of every topic has all its replicas in sync again (a restarted node caught up):
    the next kill then leaves two in sync, as ``min.insync.replicas`` needs."""
    try:
        return all(
            len(p["isr"]) == len(p["replicas"]) for t in await describe(kafka) for p in t["partitions"]
        )
    except Exception:  # the metadata of a cluster in the middle of a change
        return False


def rewinds(offsets: list[int]) -> list[tuple[int, int, int]]:
    """``(index, from, to)`` wherever the sink was given an offset at or below one it had been given
    just before: a re-delivery, and where it went back to."""
    return [(i, offsets[i - 1], offsets[i]) for i in range(1, len(offsets)) if offsets[i] <= offsets[i - 1]]


@pytest.mark.timeout(
    1800
)  # six rounds of kill, fence, elect, restart and catch up: about 2.5 min on a quiet machine
async def test_leader_and_coordinator_kills_never_rewind_the_sink_past_its_commit(
    three_nodes: ApacheKafka, tmp_path: Path
) -> None:
    """Issue 35: a leader change once made the sink seek to offset 0 (a log end that lagged the new
    leader read as records lost) and replay the whole topic. Each round kills, under about 500 lines a
    second, the data partition's leader or the sink group's coordinator (in turn), then starts it
    again; whatever the sink is given again must start at or above the offset its group had committed
    before that round."""
    async with pipeline(three_nodes, tmp_path, per_tick=10, record_offsets=True) as flow:
        rounds: list[dict[str, Any]] = []
        for number in range(ROUNDS):
            await poll_until(
                lambda: fully_replicated(three_nodes),
                timeout=PROGRESS_TIMEOUT_S,
                interval=0.5,
                what=f"every replica in sync before round {number}",
            )
            committed = await committed_offset(three_nodes, SINK_GROUP, flow.topic)
            role = "leader" if number % 2 == 0 else "coordinator"
            victim = (
                await leader_of(three_nodes, flow.topic)
                if role == "leader"
                else await coordinator_of(three_nodes, SINK_GROUP)
            )
            source_position = await flow.committed_position()
            assert source_position >= max((r["source"] for r in rounds), default=0), (
                f"the source's committed offset went back before round {number}: {rounds}"
            )
            rounds.append(
                {
                    "round": number,
                    "kills": role,
                    "node": victim,
                    "committed": committed,
                    "source": source_position,
                    "at": len(flow.output()),
                }
            )
            three_nodes.node(victim).kill()
            await flow.progress(f"round {number}: progress with node {victim} ({role}) dead")
            await asyncio.to_thread(three_nodes.start_node, victim)
            await flow.progress(f"round {number}: progress after node {victim} came back")
        await nothing_lost(flow)

    offsets = flow.delivered_offsets()
    assert len(offsets) == len(flow.output()), "every line the sink wrote names its offset"
    assert set(range(max(offsets) + 1)) <= set(offsets), "offsets skipped by the sink"
    too_far = []
    for index, before, to in rewinds(offsets):
        # the last round that began before this line was written bounds how far back it may go
        bound = max((r["committed"] for r in rounds if r["at"] <= index), default=0)
        if to < bound:
            too_far.append({"line": index, "from": before, "to": to, "committed_before_the_round": bound})
    assert too_far == [], f"the sink went back past its group's commit: {too_far} (rounds: {rounds})"
