"""One real local SparkSession for the whole test session; missing pyspark or Java fails, never skips."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from pyspark.sql import SparkSession


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    # One SparkContext per process: whichever test module makes it first sets the cores for all.
    # tests/spark keeps two or three slow jobs running side by side, so match its local[6].
    session = (
        SparkSession.builder.master("local[6]")
        .appName("spark-sink-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    yield session
    session.stop()
