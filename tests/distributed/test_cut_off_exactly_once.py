"""Exactly-once sources on real worker processes and Apache Kafka: the worker running a FileStream
source's task is SIGSTOPped past its session and the delay, the other takes the task over (its
producer, with the task's transactional id, fences the stopped one's), and after SIGCONT a
``read_committed`` consumer sees every line once: nothing the zombie sends becomes visible.
"""

from __future__ import annotations

import asyncio
import os
import signal
import uuid
from collections import Counter
from pathlib import Path

import pytest
from aiokafka import AIOKafkaConsumer

from engine.testing.cluster import WorkerProcess, poll_until, request, worker_cluster
from tests.distributed.test_cut_off_worker import assigned_tasks
from tests.integration.brokers import Broker

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

FILE_SOURCE = "engine.connectors.file.FileStreamSourceConnector"
LINES = 30_000
PAUSED_S = 20.0  # past the session (6 s) and the delay (5 s)


async def committed(bootstrap: str, topic: str) -> list[str]:
    """Every value a ``read_committed`` consumer reads from ``topic`` until it stays quiet."""
    consumer = AIOKafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        isolation_level="read_committed",
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    )
    await consumer.start()
    values: list[str] = []
    try:
        while True:
            batch = await consumer.getmany(timeout_ms=3000)
            if not batch:
                return values
            values += [r.value.decode() for records in batch.values() for r in records if r.value is not None]
    finally:
        await consumer.stop()


async def task_worker(worker: WorkerProcess) -> str | None:
    code, body = await request(worker, "GET", "/connectors/src/status", timeout=5)
    if code != 200 or not body["tasks"] or body["tasks"][0]["state"] != "RUNNING":
        return None
    return str(body["tasks"][0]["worker_id"])


async def test_a_sigstopped_exactly_once_source_is_fenced(kafka: Broker, tmp_path: Path) -> None:
    topic, source = f"eos-cut-off-{uuid.uuid4().hex[:8]}", tmp_path / "in.txt"
    source.write_text("".join(f"{n}\n" for n in range(LINES)))
    with worker_cluster(
        kafka.bootstrap, tmp_path, delay_ms=5000, extra={"exactly.once.source.support": "enabled"}
    ) as cluster:
        first, second = cluster.start_worker(), cluster.start_worker()
        await cluster.started(first, second)
        config = {
            "connector.class": FILE_SOURCE,
            "tasks.max": "1",
            "topic": topic,
            "file": str(source),
            "batch.size": "50",
            "exactly.once.support": "required",
            "transaction.boundary": "poll",
            "key.converter": "org.apache.kafka.connect.storage.StringConverter",
            "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        }
        code, body = await request(first, "PUT", "/connectors/src/config", config)
        assert code in (200, 201), body
        owner_id = await poll_until(lambda: task_worker(first), what="the source task running")
        owner, other = (first, second) if owner_id == first.worker_id else (second, first)
        os.killpg(owner.process.pid, signal.SIGSTOP)
        try:
            await poll_until(
                lambda: _moved(other), timeout=60, what="the other worker running the source task"
            )
            await asyncio.sleep(PAUSED_S - 11)
        finally:
            os.killpg(owner.process.pid, signal.SIGCONT)
        await asyncio.sleep(10)  # the resumed worker gives its work up; whatever it sends is fenced
        try:
            values = await poll_until(
                lambda: _all_of(kafka.bootstrap, topic), timeout=120, what="every line committed"
            )
        except AssertionError:
            seen = await committed(kafka.bootstrap, topic)
            statuses = [await request(w, "GET", "/connectors/src/status") for w in (owner, other)]
            raise AssertionError(
                f"{len(set(seen))} of {LINES} lines committed; statuses {statuses}\n"
                + "\n".join([*_story(owner), "----", *_story(other)])
            ) from None
        twice = {v: n for v, n in Counter(values).items() if n > 1}
        assert not twice, f"{len(twice)} lines committed more than once, e.g. {sorted(twice)[:10]}"
        # the healthy copy kept running: the resumed worker fenced nobody (a fenced task FAILs)
        counts = {w.worker_id: await assigned_tasks(w) for w in (owner, other)}
        runner = [w for w, n in counts.items() if n == 1]
        assert len(runner) == 1, counts
        for worker in (owner, other):
            code, status = await request(worker, "GET", "/connectors/src/status")
            assert [(t["state"], t["worker_id"]) for t in status["tasks"]] == [("RUNNING", runner[0])], status
        assert "group.cut_off" in owner.output()


def _story(worker: WorkerProcess) -> list[str]:
    keys = ("group.", "cluster.", "task.", "fenc", "rror")
    return [line[:400] for line in worker.output().splitlines() if any(k in line for k in keys)][-25:]


async def _moved(worker: WorkerProcess) -> bool | None:
    return (await task_worker(worker)) == worker.worker_id or None


async def _all_of(bootstrap: str, topic: str) -> list[str] | None:
    values = await committed(bootstrap, topic)
    return values if len(set(values)) >= LINES else None
