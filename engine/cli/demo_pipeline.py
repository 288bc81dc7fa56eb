"""``make run``: the demo pipeline, a standalone worker moving SQLite rows into Parquet through Spark.

A generator inserts orders into an embedded SQLite database; the audit-table source captures
them through the triggers it provisioned; records go through the in-process topics to the Spark
Parquet sink, which commits files and offsets together. The worker serves the REST API, so the
pipeline can be paused, stopped, resumed, restarted and deleted while it runs (README: "The demo
pipeline").
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import os
import random
import shutil
import signal
import sqlite3
import sys
import time
from pathlib import Path

from engine.cli.standalone import StandaloneWorker
from engine.engine import Engine
from engine.errors import ConnectorNotFound

SOURCE = "orders-audit"
SINK = "orders-parquet"
JSON = {"key.converter": "org.apache.kafka.connect.json.JsonConverter", "key.converter.schemas.enable": "false",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "false"}
# everything a pipeline keeps in its directory (``--reset`` removes exactly these)
STATE_FILES = ("shop.db", "shop.db-journal", "shop.db-wal", "shop.db-shm", "topics.jsonl", "offsets", "configs")
STATE_DIRS = ("parquet",)
# a source whose connector is in one of these has not run start() yet: its triggers may not exist
_NOT_STARTED = ("UNASSIGNED", "RESTARTING")


def reset(workdir: Path) -> list[str]:
    """Remove what an earlier run left in ``workdir`` (only the pipeline's own files); the names removed."""
    removed = []
    for name in STATE_FILES:
        path = workdir / name
        if path.is_file():
            path.unlink()
            removed.append(name)
    for name in STATE_DIRS:
        path = workdir / name
        if path.is_dir():
            shutil.rmtree(path)
            removed.append(name)
    with contextlib.suppress(OSError):  # left alone when it holds anything else
        workdir.rmdir()
    return removed


def _prepare(db: Path) -> None:
    db.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS orders (id INTEGER PRIMARY KEY, customer TEXT, amount REAL)")


async def _wait_until_capturing(engine: Engine, stop: asyncio.Event, timeout: float = 60.0) -> None:
    """Return once the source connector's ``start()`` has run (so its triggers exist), or it is not to
    run (paused, stopped, failed): an order inserted before the triggers would never be captured."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not stop.is_set():
        try:
            state = (await engine.connector_status(SOURCE))["connector"]["state"]
        except ConnectorNotFound:
            state = "UNASSIGNED"
        if state not in _NOT_STARTED:
            return
        await asyncio.sleep(0.05)


async def _start_spark(engine: Engine) -> None:
    """Start Spark now rather than at the sink's first commit, and say so: its start takes seconds."""
    _say("Spark is starting (10-30 s); rows reach Parquet once it is up ...\n")
    started = time.monotonic()
    try:
        await engine.spark.session()
    except Exception as exc:  # e.g. no Java: the sink's task fails with the same error as its trace
        _say(f"Spark did not start: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}\n")
        return
    _say(f"Spark is up ({time.monotonic() - started:.0f} s); its first write takes a few seconds more\n")


async def _generate(db: Path, every_s: float) -> None:
    """Insert an order every ``every_s`` seconds, in a thread (SQLite calls block)."""
    customers = ["ada", "grace", "alan", "edsger", "barbara"]

    def insert() -> None:
        with sqlite3.connect(db) as conn:
            conn.execute("INSERT INTO orders (customer, amount) VALUES (?, ?)",
                         (random.choice(customers), round(random.uniform(5, 500), 2)))

    while True:
        await asyncio.to_thread(insert)
        await asyncio.sleep(every_s)


def _say(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def count_orders(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT count(*) FROM orders").fetchone()[0])


def parquet_rows(output: Path) -> int:
    """Rows the sink has committed: the sum over its manifests (what readers may read)."""
    total = 0
    for manifest in (output / "_manifests").glob("*/*.json"):
        try:
            total += int(json.loads(manifest.read_text()).get("rows", 0))
        except (OSError, ValueError):
            continue
    return total


async def run_pipeline(workdir: Path, port: int, duration: float | None, every_s: float = 0.5) -> int:
    db, output = workdir / "shop.db", workdir / "parquet"
    await asyncio.to_thread(_prepare, db)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    worker = StandaloneWorker({
        "listeners": f"http://127.0.0.1:{port}",
        "offset.flush.interval.ms": "3000",
        # Spark's first write cannot be cancelled while it is being planned (seconds on a cold JVM): a
        # stop then waits for it rather than abandon the task with its final commit undone
        "task.shutdown.graceful.timeout.ms": "30000",
        "topics.storage.file.filename": str(workdir / "topics.jsonl"),
        "offset.storage.file.filename": str(workdir / "offsets"),
        "config.storage.file.filename": str(workdir / "configs"),
        "spark.master": "local[2]",
        "spark.conf.spark.sql.shuffle.partitions": "2",
        "spark.conf.spark.ui.showConsoleProgress": "false",
    })
    try:
        await worker.start()
    except BaseException:
        await worker.stop()  # the engine started before the REST port failed to bind
        raise
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    spark: asyncio.Task[None] | None = None
    generator: asyncio.Task[None] | None = None
    try:
        await _create_connectors(worker.engine, db, output)
        _say(f"""connect-engine demo pipeline
  REST API      {worker.bound[0]}    (try: curl -s {worker.bound[0]}/connectors/{SOURCE}/status)
  SQLite source {db}    (a generator inserts an order every {every_s} s)
  Parquet out   {output}    (committed rows are listed in {output}/_manifests)
  Ctrl-C stops the worker; run it again and it carries on where it stopped (--reset starts afresh).
""")
        spark = asyncio.create_task(_start_spark(worker.engine))
        await _wait_until_capturing(worker.engine, stop)
        generator = asyncio.create_task(_generate(db, every_s))
        await _report(worker.engine, db, output, stop, duration, spark)
    finally:
        starting = spark is not None and not spark.done()
        _say("stopping the pipeline: connectors and tasks stop, the sink commits what it holds"
             + (" (Spark is still starting: it stops once up)" if starting else "") + " ...\n")
        for task in (generator, spark):
            if task is not None:
                task.cancel()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        await worker.stop()
    _say(f"stopped: {parquet_rows(output)} rows in Parquet; run it again to carry on\n")
    return 0


async def _create_connectors(engine: Engine, db: Path, output: Path) -> None:
    """The source and the sink, unless an earlier run left them (stopped, paused or deleted by the user)."""
    if SOURCE not in await engine.connectors():
        await engine.create_connector(SOURCE, {
            "connector.class": "AuditTableSourceConnector", "audit.db.url": f"sqlite:///{db}",
            "audit.tables": "orders", "topic": "orders", "poll.interval.ms": "500", **JSON})
    if SINK not in await engine.connectors():
        await engine.create_connector(SINK, {
            "connector.class": "SparkParquetSinkConnector", "topics": "orders", "path": str(output),
            "partition.by": "op", **JSON})


async def _report(engine: Engine, db: Path, output: Path, stop: asyncio.Event, duration: float | None,
                  spark: asyncio.Task[None]) -> None:
    """Every five seconds, the orders in SQLite, the rows in Parquet and the connectors' states, until
    ``stop`` or ``duration``."""
    loop = asyncio.get_running_loop()
    deadline = None if duration is None else loop.time() + duration
    while not stop.is_set() and (deadline is None or loop.time() < deadline):
        wait = 5.0 if deadline is None else max(0.0, min(5.0, deadline - loop.time()))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=wait)
        if stop.is_set():
            return
        states = []
        for name in (SOURCE, SINK):
            if name in await engine.connectors():
                status = await engine.connector_status(name)
                states.append(f"{name} {status['connector']['state']}")
        starting = "  (Spark is starting)" if not spark.done() else ""
        _say(f"orders in SQLite: {count_orders(db):5d}   rows in Parquet: {parquet_rows(output):5d}   "
             + ", ".join(states) + starting + "\n")


def main(workdir: str, port: int, duration: float | None, *, fresh: bool = False) -> int:
    """``fresh`` (``--reset``): remove what an earlier run left in ``workdir`` first."""
    if fresh:
        removed = reset(Path(workdir))
        _say(f"reset {workdir}: removed {', '.join(removed) if removed else 'nothing (it held no pipeline)'}\n")
    try:
        return asyncio.run(run_pipeline(Path(workdir), port, duration))
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            sys.stderr.write(f"connect-engine pipeline: port {port} on 127.0.0.1 is already in use (another "
                             f"pipeline or worker?); choose another with --port, e.g. `connect-engine pipeline "
                             f"--port {port + 1}` or `make run PORT={port + 1}`\n")
        else:
            sys.stderr.write(f"connect-engine pipeline: {exc}\n")
        return 1
