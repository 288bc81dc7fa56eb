"""Session-wide plugins: the real Spark servers (``tests/spark_servers.py``), Apache Kafka
(``tests/kafka_servers.py``) and schema registry (``tests/schema_registry.py``), each started only
when a test asks."""

pytest_plugins = ("tests.spark_servers", "tests.kafka_servers", "tests.schema_registry")
