"""Multi-worker tests, on the session's Apache Kafka 4.1 node (the ``kafka`` fixture of
tests/kafka_servers.py): it expires a SIGKILLed member after ``session.timeout.ms`` (6 s here, the
broker's ``group.min.session.timeout.ms``) and rebalances a joining one at once
(``group.initial.rebalance.delay.ms=0``). Each cluster has its own group and internal topics.
A broker that cannot start fails these tests, never skips.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.testing.cluster import WorkerCluster, worker_cluster
from tests.integration.brokers import Broker


@pytest.fixture
def cluster(kafka: Broker, tmp_path: Path) -> Iterator[WorkerCluster]:
    with worker_cluster(kafka.bootstrap, tmp_path) as made:
        yield made


@pytest.fixture
def killable_cluster(kafka: Broker, tmp_path: Path) -> Iterator[WorkerCluster]:
    """A cluster whose broker notices a SIGKILLed worker (Apache Kafka: after session.timeout.ms)."""
    with worker_cluster(kafka.bootstrap, tmp_path) as made:
        yield made
