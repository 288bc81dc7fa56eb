"""Spark jobs the tests run: slow ones only cancellation ends, failing ones.

Everything shipped to executors is a closure, so cloudpickle sends it by value (the Python
workers cannot import ``tests``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any


def slow_partitions(marker: str, seconds_per_row: float = 0.2) -> Callable[[Iterator[int]], Iterator[int]]:
    """A partition function that signals it started (a file) and then takes minutes."""

    def run(rows: Iterator[Any]) -> Iterator[Any]:
        import time as _time

        with open(marker, "a") as f:
            f.write("started\n")
        for row in rows:
            _time.sleep(seconds_per_row)
            yield row

    return run


def long_job(marker: str) -> Callable[[Any], int]:
    """A Spark job of ~100 s (two partitions of 500 rows at 0.2 s) that only cancellation ends."""

    def fn(spark: Any) -> int:
        return int(
            spark.sparkContext.parallelize(range(1000), 2).mapPartitions(slow_partitions(marker)).count()
        )

    return fn


async def wait_started(marker_path: str, timeout: float = 30.0) -> None:
    """Wait until the slow job's Spark action is really executing (not just submitted)."""
    deadline = time.monotonic() + timeout
    while not Path(marker_path).exists():
        if time.monotonic() > deadline:
            raise AssertionError(f"Spark job never started (no {marker_path})")
        await asyncio.sleep(0.05)


def failing_job(message: str) -> Callable[[Any], int]:
    """A job whose partition function raises ValueError(message) on the executors."""

    def fail(rows: Iterator[Any]) -> Iterator[Any]:
        raise ValueError(message)

    def fn(spark: Any) -> int:
        return int(spark.sparkContext.parallelize(range(4), 2).mapPartitions(fail).count())

    return fn


def long_udf_job(marker: str) -> Callable[[Any], int]:
    """As ``long_job`` with DataFrames only (a Python UDF): runs on Spark Connect too, which has no RDDs."""

    def fn(spark: Any) -> int:
        from engine.connectors.spark_sink.store import is_connect

        if is_connect(spark):  # this process also runs a classic session: pick the Connect functions
            from pyspark.sql.connect import functions as F
        else:
            from pyspark.sql import functions as F  # type: ignore[no-redef]

        def slow(value):  # type: ignore[no-untyped-def]  # no hints: Spark would read them as a pandas UDF's
            import time as _time

            with open(marker, "a") as f:
                f.write("started\n")
            _time.sleep(0.2)
            return value

        slow_udf: Any = F.udf(slow, "long")  # pyspark's stubs type a udf as Column | UDF
        row = spark.range(0, 1000, 1, 2).select(slow_udf("id").alias("v")).agg(F.sum("v")).collect()[0]
        return int(row[0])

    return fn
