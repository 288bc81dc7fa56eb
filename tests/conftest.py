"""Session-wide plugins: the real Spark servers (``tests/spark_servers.py``) and Apache Kafka
(``tests/kafka_servers.py``), each started only when a test asks."""

pytest_plugins = ("tests.spark_servers", "tests.kafka_servers")
