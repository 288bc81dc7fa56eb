"""How the task reaches Spark: the engine's SparkSupervisor when wired, else a local session.

``context.spark.run(fn, *args)`` (engine/spark) runs ``fn(session, *args)`` in a worker thread
with job tags for cancellation. Until every engine wires it, ``_run_local`` stands in; delete it
(and the module-level session) once ``context.spark`` is always present.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


async def run_spark(context: Any, fn: Callable[..., T], *args: Any) -> T:
    runner = getattr(context, "spark", None)
    if runner is not None:
        result: T = await runner.run(fn, *args)
        return result
    return await _run_local(fn, *args)


_session_lock = threading.Lock()


async def _run_local(fn: Callable[..., T], *args: Any) -> T:
    """Fallback: the process's ``local[*]`` session, created lazily, jobs in a worker thread.

    ``getOrCreate`` every time: it is cheap once running, and survives someone stopping it.
    """

    def call() -> T:
        with _session_lock:
            from pyspark.sql import SparkSession

            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
            session = (
                SparkSession.builder.master("local[*]")
                .appName("connect-engine-spark-sink")
                .config("spark.ui.enabled", "false")
                .getOrCreate()
            )
        return fn(session, *args)

    return await asyncio.to_thread(call)
