"""Workers for the differential suite, one of each per session: Java Connect and ours, distributed (each
its own group and internal topics on the shared ``kafka41`` broker) and standalone. Java Connect 4.4 (the
API we claim) answers every case; 4.1 the cases that list it (``Case.versions``), started only then.

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


JAVA_VERSIONS = ("4.4", "4.1")  # the Connect release whose API we claim, and the one before it


def _java_standalone(kafka41: ApacheKafka, version: str) -> Iterator[JavaConnect]:
    with java_connect(
        kafka41.bootstrap_servers(), mode="standalone", version=version, worker_config=COMMON
    ) as connect:
        yield connect


@pytest.fixture(scope="session")
def java_standalone44(kafka41: ApacheKafka) -> Iterator[JavaConnect]:
    yield from _java_standalone(kafka41, "4.4")


@pytest.fixture(scope="session")
def java_standalone41(kafka41: ApacheKafka) -> Iterator[JavaConnect]:
    yield from _java_standalone(kafka41, "4.1")


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
def side_pairs() -> dict[tuple[str, str], tuple[Side, Side]]:
    """(mode, Java version) -> (java, ours): each pair made once, by ``sides``."""
    return {}
