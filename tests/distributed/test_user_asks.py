"""Issue 30's additions in a cluster of worker processes: a source DLQ, rate limits and KIP-995's
``initial_offsets`` on real data, then quiet errors and plugin reloads over REST."""

from __future__ import annotations

import textwrap
from functools import partial
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from engine.testing.cluster import WorkerProcess, poll_until, request, worker_cluster
from tests.integration.brokers import Broker

pytestmark = pytest.mark.timeout(240)  # separate worker processes and real rebalances

FILE_SOURCE = "engine.connectors.file.FileStreamSourceConnector"
FILE_SINK = "engine.connectors.file.FileStreamSinkConnector"
STRINGS = {
    "key.converter": "org.apache.kafka.connect.storage.StringConverter",
    "value.converter": "org.apache.kafka.connect.storage.StringConverter",
}


async def running(worker: WorkerProcess, name: str) -> dict[str, Any] | None:
    code, body = await request(worker, "GET", f"/connectors/{name}/status")
    if code != 200 or body["connector"]["state"] != "RUNNING" or not body["tasks"]:
        return None
    return body if all(t["state"] == "RUNNING" for t in body["tasks"]) else None


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


async def metric(worker: WorkerProcess, name: str, connector: str) -> float | None:
    async with aiohttp.ClientSession() as session, session.get(worker.url + "/metrics") as response:
        text = await response.text()
    prefix = f'{name}{{connector="{connector}",task="0"}} '
    values = [float(line[len(prefix) :]) for line in text.splitlines() if line.startswith(prefix)]
    return values[0] if values else None


async def test_dlq_rate_limits_and_initial_offsets_on_real_data(kafka: Broker, tmp_path: Path) -> None:
    with worker_cluster(kafka.bootstrap, tmp_path) as cluster:
        first, second = cluster.start_worker(), cluster.start_worker()
        await cluster.started(first, second)
        source_file, out_file, dead_file = tmp_path / "in.txt", tmp_path / "out.txt", tmp_path / "dead.txt"
        source_file.write_text("skipped\n" + "".join(f"line{i}\n" for i in range(12)))
        topic, dlq = f"ua-out-{cluster.group}", f"ua-dlq-{cluster.group}"

        # KIP-995 through either worker (a follower forwards the create): the task starts after "skipped"
        offsets = [{"partition": {"filename": str(source_file)}, "offset": {"position": len("skipped\n")}}]
        config = {
            "connector.class": FILE_SOURCE,
            "file": str(source_file),
            "topic": topic,
            "batch.size": "3",
            "record.rate.limit": "20",
            **STRINGS,
        }
        code, info = await request(
            second, "POST", "/connectors", {"name": "paced", "config": config, "initial_offsets": offsets}
        )
        assert code == 201, info
        # the FileStream source checks offsets itself (alter_offsets, as Kafka's does): Connect's short message
        assert info["offsets_status"] == "The offsets for this connector have been altered successfully"
        code, _ = await request(
            first,
            "POST",
            "/connectors",
            {
                "name": "collect",
                "config": {"connector.class": FILE_SINK, "file": str(out_file), "topics": topic, **STRINGS},
            },
        )
        assert code == 201
        await poll_until(
            lambda: _equal(lines(out_file), [f"line{i}" for i in range(12)]), what="12 lines out"
        )
        # 12 records at 20/s in batches of 3: the task waited between polls, and says so
        _, status = await request(first, "GET", "/connectors/paced/status")
        owner = next(w for w in (first, second) if w.worker_id == status["tasks"][0]["worker_id"])

        # a task in a task host: its counters reach the worker's /metrics every second
        async def throttled() -> bool:
            throttles = await metric(owner, "connect_engine_task_throttles_total", "paced")
            return throttles is not None and throttles >= 3

        await poll_until(throttled, timeout=10, what="the paced task's throttles at /metrics")

        # a source DLQ: every line fails ExtractField (a string is not a map) and goes to the DLQ topic
        dlq_config = {
            "connector.class": FILE_SOURCE,
            "file": str(source_file),
            "topic": f"{topic}-x",
            "transforms": "id",
            "transforms.id.field": "id",
            "transforms.id.type": "org.apache.kafka.connect.transforms.ExtractField$Value",
            "errors.tolerance": "all",
            "errors.deadletterqueue.topic.name": dlq,
            "errors.deadletterqueue.topic.replication.factor": "1",
            **STRINGS,
        }
        code, _ = await request(first, "POST", "/connectors", {"name": "failing", "config": dlq_config})
        assert code == 201
        code, _ = await request(
            first,
            "POST",
            "/connectors",
            {
                "name": "dead",
                "config": {"connector.class": FILE_SINK, "file": str(dead_file), "topics": dlq, **STRINGS},
            },
        )
        assert code == 201
        expected = ["skipped", *(f"line{i}" for i in range(12))]
        await poll_until(lambda: _equal(lines(dead_file), expected), what="every line in the DLQ")

        # their offsets were committed: the connector's offsets reach the end of the file
        end = {"position": source_file.stat().st_size}

        async def committed() -> bool | None:
            code, body = await request(second, "GET", "/connectors/failing/offsets")
            return True if code == 200 and [o["offset"] for o in body["offsets"]] == [end] else None

        await poll_until(committed, what="the DLQ'd records' offsets committed")


