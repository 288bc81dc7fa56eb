"""Multi-worker tests run on noida: it rebalances in about half a second (tansu takes half a
session timeout per join) and it has transactions. A missing broker fails these tests, never skips."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.testing.cluster import WorkerCluster, worker_cluster
from tests.integration.brokers import Broker, running_broker


@pytest.fixture(scope="session")
def noida() -> Iterator[Broker]:
    with running_broker("noida") as started:
        yield started


@pytest.fixture
def cluster(noida: Broker, tmp_path: Path) -> Iterator[WorkerCluster]:
    with worker_cluster(noida.bootstrap, tmp_path) as made:
        yield made
