"""Spark benchmark: the Parquet sink against a bare Spark write, cancel latency on delete, start-up, per mode.

* rows/s: the sink task (put N records, then pre_commit: one write in place, manifests) against a bare
  `spark.createDataFrame(rows).write.parquet(...)` of the same rows, same session, same run.
  Target: >= 0.9x the bare write. On local Spark (`local[2]`), a standalone cluster (one worker,
  2 cores) and a Spark Connect server (`local[2]` inside it), the last two started here from the
  installed pyspark on 127.0.0.1 (`tests/spark_servers.py`) and stopped at the end.
* cancel latency: a task running a Spark job that only cancellation ends; time from
  `delete_connector` to the job having raised (p50/p99), per mode. Target: <= 1 s.
* worker start-up (local): `Engine.start()` with Spark unused, and until a first Spark job has run.

Each mode runs in its own child process (one SparkContext per process).
`--profile` instead prints pyinstrument's profile of one local sink commit and one bare write, both
run in the calling thread so the profiler sees them.

    python bench/spark_sink.py [--rows N] [--modes local,standalone,connect] [--append BENCHMARKS.md]
    python bench/spark_sink.py --profile [--rows N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import structlog

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

from bench.report import append_to
from engine import Engine
from engine.api import SinkRecord, TopicPartition
from engine.api.context import SinkTaskContext
from engine.connectors.spark_sink import SparkParquetSinkTask
from engine.spark import JobOwner, SparkSettings, SparkSupervisor, TaskSpark
from tests.spark.jobs import wait_started

ROOT = Path(__file__).resolve().parent.parent
COMMON = {
    "spark.conf.spark.ui.enabled": "false",
    "spark.conf.spark.ui.showConsoleProgress": "false",
    "spark.conf.spark.sql.shuffle.partitions": "2",
}
WORKER = {"spark.master": "local[2]", **COMMON}
MODES = ("local", "standalone", "connect")
CANCEL_SAMPLES = 10
ROUNDS = 3


def worker_config(mode: str, url: str) -> dict[str, str]:
    if mode == "local":
        return dict(WORKER)
    if mode == "connect":
        return {"spark.remote": url}
    return {
        "spark.master": url,
        **COMMON,
        "spark.conf.spark.driver.host": "127.0.0.1",
        "spark.conf.spark.driver.bindAddress": "127.0.0.1",
        "spark.conf.spark.executor.memory": "1g",
    }


def _rows(n: int) -> list[dict[str, Any]]:
    return [
        {"id": i, "customer": f"c{i % 97}", "amount": i * 0.5, "op": "insert" if i % 3 else "update"}
        for i in range(n)
    ]


class _Inline:
    """A ``context.spark`` that runs the job in the calling thread (for the profiler only)."""

    def __init__(self, spark: Any) -> None:
        self.spark = spark

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        return fn(self.spark, *args)


async def _sink_seconds(runner: Any, rows: list[dict[str, Any]], path: str) -> float:
    props = {
        "name": "bench",
        "topics": "orders",
        "path": path,
        "flush.records": str(len(rows) + 1),
        "task.id": "0",
    }
    context = SinkTaskContext(props)
    tp = TopicPartition("orders", 0)
    context.assigned = {tp}
    context.spark = runner
    task = SparkParquetSinkTask()
    task.initialize(context)
    await task.start(props)
    await task.open([tp])
    records = [
        SinkRecord(topic="orders", kafka_partition=0, kafka_offset=i, value=row) for i, row in enumerate(rows)
    ]
    started = time.perf_counter()
    await task.put(records)
    committed = await task.pre_commit({tp: len(rows)})
    elapsed = time.perf_counter() - started
    assert committed.get(tp) == len(rows), committed
    await task.stop()
    return elapsed


def _bare_write(spark: Any, rows: list[dict[str, Any]], path: str) -> None:
    spark.createDataFrame(rows).write.mode("overwrite").parquet(path)


async def _bare_seconds(supervisor: SparkSupervisor, rows: list[dict[str, Any]], path: str) -> float:
    started = time.perf_counter()
    await supervisor.run(JobOwner("bare", 0, 1), _bare_write, rows, path)
    return time.perf_counter() - started


async def _cancel_latencies(worker: dict[str, str], marker_dir: Path, samples: int) -> list[float]:
    from tests.spark.test_lifecycle_coupling import JOBS
    from tests.spark.test_modes import CONNECTOR  # DataFrame-only slow job: runs on Spark Connect too

    latencies = []
    async with Engine({**worker, "task.shutdown.graceful.timeout.ms": "10000"}) as engine:
        for i in range(samples):
            name = f"cancel-{i}"
            marker = str(marker_dir / f"{name}.started")
            JOBS[name] = {"marker": marker, "outcomes": []}
            await engine.create_connector(name, CONNECTOR)
            await wait_started(marker, timeout=180)
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


async def run_mode(mode: str, url: str, n: int) -> dict[str, Any]:
    """In this process: one mode's throughput pair, cancel latencies and (local) start-up."""
    work = Path(tempfile.mkdtemp(prefix=f"spark-bench-{mode}-"))
    try:
        result: dict[str, Any] = {"mode": mode, "n": n}
        if mode == "local":  # first: measures a cold Spark start in this process
            result["start_without"], result["start_with"] = await _startup()
        worker = worker_config(mode, url)
        supervisor = SparkSupervisor(SparkSettings.from_worker(worker))
        await supervisor.session()
        runner = TaskSpark(supervisor, JobOwner("bench", 0, 1))
        rows = _rows(n)
        await _bare_seconds(
            supervisor, rows[:1000], str(work / "warm")
        )  # JIT, executors, Python workers warm
        await _sink_seconds(runner, rows[:1000], str(work / "warm-sink"))
        sink, bare = [], []
        for i in range(ROUNDS):
            sink.append(await _sink_seconds(runner, rows, str(work / f"sink-{i}")))
            bare.append(await _bare_seconds(supervisor, rows, str(work / f"bare-{i}")))
        await supervisor.shutdown()
        latencies = sorted(await _cancel_latencies(worker, work, CANCEL_SAMPLES))
        result.update(
            sink=n / statistics.median(sink),
            bare=n / statistics.median(bare),
            sink_runs=[n / s for s in sink],
            bare_runs=[n / s for s in bare],
            p50=statistics.median(latencies),
            p99=latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))],
        )
        return result
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run_all(n: int, modes: list[str]) -> list[dict[str, Any]]:
    """Start the servers the modes need, run each mode in a child process, stop the servers."""
    from tests.spark_servers import QUICK_JVM, Server, child_env, start_connect_server, start_standalone

    work = Path(tempfile.mkdtemp(prefix="spark-bench-servers-"))
    servers: list[Server] = []
    results = []
    try:
        for mode in modes:
            url = "local"
            if mode == "standalone":
                master, worker = start_standalone(work / "standalone", cores=2, memory="2g")
                servers += [worker, master]
                url = master.url
            elif mode == "connect":
                connect = start_connect_server(work / "connect")
                servers.append(connect)
                url = connect.url
            env = {
                **child_env(),
                "SPARK_LOCAL_IP": "127.0.0.1",
                "PYTHONPATH": str(ROOT),
                "PYSPARK_PYTHON": sys.executable,
            }
            if mode != "local":
                env["JAVA_TOOL_OPTIONS"] = QUICK_JVM
            done = subprocess.run(
                [sys.executable, __file__, "--child", mode, url, "--rows", str(n)],
                capture_output=True,
                text=True,
                env=env,
                cwd=ROOT,
                check=False,
                timeout=1800,
            )
            if done.returncode != 0:
                raise RuntimeError(f"the {mode} run failed:\n{done.stderr[-3000:]}")
            results.append(json.loads(done.stdout.strip().splitlines()[-1]))
            for server in reversed(servers):
                server.stop()
            servers.clear()
    finally:
        for server in servers:
            server.stop()
        shutil.rmtree(work, ignore_errors=True)
    return results


