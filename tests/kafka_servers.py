"""Apache Kafka for the test session (``engine.testing.kafka``): one KRaft node of Kafka 4.1 with every
listener, started on first use and shared by every test that asks, and Kafka 3.9 for the smaller matrix;
and Java Kafka Connect distributed workers on it, 4.4 (``java_connect44``, the API we claim) and 4.1
(``java_connect41``), for the differential suite.
A node or worker that cannot start (no java, no mvn, a resolution failure) fails the tests that need it.

Registered as a pytest plugin by ``tests/conftest.py``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from engine.testing.kafka import ApacheKafka, apache_kafka
from tests.differential.java_connect import JavaConnect, java_connect
from tests.integration.brokers import Broker


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


def apache_broker(name: str, kafka: ApacheKafka) -> Broker:
    """An Apache Kafka cluster as the suite's ``Broker`` (its first node's PID and its directory)."""
    process = kafka.nodes[0].process
    assert process is not None
    return Broker(name, kafka.bootstrap_servers(), process.pid, kafka.directory)


@pytest.fixture(scope="session")
def kafka(kafka41: ApacheKafka) -> Broker:
    """Apache Kafka 4.1 as a ``Broker``: what the Kafka-facing tests that need not run on the whole
    matrix run on (transactions, group offsets, a worker group that expires a killed member)."""
    return apache_broker("kafka", kafka41)


@pytest.fixture(scope="session")
def kafka_3_9(kafka39: ApacheKafka) -> Broker:
    """Apache Kafka 3.9 as a ``Broker``, for the smaller matrix."""
    return apache_broker("kafka-3.9", kafka39)


@pytest.fixture(scope="session")
def java_connect44(kafka41: ApacheKafka) -> Iterator[JavaConnect]:
    """Java Kafka Connect 4.4 (with 4.1.2's FileStream connectors: Maven Central lacks 4.4.0's), one
    distributed worker on ``kafka41`` (its own group and internal topics; offsets flushed every second)."""
    with java_connect(
        kafka41.bootstrap_servers(), version="4.4", worker_config={"offset.flush.interval.ms": "1000"}
    ) as connect:
        yield connect


@pytest.fixture(scope="session")
def java_connect41(kafka41: ApacheKafka) -> Iterator[JavaConnect]:
    """Java Kafka Connect 4.1, one distributed worker on ``kafka41`` (its own group and internal topics;
    offsets flushed every second). Tests share it: each uses connector names of its own."""
    with java_connect(
        kafka41.bootstrap_servers(), worker_config={"offset.flush.interval.ms": "1000"}
    ) as connect:
        yield connect
