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
import json
import os
import random
import signal
import sqlite3
import sys
from pathlib import Path

from engine.cli.standalone import StandaloneWorker

SOURCE = "orders-audit"
SINK = "orders-parquet"
JSON = {"key.converter": "org.apache.kafka.connect.json.JsonConverter", "key.converter.schemas.enable": "false",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "false"}


def _prepare(db: Path) -> None:
    db.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS orders (id INTEGER PRIMARY KEY, customer TEXT, amount REAL)")


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
        "topics.storage.file.filename": str(workdir / "topics.jsonl"),
        "offset.storage.file.filename": str(workdir / "offsets"),
        "config.storage.file.filename": str(workdir / "configs"),
        "spark.master": "local[2]",
        "spark.conf.spark.sql.shuffle.partitions": "2",
        "spark.conf.spark.ui.showConsoleProgress": "false",
    })
    await worker.start()
    url = worker.bound[0]
    engine = worker.engine
    if SOURCE not in await engine.connectors():
        await engine.create_connector(SOURCE, {
            "connector.class": "AuditTableSourceConnector", "audit.db.url": f"sqlite:///{db}",
            "audit.tables": "orders", "topic": "orders", "poll.interval.ms": "500", **JSON})
    if SINK not in await engine.connectors():
        await engine.create_connector(SINK, {
            "connector.class": "SparkParquetSinkConnector", "topics": "orders", "path": str(output),
            "partition.by": "op", **JSON})
    _say(f"""connect-engine demo pipeline
  REST API      {url}    (try: curl -s {url}/connectors/{SOURCE}/status)
  SQLite source {db}    (a generator inserts an order every {every_s} s)
  Parquet out   {output}    (committed rows are listed in {output}/_manifests)
  Ctrl-C stops the worker; run it again and it carries on where it stopped.
""")
    generator = asyncio.create_task(_generate(db, every_s))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        deadline = None if duration is None else loop.time() + duration
        while not stop.is_set() and (deadline is None or loop.time() < deadline):
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=5)
            states = []
            for name in (SOURCE, SINK):
                if name in await engine.connectors():
                    status = await engine.connector_status(name)
                    states.append(f"{name} {status['connector']['state']}")
            _say(f"orders in SQLite: {count_orders(db):5d}   rows in Parquet: {parquet_rows(output):5d}   "
                 + ", ".join(states) + "\n")
    finally:
        generator.cancel()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        await worker.stop()
    return 0


def main(workdir: str, port: int, duration: float | None) -> int:
    try:
        return asyncio.run(run_pipeline(Path(workdir), port, duration))
    except OSError as exc:
        sys.stderr.write(f"connect-engine demo: {exc}\n")
        return 1