async def profile(n: int) -> str:
    """pyinstrument's view of one sink commit and one bare write of the same rows, in this thread."""
    from pyinstrument import Profiler

    supervisor = SparkSupervisor(SparkSettings.from_worker(WORKER))
    spark = await supervisor.session()
    work = Path(tempfile.mkdtemp(prefix="spark-bench-profile-"))
    rows = _rows(n)
    inline = _Inline(spark)

    async def bare(path: str) -> float:
        started = time.perf_counter()
        _bare_write(spark, rows, path)
        return time.perf_counter() - started

    cases: list[tuple[str, Callable[[str], Awaitable[float]]]] = [
        ("sink (put + pre_commit)", lambda path: _sink_seconds(inline, rows, path)),
        ("bare write", bare),
    ]
    try:
        _bare_write(spark, rows[:1000], str(work / "warm"))
        await _sink_seconds(inline, rows[:1000], str(work / "warm-sink"))
        out = []
        for i, (label, case) in enumerate(cases):
            profiler = Profiler(interval=0.001, async_mode="disabled")
            profiler.start()
            seconds = await case(str(work / f"p{i}"))
            profiler.stop()
            out.append(f"--- {label}: {seconds:.3f} s\n" + profiler.output_text(unicode=False, color=False))
        return "\n".join(out)
    finally:
        await supervisor.shutdown()
        shutil.rmtree(work, ignore_errors=True)


