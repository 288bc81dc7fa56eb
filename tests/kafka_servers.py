"""Apache Kafka for the test session (``engine.testing.kafka``): one KRaft node of Kafka 4.1 with every
listener, started on first use and shared by every test that asks, and Kafka 3.9 for the smaller matrix.
A node that cannot start (no java, no mvn, a resolution failure) fails the tests that need it.

Registered as a pytest plugin by ``tests/conftest.py``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from engine.testing.kafka import ApacheKafka, apache_kafka


@pytest.fixture(scope="session")
def kafka41() -> Iterator[ApacheKafka]:
    """Apache Kafka 4.1, one node: PLAINTEXT, SSL, SASL_PLAINTEXT and SASL_SSL, users admin/alice/bob."""
    with apache_kafka("4.1") as kafka:
        yield kafka


@pytest.fixture(scope="session")
def kafka39() -> Iterator[ApacheKafka]:
    """Apache Kafka 3.9, one node, the same listeners and users."""
    with apache_kafka("3.9") as kafka:
        yield kafka
