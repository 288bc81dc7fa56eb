"""KIP-507 on a two-worker cluster: the leader writes a session key to the config topic and rotates it;
the internal endpoints refuse unsigned (400) and badly signed (403) requests with Connect's messages
and write nothing; a request signed with the key read from the topic is accepted (its effect read
back); zombie fencing (``PUT /connectors/{c}/fence``) writes Connect's ``tasks-fencing-`` records."""

from __future__ import annotations

import base64
import json
from functools import partial
from typing import Any

import aiohttp
import orjson
import pytest
from aiokafka import AIOKafkaConsumer

from engine.distributed.request_signing import SIGNATURE_ALGORITHM_HEADER, SIGNATURE_HEADER, SessionKey, sign
from engine.testing.cluster import WorkerCluster, WorkerProcess, poll_until, request, worker_cluster
from tests.distributed.test_cluster import running, source_config
from tests.integration.brokers import Broker

pytestmark = pytest.mark.timeout(240)


async def config_records(cluster: WorkerCluster) -> list[tuple[str, Any]]:
    """Every record of the cluster's config topic, as (key, parsed JSON value)."""
    consumer = AIOKafkaConsumer(cluster.topics["config.storage.topic"], bootstrap_servers=cluster.bootstrap,
                                auto_offset_reset="earliest", enable_auto_commit=False)
    await consumer.start()
    try:
        batches = await consumer.getmany(timeout_ms=3000)
        records = [r for batch in batches.values() for r in batch]
        while batches:
            batches = await consumer.getmany(timeout_ms=500)
            records.extend(r for batch in batches.values() for r in batch)
    finally:
        await consumer.stop()
    return [(r.key.decode(), None if r.value is None else json.loads(r.value)) for r in records]


async def session_keys(cluster: WorkerCluster) -> list[dict[str, Any]]:
    return [value for key, value in await config_records(cluster) if key == "session-key"]


async def raw(worker: WorkerProcess, method: str, path: str, body: bytes,
              headers: dict[str, str] | None = None) -> tuple[int, Any]:
    async with aiohttp.ClientSession() as session, session.request(
            method, worker.url + path, data=body,
            headers={"Content-Type": "application/json", **(headers or {})}) as response:
        text = await response.text()
        return response.status, json.loads(text) if text else None


def current_key(keys: list[dict[str, Any]]) -> SessionKey:
    latest = keys[-1]
    return SessionKey(base64.b64decode(latest["key"]), latest["algorithm"], latest["creation-timestamp"])


async def test_internal_requests_must_be_signed_with_the_session_key(kafka: Broker, tmp_path: Any) -> None:
    with worker_cluster(kafka.bootstrap, tmp_path) as cluster:
        first, second = cluster.start_worker(), cluster.start_worker()
        await cluster.started(first, second)
        code, _ = await request(first, "POST", "/connectors", {"name": "src", "config": source_config(cluster, 2)})
        assert code == 201
        await poll_until(lambda: running(first, "src", 2), what="src RUNNING with 2 tasks")  # signed forwarding works
        keys = await poll_until(lambda: _non_empty(session_keys(cluster)), what="a session key in the config topic")
        key = current_key(keys)
        assert key.algorithm == "HmacSHA256"
        assert len(key.key) == 32  # HmacSHA256's default key size
        _, before = await request(first, "GET", "/connectors/src/tasks")
        records_before = await config_records(cluster)

        forged = orjson.dumps([{"task.class": "evil"}])
        for worker in (first, second):  # the leader, and a follower (checked before forwarding)
            code, body = await raw(worker, "POST", "/connectors/src/tasks", forged)
            assert (code, body) == (400, {"error_code": 400, "message": "Internal request missing required signature"})
            wrong = sign(SessionKey(b"\x00" * 32, "HmacSHA256", 0), "HmacSHA256", forged)
            code, body = await raw(worker, "POST", "/connectors/src/tasks", forged, wrong)
            assert (code, body) == (403, {"error_code": 403, "message": "Internal request contained invalid signature."})
            replayed = sign(key, "HmacSHA256", b"[]")  # a real signature, of another body
            code, _ = await raw(worker, "POST", "/connectors/src/tasks", forged, replayed)
            assert code == 403
            other = {**sign(key, "HmacSHA256", forged), SIGNATURE_ALGORITHM_HEADER: "HmacSHA512"}
            code, body = await raw(worker, "POST", "/connectors/src/tasks", forged, other)
            assert code == 400
            assert body["message"].startswith("This worker does not support the 'HmacSHA512' key signing algorithm")
            code, body = await raw(worker, "PUT", "/connectors/src/fence", b"")
            assert (code, body["message"]) == (400, "Internal request missing required signature")
            code, _ = await raw(worker, "PUT", "/connectors/src/fence", b"", {SIGNATURE_HEADER: "AAAA",
                                                                              SIGNATURE_ALGORITHM_HEADER: "HmacSHA256"})
            assert code == 403
        _, after = await request(first, "GET", "/connectors/src/tasks")
        assert after == before
        assert [k for k, _ in await config_records(cluster)] == [k for k, _ in records_before], "nothing was written"

        # signed with the key read from the config topic: accepted, and its effect is there to read
        genuine = orjson.dumps([{"task.class": "engine.testing.recording.RecordingSourceTask", "topic": "dist-out",
                                 "test.record.file": str(cluster.record_file), "marker": "signed"}])
        code, _ = await raw(second, "POST", "/connectors/src/tasks", genuine, sign(key, "HmacSHA256", genuine))
        assert code == 204

        async def one_signed_task() -> list[Any] | None:
            _, tasks = await request(first, "GET", "/connectors/src/tasks")
            return tasks if [t["config"].get("marker") for t in tasks] == ["signed"] else None

        await poll_until(one_signed_task, what="the signed task configs written")


