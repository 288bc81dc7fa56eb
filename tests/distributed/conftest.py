"""Multi-worker tests. Most run on noida: it rebalances in about half a second. Tests that kill a
worker run on tansu, because noida 0.2.3 never expires a SIGKILLed member (measured: still in the
group after 37 s), while tansu does after about session.timeout.ms + 3.5 s. A missing broker fails
these tests, never skips."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.testing.cluster import WorkerCluster, worker_cluster
from tests.integration.brokers import Broker, running_broker

# tansu answers a join after about half a session timeout: keep it short
TANSU_GROUP = {"session.timeout.ms": "4000", "heartbeat.interval.ms": "500", "rebalance.timeout.ms": "8000"}


@pytest.fixture(scope="session")
def noida() -> Iterator[Broker]:
    with running_broker("noida") as started:
        yield started


@pytest.fixture(scope="session")
def tansu() -> Iterator[Broker]:
    with running_broker("tansu") as started:
        yield started


@pytest.fixture
def cluster(noida: Broker, tmp_path: Path) -> Iterator[WorkerCluster]:
    with worker_cluster(noida.bootstrap, tmp_path) as made:
        yield made


@pytest.fixture
def killable_cluster(tansu: Broker, tmp_path: Path) -> Iterator[WorkerCluster]:
    """A cluster whose broker notices a SIGKILLed worker."""
    with worker_cluster(tansu.bootstrap, tmp_path, extra=dict(TANSU_GROUP)) as made:
        yield made
