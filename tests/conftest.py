"""Session-wide plugins: the real Spark servers (``tests/spark_servers.py``) and schema registry
(``tests/schema_registry.py``), started only when a test asks."""

pytest_plugins = ("tests.spark_servers", "tests.schema_registry")
