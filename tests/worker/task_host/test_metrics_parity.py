"""A task in a task host shows on its worker's ``/metrics`` as it would in-process: two worker
processes run the same pipeline side by side, one with ``task.processes=0`` and one with
``task.processes=2``, and their per-task families (Connect's under Strimzi's names and ours) have
the same names, the same label sets and, for what both count exactly, the same values."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from engine.testing.cluster import WorkerCluster, WorkerProcess, poll_until, request, worker_cluster
from tests.integration.brokers import Broker

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

PER_TASK = (
    "kafka_connect_task_error_",
    "kafka_connect_sink_task_",
    "kafka_connect_source_task_",
    "kafka_connect_connector_task_",
)
GOOD, BAD = 30, 7  # lines the JSON sink converts, and lines it cannot (tolerated, to the DLQ)
STRINGS = {
    "key.converter": "org.apache.kafka.connect.storage.StringConverter",
    "value.converter": "org.apache.kafka.connect.storage.StringConverter",
}
# what both modes count exactly once every line went through: (sample, connector) -> value
EXACT = {
    ("kafka_connect_source_task_source_record_poll_total", "src"): GOOD + BAD,
    ("kafka_connect_source_task_source_record_write_total", "src"): GOOD + BAD,
    ("kafka_connect_sink_task_sink_record_read_total", "text"): GOOD + BAD,
    ("kafka_connect_sink_task_sink_record_send_total", "text"): GOOD + BAD,
    ("kafka_connect_sink_task_sink_record_read_total", "json"): GOOD + BAD,
    ("kafka_connect_sink_task_sink_record_send_total", "json"): GOOD,
    ("kafka_connect_task_error_total_record_failures", "json"): BAD,
    ("kafka_connect_task_error_total_record_errors", "json"): BAD,
    ("kafka_connect_task_error_total_records_skipped", "json"): BAD,
    ("kafka_connect_task_error_total_errors_logged", "json"): BAD,
    ("kafka_connect_task_error_deadletterqueue_produce_requests", "json"): BAD,
    ("kafka_connect_task_error_total_retries", "json"): 0,
    ("kafka_connect_task_error_deadletterqueue_produce_failures", "json"): 0,
}

Series = dict[tuple[str, frozenset[tuple[str, str]]], float]


def per_task(name: str) -> bool:
    return name.startswith(PER_TASK) or (name.startswith("connect_engine_") and "task" in name)


def _pipeline(directory: Path) -> dict[str, dict[str, str]]:
    """FileStream source -> topic -> a FileStream sink, and a JSON-reading sink that tolerates and
    dead-letters the lines that are not JSON."""
    source_file = directory / "in.txt"
    source_file.write_text("")
    topic = f"parity-{uuid.uuid4().hex[:8]}"
    return {
        "src": {"connector.class": "FileStreamSource", "file": str(source_file), "topic": topic, **STRINGS},
        "text": {
            "connector.class": "FileStreamSink",
            "file": str(directory / "text.txt"),
            "topics": topic,
            "consumer.auto.offset.reset": "earliest",
            **STRINGS,
        },
        "json": {
            "connector.class": "FileStreamSink",
            "file": str(directory / "json.txt"),
            "topics": topic,
            "consumer.auto.offset.reset": "earliest",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter.schemas.enable": "false",
            "key.converter": STRINGS["key.converter"],
            "errors.tolerance": "all",
            "errors.log.enable": "true",
            "errors.deadletterqueue.topic.name": f"{topic}-dlq",
            "errors.deadletterqueue.topic.replication.factor": "1",
        },
    }


def _lines() -> list[str]:
    good = [f'{{"n": {i}}}' for i in range(GOOD)]
    bad = [f"not json {i}" for i in range(BAD)]
    return good[:10] + bad + good[10:]


async def _series(worker: WorkerProcess) -> Series:
    async with aiohttp.ClientSession() as session, session.get(worker.url + "/metrics") as response:
        assert response.status == 200
        text = await response.text()
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if per_task(sample.name)
    }


def _value(series: Series, name: str, connector: str) -> float | None:
    found = [v for (n, labels), v in series.items() if n == name and ("connector", connector) in labels]
    return found[0] if len(found) == 1 else None


async def _run(cluster: WorkerCluster, directory: Path) -> tuple[Series, Series]:
    """Start the worker and run the pipeline: its per-task series as soon as every task is RUNNING
    (in-process a task's series exist from its start), and once every line is counted."""
    worker = cluster.start_worker()
    await cluster.started(worker)
    configs = _pipeline(directory)
    for name, config in configs.items():
        status, body = await request(worker, "POST", "/connectors", {"name": name, "config": config})
        assert status == 201, body

    async def running() -> bool:
        for name in configs:
            code, body = await request(worker, "GET", f"/connectors/{name}/status")
            if code != 200 or [t["state"] for t in body["tasks"]] != ["RUNNING"]:
                return False
        return True

    await poll_until(running, timeout=90)
    started = await _series(worker)
    (directory / "in.txt").write_text("".join(line + "\n" for line in _lines()))

    async def counted() -> Series | None:
        series = await _series(worker)
        seen = {key: _value(series, *key) for key in EXACT}
        return series if seen == EXACT else None

    done = await poll_until(counted, timeout=90, interval=0.5, what=f"every line counted ({worker.name})")
    return started, done


async def test_hosted_tasks_have_the_per_task_families_of_in_process_ones(
    kafka: Broker, tmp_path: Path
) -> None:
    (in_process := tmp_path / "in-process").mkdir()
    (hosted := tmp_path / "hosted").mkdir()
    with (
        worker_cluster(kafka.bootstrap, in_process, extra={"task.processes": "0"}) as plain,
        worker_cluster(kafka.bootstrap, hosted, extra={"task.processes": "2"}) as processes,
    ):
        (here_started, here), (there_started, there) = await asyncio.gather(
            _run(plain, in_process), _run(processes, hosted)
        )
        assert "task_host.started" not in plain.workers[0].output()
        assert "task_host.started" in processes.workers[0].output()

    def families(series: Series) -> dict[str, set[frozenset[tuple[str, str]]]]:
        named: dict[str, set[frozenset[tuple[str, str]]]] = {}
        for name, labels in series:
            named.setdefault(name, set()).add(labels)
        return named

    assert families(here_started) == families(here)  # in-process: every family from the task's start
    assert families(there_started) == families(here_started)
    assert families(there) == families(here)
    assert {key: _value(there, *key) for key in EXACT} == EXACT
    # the time of the last error crossed too (not 0: never)
    assert (_value(there, "kafka_connect_task_error_last_error_timestamp", "json") or 0) > 0
