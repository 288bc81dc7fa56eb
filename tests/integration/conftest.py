"""The brokers the Kafka-facing tests run on, one of each per test session.

``kafka`` (Apache Kafka 4.1) is the broker everything runs on; the smaller matrix (``broker``: the
config log, the stores, the topics contract, the data plane) runs again on Kafka 3.9, the last
release with the old protocol versions and ZooKeeper-era defaults, and on tansu, an imitation that
answers differently where the protocol leaves room. The Apache Kafka nodes are the session's
``kafka41``/``kafka39`` fixtures (tests/kafka_servers.py), shared with every other test that asks.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from tests.integration.brokers import APACHE_KAFKA, BROKERS, Broker, running_broker
from tests.kafka_servers import apache_broker

# the session fixture (tests/kafka_servers.py) that serves each Apache Kafka broker name
SESSION_KAFKA = {"kafka": "kafka41", "kafka-3.9": "kafka39"}
assert set(SESSION_KAFKA) == set(APACHE_KAFKA)


@pytest.fixture(scope="session", params=BROKERS)
def broker(request: pytest.FixtureRequest) -> Iterator[Broker]:
    """A running broker of the matrix; a missing binary or a failed start errors the tests (never a skip)."""
    name = request.param
    if name in SESSION_KAFKA:
        yield apache_broker(name, request.getfixturevalue(SESSION_KAFKA[name]))
        return
    with running_broker(name) as started:
        yield started


@pytest.fixture
def topic() -> str:
    """A topic name no other test uses."""
    return f"connect-configs-{uuid.uuid4().hex[:12]}"