async def _equal(actual: list[str], expected: list[str]) -> bool | None:
    return True if actual == expected else None


PLUGIN = """
from engine.api import SourceConnector, SourceTask


class LateTask(SourceTask):
    def start(self, props):
        pass

    async def poll(self):
        import asyncio
        await asyncio.sleep(3600)

    def stop(self, connector_deleted=False):
        pass


class LateConnector(SourceConnector):
    def start(self, props):
        pass

    def stop(self):
        pass

    def task_class(self):
        return LateTask

    def task_configs(self, max_tasks):
        return [{}]

    def version(self):
        return "1.0"
"""


async def test_quiet_errors_and_a_plugin_installed_while_the_cluster_runs(
    kafka: Broker, tmp_path: Path
) -> None:
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    extra = {"error.rest.response.message.detail.enabled": "false", "plugin.path": str(plugins)}
    with worker_cluster(kafka.bootstrap, tmp_path, extra=extra) as cluster:
        first, second = cluster.start_worker(), cluster.start_worker()
        await cluster.started(first, second)

        # quiet errors: a failed task's trace is on no worker's REST answers
        config = {
            "connector.class": "engine.testing.recording.RecordingSourceConnector",
            "tasks.max": "2",
            "test.fail.task.start": "true",
            "test.record.file": str(cluster.record_file),
        }
        code, _ = await request(first, "POST", "/connectors", {"name": "broken", "config": config})
        assert code == 201

        async def failed(worker: WorkerProcess) -> dict[str, Any] | None:
            code, body = await request(worker, "GET", "/connectors/broken/status")
            ok = (
                code == 200 and len(body["tasks"]) == 2 and all(t["state"] == "FAILED" for t in body["tasks"])
            )
            return body if ok else None

        for worker in (first, second):
            body = await poll_until(partial(failed, worker), what="both tasks FAILED")
            for task in body["tasks"]:
                assert "injected failure" not in task["trace"]
                assert task["trace"].endswith(f"it is in the log of worker {task['worker_id']}.")
        assert any(
            "injected failure in task-0.start" in w.output() for w in (first, second)
        )  # the log keeps it

        # a plugin installed while both run: reloaded on each, then a connector uses it
        (plugins / "late_plugin").mkdir()
        (plugins / "late_plugin" / "__init__.py").write_text(textwrap.dedent(PLUGIN))
        info = plugins / "late_plugin-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: late-plugin\nVersion: 1.0\n")
        (info / "top_level.txt").write_text("late_plugin\n")
        (info / "entry_points.txt").write_text(
            "[connect_engine.connectors]\nLate = late_plugin:LateConnector\n"
        )
        code, _ = await request(
            first, "POST", "/connectors", {"name": "late", "config": {"connector.class": "Late"}}
        )
        assert code != 201  # not seen yet
        for worker in (first, second):
            code, body = await request(worker, "POST", "/connector-plugins/reload")
            assert code == 200
            assert body["added"] == [
                {"class": "late_plugin.LateConnector", "type": "source", "version": "1.0"}
            ]
        code, created = await request(
            second, "POST", "/connectors", {"name": "late", "config": {"connector.class": "Late"}}
        )
        assert code == 201, created
        await poll_until(lambda: running(first, "late"), what="the late plugin's connector RUNNING")
