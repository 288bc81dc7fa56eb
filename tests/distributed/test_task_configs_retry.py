"""A follower's task configs the leader did not take are sent again, as Connect's herder retries a
task reconfiguration with a backoff: before, the connector ran with no tasks for good."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from pathlib import Path

import orjson
import pytest

from engine import Engine
from engine.config.worker import WorkerConfig
from engine.distributed.forwarding import RestClient
from engine.errors import ConnectorNotFound
from engine.testing.cluster import WorkerCluster
from tests.distributed.embedded import serving, until
from tests.integration.brokers import Broker

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]


class RefusingFirstRestClient(RestClient):
    """A fake of a leader too busy for a connector's first request: it answers 404 to the first
    task configs of every connector (a status ``forward_task_configs`` does not retry itself), then
    sends for real."""

    def __init__(self, worker: WorkerConfig) -> None:
        super().__init__(worker)
        self.refused: Counter[str] = Counter()

    async def send(
        self, method: str, url: str, *, body: bytes | None, headers: Mapping[str, str], timeout: float
    ) -> tuple[int, bytes, str]:
        if "/tasks" in url and url not in self.refused:
            self.refused[url] += 1
            return 404, orjson.dumps({"error_code": 404, "message": "busy"}), "application/json"
        return await super().send(method, url, body=body, headers=headers, timeout=timeout)


async def test_task_configs_a_leader_refused_are_sent_again(kafka: Broker, tmp_path: Path) -> None:
    group = WorkerCluster(kafka.bootstrap, tmp_path)
    clients: list[RefusingFirstRestClient] = []

    def client(worker: WorkerConfig) -> RefusingFirstRestClient:
        clients.append(RefusingFirstRestClient(worker))
        return clients[-1]

    workers = [
        await serving(group, rest_client=client(WorkerConfig.parse(group.properties(0)))) for _ in range(2)
    ]
    engines = [engine for engine, _ in workers]
    names = [f"src-{n}" for n in range(6)]
    config = {
        "connector.class": "engine.testing.recording.RecordingSourceConnector",
        "tasks.max": "2",
        "topic": "retry-out",
    }
    try:

        async def leader() -> Engine | None:
            found = [e for e in engines if e.cluster is not None and e.cluster.leader == e.cluster.worker_id]
            return found[0] if found else None

        chosen = await until(leader)
        for name in names:
            await chosen.create_connector(name, config)

        async def every_task_runs() -> bool:
            for name in names:
                try:
                    status = await engines[0].connector_status(name)
                except ConnectorNotFound:
                    return False
                if [t["state"] for t in status["tasks"]] != ["RUNNING", "RUNNING"]:
                    return False
            return True

        assert await until(every_task_runs, timeout=90)
        assert sum(sum(c.refused.values()) for c in clients) > 0  # the follower owned some and was refused
    finally:
        for engine, runner in workers:
            await engine.shutdown()
            await runner.cleanup()
