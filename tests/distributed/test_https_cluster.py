"""Two distributed workers with only HTTPS listeners that require client certificates: a request
to the follower is forwarded to the leader over HTTPS (the forwarding client trusts the configured
trust store and presents the worker's key store), and so are a follower's task configs."""

from __future__ import annotations

import json
import ssl
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from engine.testing.cluster import WorkerCluster, WorkerProcess, poll_until, request, worker_cluster
from tests.integration.brokers import Broker
from tests.rest.pki import Pki, make_pki

pytestmark = pytest.mark.timeout(240)  # separate worker processes and real rebalances


@pytest.fixture
def https_cluster(kafka: Broker, tmp_path: Path) -> Iterator[tuple[WorkerCluster, Pki]]:
    pki = make_pki(tmp_path / "pki")
    client = ssl.create_default_context(cafile=str(pki.ca_pem))
    client.load_cert_chain(str(pki.client_cert), str(pki.client_key))
    tls = {"ssl.keystore.type": "PEM", "ssl.keystore.location": str(pki.server_pem), "ssl.truststore.type": "PEM",
           "ssl.truststore.location": str(pki.ca_pem), "ssl.client.authentication": "required"}
    with worker_cluster(kafka.bootstrap, tmp_path, scheme="https", tls=client, extra=tls) as made:
        yield made, pki


def leader_of(worker: WorkerProcess) -> str:
    applied = [json.loads(line) for line in worker.output().splitlines() if '"cluster.assignment_applied"' in line]
    return str(applied[-1]["leader"])


def source(cluster: WorkerCluster, tasks: int) -> dict[str, str]:
    return {"connector.class": "engine.testing.recording.RecordingSourceConnector", "tasks.max": str(tasks),
            "topic": "https-out", "test.record.file": str(cluster.record_file)}


async def running(worker: WorkerProcess, name: str, tasks: int) -> dict[str, Any] | None:
    code, body = await request(worker, "GET", f"/connectors/{name}/status")
    if code != 200 or body["connector"]["state"] != "RUNNING":
        return None
    return body if [t["state"] for t in body["tasks"]] == ["RUNNING"] * tasks else None


async def test_forwarding_between_https_workers(https_cluster: tuple[WorkerCluster, Pki]) -> None:
    cluster, _ = https_cluster
    workers = [cluster.start_worker(), cluster.start_worker()]
    await cluster.started(*workers)
    await poll_until(lambda: all('"cluster.assignment_applied"' in w.output() for w in workers) or None)
    leader_id = leader_of(workers[1])
    follower = next(w for w in workers if w.worker_id != leader_id)

    # the follower cannot create a connector itself: it must forward, and the hop is HTTPS
    code, body = await request(follower, "POST", "/connectors?forward=false",
                               {"name": "never", "config": source(cluster, 1)}, retry_conflicts=False)
    assert code == 409, body
    for name in ("one", "two"):
        code, body = await request(follower, "POST", "/connectors", {"name": name, "config": source(cluster, 2)})
        assert code == 201, body
        assert body["name"] == name
    leader = next(w for w in workers if w.worker_id == leader_id)
    statuses = [await poll_until(partial(running, leader, name, 2), timeout=60) for name in ("one", "two")]
    owners = {s["connector"]["worker_id"] for s in statuses}
    # the planner spreads the two connectors: the follower's task configs reached the leader over HTTPS too
    assert owners == {w.worker_id for w in workers}
    assert all('"cluster.task_configs_not_forwarded"' not in w.output() for w in workers)
