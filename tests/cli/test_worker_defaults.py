"""A worker process's own defaults: ``task.processes`` is the machine's cores for a standalone or
distributed worker on Kafka, while the embedded ``Engine`` and a worker without Kafka keep their
tasks in their own process."""

from __future__ import annotations

import os

from engine.cli.worker_defaults import with_worker_defaults
from engine.worker.data_plane import DataSettings


def test_a_worker_on_kafka_runs_its_tasks_in_a_process_per_core_unless_told() -> None:
    on_kafka = {"bootstrap.servers": "localhost:9092"}
    assert with_worker_defaults(on_kafka)["task.processes"] == str(os.cpu_count())
    assert with_worker_defaults({**on_kafka, "task.processes": "0"})["task.processes"] == "0"
    assert with_worker_defaults({**on_kafka, "task.processes": "3"})["task.processes"] == "3"
    assert on_kafka == {"bootstrap.servers": "localhost:9092"}  # the caller's properties are left alone


def test_without_kafka_and_when_embedded_tasks_stay_in_the_process() -> None:
    assert "task.processes" not in with_worker_defaults({})  # in-process topics: nothing can leave
    assert "task.processes" not in with_worker_defaults({"bootstrap.servers": " "})
    assert DataSettings.parse({"bootstrap.servers": "localhost:9092"}).task_processes == 0  # Engine(...)
