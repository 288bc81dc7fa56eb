"""Spark benchmark: the Parquet sink against a bare Spark write, cancel latency on delete, start-up.

* rows/s: the sink task (put N records, then pre_commit: one write in place, manifests) against a bare
  `spark.createDataFrame(rows).write.parquet(...)` of the same rows, same session, same run.
  Target: >= 0.9x the bare write.
* cancel latency: a task running a Spark job that only cancellation ends; time from
  `delete_connector` to the job having raised (p50/p99). Target: <= 1 s.
* worker start-up: `Engine.start()` with Spark unused, and until a first Spark job has run.

    python bench/spark_sink.py [--rows N] [--append BENCHMARKS.md]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import structlog

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

from engine import Engine
from engine.api import SinkRecord, TopicPartition
from engine.api.context import SinkTaskContext
from engine.connectors.spark_sink import SparkParquetSinkTask
from engine.spark import JobOwner, SparkSettings, SparkSupervisor, TaskSpark
from tests.spark.jobs import wait_started

WORKER = {"spark.master": "local[2]", "spark.conf.spark.ui.enabled": "false",
          "spark.conf.spark.ui.showConsoleProgress": "false", "spark.conf.spark.sql.shuffle.partitions": "2"}
CANCEL_SAMPLES = 10


def _rows(n: int) -> list[dict[str, Any]]:
    return [{"id": i, "customer": f"c{i % 97}", "amount": i * 0.5, "op": "insert" if i % 3 else "update"}
            for i in range(n)]


async def _sink_seconds(supervisor: SparkSupervisor, rows: list[dict[str, Any]], path: Path) -> float:
    props = {"name": "bench", "topics": "orders", "path": str(path), "flush.records": str(len(rows) + 1),
             "task.id": "0"}
    context = SinkTaskContext(props)
    tp = TopicPartition("orders", 0)
    context.assigned = {tp}
    context.spark = TaskSpark(supervisor, JobOwner("bench", 0, 1))
    task = SparkParquetSinkTask()
    task.initialize(context)
    await _maybe(task.start(props))
    await _maybe(task.open([tp]))
    records = [SinkRecord(topic="orders", kafka_partition=0, kafka_offset=i, value=row) for i, row in enumerate(rows)]
    started = time.perf_counter()
    await _maybe(task.put(records))
    committed = await task.pre_commit({tp: len(rows)})
    elapsed = time.perf_counter() - started
    assert committed.get(tp) == len(rows), committed
    await _maybe(task.stop())
    return elapsed


async def _maybe(result: Any) -> Any:
    return await result if asyncio.iscoroutine(result) else result


async def _bare_seconds(supervisor: SparkSupervisor, rows: list[dict[str, Any]], path: Path) -> float:
    def write(spark: Any) -> None:
        spark.createDataFrame(rows).write.mode("overwrite").parquet(str(path))

    started = time.perf_counter()
    await supervisor.run(JobOwner("bare", 0, 1), write)
    return time.perf_counter() - started


async def _cancel_latencies(marker_dir: Path) -> list[float]:
    from tests.spark.test_lifecycle_coupling import CONNECTOR, JOBS

    latencies = []
    async with Engine({**WORKER, "task.shutdown.graceful.timeout.ms": "10000"}) as engine:
        for i in range(CANCEL_SAMPLES):
            name = f"cancel-{i}"
            marker = str(marker_dir / f"{name}.started")
            JOBS[name] = {"marker": marker, "outcomes": []}
            await engine.create_connector(name, CONNECTOR)
            await wait_started(marker, timeout=120)
            started = time.perf_counter()
            await engine.delete_connector(name)
            latencies.append(time.perf_counter() - started)
            assert engine.spark.running(name) == 0
    return latencies


async def _startup() -> tuple[float, float]:
    started = time.perf_counter()
    async with Engine({}) as engine:
        without = time.perf_counter() - started
        del engine
    started = time.perf_counter()
    async with Engine(WORKER) as engine:
        await engine.spark.run(JobOwner("startup", 0, 1), lambda spark: spark.range(1).count())
        with_spark = time.perf_counter() - started
    return without, with_spark


async def run(n: int) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="spark-bench-"))
    try:
        without, with_spark = await _startup()  # first: measures a cold Spark start in this process
        supervisor = SparkSupervisor(SparkSettings.from_worker(WORKER))
        await supervisor.session()
        rows = _rows(n)
        await _bare_seconds(supervisor, rows[:1000], work / "warm")  # JIT and Python workers warm
        sink, bare = [], []
        for i in range(3):
            sink.append(await _sink_seconds(supervisor, rows, work / f"sink-{i}"))
            bare.append(await _bare_seconds(supervisor, rows, work / f"bare-{i}"))
        latencies = await _cancel_latencies(work)
        await supervisor.shutdown()
        ordered = sorted(latencies)
        return {"n": n, "sink": n / statistics.median(sink), "bare": n / statistics.median(bare),
                "p50": statistics.median(ordered), "p99": ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))],
                "start_without": without, "start_with": with_spark}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _markdown(r: dict[str, Any]) -> str:
    ratio = r["sink"] / r["bare"]
    return "\n".join([
        "## Spark: Parquet sink, cancel on delete, start-up (`python bench/spark_sink.py`, run by `make bench`)",
        "",
        f"Local Spark (`local[2]`) on a 2-core machine; {r['n']:,} rows; median of 3. Baseline in the same run and "
        "session: a bare `spark.createDataFrame(rows).write.parquet(...)` of the same rows.",
        "",
        "| measure | value | target |",
        "|---|---|---|",
        f"| sink rows/s (put + pre_commit: one write in place, manifests) | {r['sink']:,.0f} | |",
        f"| bare Spark write rows/s | {r['bare']:,.0f} | |",
        f"| sink / bare | {ratio:.2f} | >= 0.9 |",
        f"| delete with a running job: p50 / p99 s ({CANCEL_SAMPLES} deletes) | {r['p50']:.2f} / {r['p99']:.2f} | <= 1 |",
        f"| worker start-up, Spark unused | {r['start_without']:.2f} s | |",
        f"| worker start-up until a first Spark job ran | {r['start_with']:.2f} s | |",
        "",
    ])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--append", help="append a markdown section to this file")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    report = _markdown(asyncio.run(run(args.rows)))
    print(report)
    if args.append:
        with open(args.append, "a", encoding="utf-8") as out:
            out.write("\n" + report)


if __name__ == "__main__":
    main()
