"""One real local-mode SparkSupervisor for the whole session: Spark start-up costs seconds.

A missing pyspark or Java fails these tests; it never skips them.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from engine.spark import SparkSettings, SparkSupervisor

os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

# Enough cores for the tests that keep two or three slow jobs running side by side.
WORKER_CONFIG = {
    "spark.master": "local[6]",
    "spark.app.name": "connect-engine-tests",
    "spark.conf.spark.ui.enabled": "false",
    "spark.conf.spark.sql.shuffle.partitions": "2",
}


@pytest.fixture(scope="session")
def supervisor() -> Iterator[SparkSupervisor]:
    try:
        import pyspark  # noqa: F401
    except ImportError as exc:
        pytest.fail(f"pyspark is required for tests/spark: {exc}")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.fail("Java is required for tests/spark (no `java` on PATH and no JAVA_HOME)")
    sup = SparkSupervisor(SparkSettings.from_worker(WORKER_CONFIG))
    yield sup
    asyncio.run(sup.shutdown())


@pytest.fixture
def marker(tmp_path: Path) -> Callable[[], str]:
    """Fresh marker-file paths: a job's executors write to theirs once its action runs."""

    def make() -> str:
        return str(tmp_path / f"started-{uuid.uuid4().hex[:8]}")

    return make