async def _non_empty(awaitable: Any) -> Any:
    found = await awaitable
    return found or None


async def test_the_leader_rotates_the_session_key_after_its_ttl_and_forwarding_follows(kafka: Broker,
                                                                                      tmp_path: Any) -> None:
    with worker_cluster(kafka.bootstrap, tmp_path, extra={"inter.worker.key.ttl.ms": "2000"}) as cluster:
        first, second = cluster.start_worker(), cluster.start_worker()
        await cluster.started(first, second)

        async def rotated() -> list[dict[str, Any]] | None:
            keys = await session_keys(cluster)
            return keys if len({k["key"] for k in keys}) >= 3 else None

        keys = await poll_until(rotated, timeout=60, what="three session keys, two rotations")
        stamps = [k["creation-timestamp"] for k in keys]
        assert stamps == sorted(stamps)
        assert stamps[1] - stamps[0] >= 2000
        # both workers still forward and accept task configs under the newest key
        for name in ("a", "b"):
            code, _ = await request(second, "POST", "/connectors", {"name": name, "config": source_config(cluster, 2)})
            assert code == 201
        for name in ("a", "b"):
            await poll_until(partial(running, first, name, 2), what=f"{name} RUNNING with 2 tasks")


async def test_zombie_fencing_writes_task_count_records_as_connect_does(kafka: Broker, tmp_path: Any) -> None:
    with worker_cluster(kafka.bootstrap, tmp_path) as cluster:
        first, second = cluster.start_worker(), cluster.start_worker()
        await cluster.started(first, second)
        code, _ = await request(first, "POST", "/connectors", {"name": "eos", "config": source_config(cluster, 2)})
        assert code == 201
        await poll_until(lambda: running(first, "eos", 2), what="eos RUNNING with 2 tasks")
        sink = {"connector.class": "engine.testing.recording.RecordingSinkConnector", "topics": "t"}
        code, _ = await request(first, "POST", "/connectors", {"name": "snk", "config": sink})
        assert code == 201
        key = current_key(await poll_until(lambda: _non_empty(session_keys(cluster)), what="a session key"))

        async def fence(worker: WorkerProcess, name: str) -> tuple[int, Any]:
            return await raw(worker, "PUT", f"/connectors/{name}/fence", b"", sign(key, "HmacSHA256", b""))

        async def counts() -> list[tuple[str, Any]]:
            return [(k, v) for k, v in await config_records(cluster) if k.startswith("tasks-fencing-")]

        assert await fence(second, "nope") == (404, {"error_code": 404, "message": "Connector nope not found"})
        assert await fence(second, "snk") == (400, {"error_code": 400, "message": "Connector snk is not a source connector"})
        assert await fence(second, "eos") == (204, None)  # first round: nothing to fence, the count is recorded
        assert await counts() == [("tasks-fencing-eos", {"task-count": 2})]
        assert await fence(first, "eos") == (204, None)  # nothing new since: no round, no record
        assert len(await counts()) == 1

        code, _ = await request(first, "PUT", "/connectors/eos/config", source_config(cluster, 3, name="eos"))
        assert code == 200
        await poll_until(lambda: running(first, "eos", 3), what="eos RUNNING with 3 tasks")
        assert await fence(first, "eos") == (204, None)  # the two producers of the last generation fenced
        assert await counts() == [("tasks-fencing-eos", {"task-count": 2}), ("tasks-fencing-eos", {"task-count": 3})]
