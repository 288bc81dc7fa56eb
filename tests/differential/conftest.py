"""Workers for the differential suite, one of each per session: Java Connect 4.1 and ours, distributed
(each its own group and internal topics on the shared ``kafka41`` broker) and standalone.

Our workers are ``python -m engine distributed|standalone`` processes, as users run them.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.testing.cluster import WorkerCluster, worker_cluster
from engine.testing.kafka import ApacheKafka
from engine.testing.kafka.node import HOST, free_port, write_properties
from tests.differential.java_connect import JSON_CONVERTER, JavaConnect, java_connect, rest_call
from tests.differential.rest_diff import Side

# Both sides: JSON converters and a quick offset flush (Java's default is 60 s).
COMMON = {
    "key.converter": JSON_CONVERTER,
    "value.converter": JSON_CONVERTER,
    "offset.flush.interval.ms": "1000",
}


def wait_healthy(url: str, alive: subprocess.Popen[bytes], log: Path, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if alive.poll() is not None:
            raise AssertionError(
                f"worker exited with {alive.returncode}:\n{log.read_text(errors='replace')[-4000:]}"
            )
        with contextlib.suppress(OSError, http.client.HTTPException):
            if rest_call(url, "GET", "/health", timeout=5).status == 200:
                return
        if time.monotonic() > deadline:
            raise AssertionError(f"worker at {url} not healthy:\n{log.read_text(errors='replace')[-4000:]}")
        time.sleep(0.2)


def _side(name: str, url: str, directory: Path, mode: str) -> Side:
    directory.mkdir(parents=True, exist_ok=True)
    return Side(name, url, str(directory), f"diff-{name}-{uuid.uuid4().hex[:6]}", mode)


@pytest.fixture(scope="session")
def ours_distributed(
    kafka41: ApacheKafka, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[WorkerCluster]:
    """One of our distributed workers on ``kafka41``, its own group and topics."""
    directory = tmp_path_factory.mktemp("ours-distributed")
    with worker_cluster(kafka41.bootstrap_servers(), directory, extra=dict(COMMON)) as cluster:
        worker = cluster.start_worker(
            log_level="WARN"
        )  # the Java side's root level (connect-log4j2.properties)
        wait_healthy(worker.url, worker.process, worker.log)
        yield cluster


@pytest.fixture(scope="session")
def java_standalone(kafka41: ApacheKafka) -> Iterator[JavaConnect]:
    with java_connect(kafka41.bootstrap_servers(), mode="standalone", worker_config=COMMON) as connect:
        yield connect


@pytest.fixture(scope="session")
def ours_standalone(kafka41: ApacheKafka, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``python -m engine standalone`` on ``kafka41``: its URL."""
    directory = tmp_path_factory.mktemp("ours-standalone")
    port = free_port()
    props = directory / "worker.properties"
    write_properties(
        props,
        {
            "bootstrap.servers": kafka41.bootstrap_servers(),
            "listeners": f"http://{HOST}:{port}",
            "offset.storage.file.filename": str(directory / "offsets"),
            # its own config topic: with bootstrap.servers our standalone worker keeps its configs in
            # one (Java's keeps them in memory), and any other worker on connect-configs would share them
            "config.storage.topic": f"ours-standalone-configs-{uuid.uuid4().hex[:8]}",
            **COMMON,
        },
    )
    log = directory / "worker.log"
    with log.open("ab") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "engine", "--log-level", "WARN", "standalone", str(props)],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        url = f"http://{HOST}:{port}"
        wait_healthy(url, process, log)
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@pytest.fixture(scope="session")
def distributed_sides(
    java_connect41: JavaConnect, ours_distributed: WorkerCluster, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Side, Side]:
    """(java, ours), both distributed."""
    root = tmp_path_factory.mktemp("differential-distributed")
    return (
        _side("java", java_connect41.url, root / "java", "distributed"),
        _side("ours", ours_distributed.workers[0].url, root / "ours", "distributed"),
    )


@pytest.fixture(scope="session")
def standalone_sides(
    java_standalone: JavaConnect, ours_standalone: str, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Side, Side]:
    """(java, ours), both standalone."""
    root = tmp_path_factory.mktemp("differential-standalone")
    return (
        _side("java", java_standalone.url, root / "java", "standalone"),
        _side("ours", ours_standalone, root / "ours", "standalone"),
    )
