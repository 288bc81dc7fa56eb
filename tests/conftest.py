"""Session-wide plugins: the real Spark servers (``tests/spark_servers.py``), Apache Kafka
(``tests/kafka_servers.py``) and schema registry (``tests/schema_registry.py``), each started only
when a test asks.

What is integration: a test that needs a real service the session starts (a Spark JVM or server,
a Kafka-protocol broker, Apache Kafka, the logical PostgreSQL) or separate worker processes is
marked ``integration`` here, by the fixtures it uses, so ``make unit`` runs without any of them
and ``make integration`` runs exactly these. Files whose tests start such things themselves (the
demo pipeline on Spark, crash children, RabbitMQ) say so with their own ``pytestmark``.
"""

from __future__ import annotations

import pytest

pytest_plugins = ("tests.spark_servers", "tests.kafka_servers", "tests.schema_registry")

SERVICE_FIXTURES = frozenset({
    "spark",  # tests/connectors/spark_sink: a local SparkSession (a JVM)
    "supervisor",  # tests/spark: the SparkSupervisor's local session
    "spark_connect_url", "spark_master_url", "connect_supervisor",  # Spark Connect server, standalone cluster
    "noida", "tansu", "broker", "kafka41", "kafka39",  # Kafka-protocol brokers, Apache Kafka
    "logical_pg",  # PostgreSQL with wal_level=logical (the CDC source)
    "schema_registry",  # Apicurio Registry (a JVM)
})


@pytest.hookimpl(tryfirst=True)  # before -m selects on the marks
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if SERVICE_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.integration)
