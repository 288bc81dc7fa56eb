"""Session-wide plugins: the real Spark servers (``tests/spark_servers.py``), started only when a test asks."""

pytest_plugins = ("tests.spark_servers",)