def _markdown(results: list[dict[str, Any]]) -> str:
    n = results[0]["n"]
    lines = [
        "## Spark: Parquet sink, cancel on delete, start-up (`python bench/spark_sink.py`, run by `make bench`)",
        "",
        f"{n:,} rows of 4 fields, one topic-partition, one commit; median of {ROUNDS}, each mode in its own "
        "process. Baseline in the same run and session: a bare `spark.createDataFrame(rows).write.parquet(...)` of "
        "the same rows. Local: `local[2]` in the process; standalone: a master and one 2-core worker on "
        "127.0.0.1, the driver in the process; Connect: a Spark Connect server (`local[4]`) on 127.0.0.1, "
        "the process only its client. All on the same 2-core machine.",
        "",
        "| mode | sink rows/s | bare write rows/s | sink / bare (target >= 0.9) | delete with a running job: "
        f"p50 / p99 s ({CANCEL_SAMPLES} deletes; target <= 1) |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {r['mode']} | {r['sink']:,.0f} | {r['bare']:,.0f} | {r['sink'] / r['bare']:.2f} | "
        f"{r['p50']:.2f} / {r['p99']:.2f} |"
        for r in results
    ]
    lines.append("")
    lines += [
        f"- {r['mode']} runs (rows/s), sink / bare: {', '.join(f'{v:,.0f}' for v in r['sink_runs'])} / "
        f"{', '.join(f'{v:,.0f}' for v in r['bare_runs'])}"
        for r in results
    ]
    local = next((r for r in results if r["mode"] == "local"), None)
    if local is not None:
        lines += [
            "",
            f"Worker start-up (local): {local['start_without']:.2f} s with Spark unused, "
            f"{local['start_with']:.2f} s until a first Spark job ran.",
        ]
    lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument(
        "--modes", default=",".join(MODES), help="comma-separated: local, standalone, connect"
    )
    parser.add_argument("--append", help="append a markdown section to this file")
    parser.add_argument(
        "--profile", action="store_true", help="print a profile of a local sink commit and bare write"
    )
    parser.add_argument("--child", nargs=2, metavar=("MODE", "URL"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    if args.child:
        print(json.dumps(asyncio.run(run_mode(args.child[0], args.child[1], args.rows))))
        return
    if args.profile:
        print(asyncio.run(profile(args.rows)))
        return
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    unknown = sorted(set(modes) - set(MODES))
    if unknown:
        parser.error(f"--modes: unknown {', '.join(unknown)} (choose from {', '.join(MODES)})")
    report = _markdown(run_all(args.rows, modes))
    print(report)
    append_to(args.append, "\n" + report)


if __name__ == "__main__":
    main()
