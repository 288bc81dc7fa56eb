"""Apache Kafka for tests, benchmarks and trying the engine: a KRaft node (or a 3-node cluster) started
from Maven Central's jars on free ports of 127.0.0.1, with PLAINTEXT, SSL and SASL listeners.

Needs Java 17+ and Maven on PATH; the first start of a version downloads its jars (then cached).
``python -m engine.testing.kafka`` (``make kafka``) starts one and prints how to reach it.
"""

from __future__ import annotations

from engine.testing.kafka.classpath import KafkaUnavailable, kafka_classpath
from engine.testing.kafka.cluster import DEFAULT_USERS, ApacheKafka, apache_kafka
from engine.testing.kafka.node import KafkaNode

__all__ = [
    "DEFAULT_USERS",
    "ApacheKafka",
    "KafkaNode",
    "KafkaUnavailable",
    "apache_kafka",
    "kafka_classpath",
]
