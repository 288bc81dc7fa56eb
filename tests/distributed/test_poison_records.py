"""No record on an internal topic can stop a worker or corrupt what it serves (issue 37).

Anyone who can write to the config, status or offsets topic can put any bytes there, and the
compacted topics keep them: a value nested 100,000 deep once ended every worker of a cluster with a
``RecursionError`` (and again after each restart), a JSON ``null`` on the status topic silently ended
a worker's status reader, and a status with an unknown state was served as the task's. Here both
workers of a cluster on Apache Kafka keep running their connectors and serving true statuses, before
and after a restart, with such records on all three topics.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaProducer

from engine.testing.cluster import WorkerCluster, WorkerProcess, poll_until, request
from tests.integration.brokers import Broker

pytestmark = pytest.mark.timeout(240)  # worker processes and real rebalances

DEEP = b"[" * 100_000 + b"]" * 100_000


def poison(connector: str) -> dict[str, list[tuple[bytes, bytes | None]]]:
    """What reached the broker in the report, by internal topic property."""
    status = json.dumps({"state": "EXPLODED", "worker_id": "nobody:1", "generation": 999_999}).encode()
    return {
        "config.storage.topic": [
            (f"connector-{connector}".encode(), DEEP),
            (f"target-state-{connector}".encode(), b"null"),
            (b"connector-garbage", b"\xff\xfe not json"),
            (f"task-{connector}-0".encode(), b'{"properties": "not an object"}'),
        ],
        "status.storage.topic": [
            (f"status-task-{connector}-0".encode(), b"null"),
            (f"status-connector-{connector}".encode(), DEEP),
            (f"status-task-{connector}-0".encode(), status),
            (f"status-task-{connector}-x".encode(), status),
            (f"status-topic-t:connector-{connector}".encode(), b"[1]"),
        ],
        "offset.storage.topic": [
            (json.dumps([connector, {"filename": "x"}]).encode(), DEEP),
            (json.dumps([connector, {"filename": "y"}]).encode(), b"null"),
            (b"not json", b"{}"),
            (b'{"an": "object"}', b"{}"),
        ],
    }


async def write(bootstrap: str, topic: str, records: list[tuple[bytes, bytes | None]]) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, max_request_size=2_000_000)
    await producer.start()
    try:
        for key, value in records:
            await producer.send_and_wait(topic, value, key=key)
    finally:
        await producer.stop()


async def states(worker: WorkerProcess, name: str) -> list[str] | None:
    code, body = await request(worker, "GET", f"/connectors/{name}/status")
    if code != 200:
        return None
    return [body["connector"]["state"], *(t["state"] for t in body["tasks"])]


async def everywhere(workers: list[WorkerProcess], name: str, expected: list[str], what: str) -> None:
    async def agreed() -> bool:
        return all([await states(w, name) == expected for w in workers])

    await poll_until(agreed, timeout=60, interval=0.3, what=what)


async def test_poison_records_on_every_internal_topic_stop_nothing(
    kafka: Broker, cluster: WorkerCluster, tmp_path: Path
) -> None:
    first, second = cluster.start_worker(), cluster.start_worker()
    await cluster.started(first, second)
    source = tmp_path / "in.txt"
    source.write_text("".join(f"line{n}\n" for n in range(10)))
    config: dict[str, Any] = {
        "connector.class": "FileStreamSource",
        "file": str(source),
        "topic": f"poison-{cluster.group}",
        "tasks.max": "1",
    }
    code, body = await request(first, "PUT", "/connectors/src/config", config)
    assert code == 201, body
    await everywhere([first, second], "src", ["RUNNING", "RUNNING"], "src running on both workers")

    for property_name, records in poison("src").items():
        await write(kafka.bootstrap, cluster.topics[property_name], records)

    # the statuses stay true: a change made after the poison is seen by both workers
    code, body = await request(second, "PUT", "/connectors/src/pause")
    assert code == 202, body
    await everywhere([first, second], "src", ["PAUSED", "PAUSED"], "the pause seen by both workers")
    code, body = await request(first, "PUT", "/connectors/src/resume")
    assert code == 202, body
    await everywhere([first, second], "src", ["RUNNING", "RUNNING"], "the resume seen by both workers")
    assert first.alive
    assert second.alive

    # a worker started now reads the poison back from the compacted topics, and serves as well
    second.kill()
    third = cluster.start_worker()
    await cluster.started(third)
    await everywhere([first, third], "src", ["RUNNING", "RUNNING"], "src running after a restart")
    code, body = await request(third, "GET", "/connectors")
    assert (code, body) == (200, ["src"])
    code, body = await request(third, "GET", "/connectors/src/offsets")
    assert code == 200, body
    assert all(o["partition"] == {"filename": str(source)} for o in body["offsets"]), body
    for worker in (first, third):
        log = worker.output()
        assert "configlog.record_skipped" in log
        assert "internal_topic.record_skipped" in log
        assert "RecursionError" not in log
