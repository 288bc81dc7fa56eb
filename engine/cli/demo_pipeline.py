"""``make run``: the demo pipeline, a standalone worker moving SQLite rows into Parquet through Spark.

A generator inserts orders into an embedded SQLite database; the audit-table source captures
them through the triggers it provisioned; records go through the in-process topics to the Spark
Parquet sink, which commits files and offsets together. The worker serves the REST API, so the
pipeline can be paused, stopped, resumed, restarted and deleted while it runs (docs/getting-started.md: "The demo
pipeline"). Spark is local by default; ``--spark-master spark://...`` or ``--spark-remote sc://...``
run the sink's jobs on a standalone cluster or a Spark Connect server (``spark_properties``).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import importlib.util
import json
import os
import random
import shutil
import signal
import sqlite3
import sys
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from engine.cli.standalone import StandaloneWorker
from engine.engine import Engine
from engine.errors import ConnectorNotFound
from engine.plugins.extras import extras_by_module, install_hint
from engine.spark.settings import CONF_PREFIX, MASTER, REMOTE

SOURCE = "orders-audit"
SINK = "orders-parquet"
JSON = {
    "key.converter": "org.apache.kafka.connect.json.JsonConverter",
    "key.converter.schemas.enable": "false",
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter.schemas.enable": "false",
}
# everything a pipeline keeps in its directory (``--reset`` removes exactly these)
STATE_FILES = (
    "shop.db",
    "shop.db-journal",
    "shop.db-wal",
    "shop.db-shm",
    "topics.jsonl",
    "topics.jsonl.cluster-id",  # the in-process topics' cluster id (engine.topics.memory)
    "offsets",
    "offsets.cluster-id",  # the cluster its source offsets were written for (engine.storage.target_cluster)
    "configs",
)
STATE_DIRS = ("parquet",)
# a source whose connector is in one of these has not run start() yet: its triggers may not exist
_NOT_STARTED = ("UNASSIGNED", "RESTARTING")
LOCAL_MASTER = "local[2]"
_LOOPBACK = ("127.0.0.1", "localhost", "[::1]")


def spark_properties(
    master: str | None = None, remote: str | None = None, conf: Iterable[str] = ()
) -> dict[str, str]:
    """The worker's ``spark.*`` properties for ``--spark-master``, ``--spark-remote`` and ``--spark-conf
    KEY=VALUE``s (each becomes ``spark.conf.KEY``, after the pipeline's own defaults).

    Raises ValueError naming the option for a remote that is not ``sc://``, both a master and a remote, or a
    conf without ``=``.
    """
    if master and remote:
        raise ValueError(
            "--spark-master and --spark-remote exclude each other: a Spark Connect server has its own"
        )
    if remote is not None and not remote.startswith("sc://"):
        raise ValueError(f"--spark-remote must be a Spark Connect URL (sc://host:port), got {remote!r}")
    props = {
        "spark.conf.spark.sql.shuffle.partitions": "2",
        "spark.conf.spark.ui.showConsoleProgress": "false",
    }
    if remote is not None:
        props = {REMOTE: remote}  # the server's own settings apply; the worker is only its client
    else:
        props[MASTER] = master or LOCAL_MASTER
        if _on_loopback(props[MASTER]):
            # executors on this machine reach the driver on loopback (the default would be the external address)
            props["spark.conf.spark.driver.host"] = props["spark.conf.spark.driver.bindAddress"] = "127.0.0.1"
    for item in conf:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--spark-conf takes KEY=VALUE (a Spark setting), got {item!r}")
        props[CONF_PREFIX + key.strip()] = value
    return props


def _on_loopback(master: str) -> bool:
    """A local master, or a ``spark://`` master on this machine's loopback address."""
    if master.startswith("local"):
        return True
    hosts = [host.strip().rpartition(":")[0] for host in master.removeprefix("spark://").split(",")]
    return master.startswith("spark://") and all(host in _LOOPBACK for host in hosts)


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
            conn.execute(
                "INSERT INTO orders (customer, amount) VALUES (?, ?)",
                (random.choice(customers), round(random.uniform(5, 500), 2)),
            )

    while True:
        await asyncio.to_thread(insert)
        await asyncio.sleep(every_s)


def _say(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def count_orders(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT count(*) FROM orders").fetchone()[0])


def parquet_rows(output: Path | str, spark: Any = None) -> int:
    """Rows the sink has committed: the sum over its manifests (what readers may read).

    Without ``spark``, read from the local disk (the output of a local or standalone driver on this
    machine); with a session, through Spark (a Spark Connect client, whose output is the server's and
    may not be on this machine at all). Both read the manifests' documented layout (docs/shipped-connectors/spark-parquet-sink.md), not
    the sink's code: the CLI does not import connectors (import layers).
    """
    if spark is not None:
        return _rows_through_spark(spark, f"{str(output).rstrip('/')}/_manifests")
    total = 0
    for manifest in Path(output, "_manifests").glob("*/*.json"):
        # a manifest is a file, or (written over Spark Connect) a directory holding one part file
        for text in _manifest_texts(manifest):
            try:
                total += int(json.loads(text).get("rows", 0))
            except ValueError:
                continue
    return total


def _rows_through_spark(spark: Any, manifests: str) -> int:
    """One Spark job sums the manifests' ``rows``; files and directories starting with ``_`` or ``.`` (a
    write in progress, a rename's temporary file) are not read, as Spark never reads them."""
    try:
        row = (
            spark.read.schema("rows LONG")
            .option("recursiveFileLookup", "true")
            .json(manifests)
            .selectExpr("coalesce(sum(rows), 0)")
            .first()
        )
    except Exception as exc:
        if "PATH_NOT_FOUND" in str(exc).split("\n", 1)[0]:
            return 0  # no commit yet
        raise
    return int(row[0])


def _manifest_texts(manifest: Path) -> list[str]:
    try:
        if manifest.is_file():
            return [manifest.read_text()]
        return [
            part.read_text()
            for part in manifest.iterdir()
            if part.is_file() and not part.name.startswith(("_", "."))
        ]
    except OSError:  # being renamed into place, or removed by a delete
        return []


class RowCounter:
    """Counts committed rows for the reports: on the local disk, or over the pipeline's own Spark Connect
    client session (not the worker's: the final count comes after the worker, and its session, stopped)."""

    def __init__(self, output: Path, remote: str | None) -> None:
        self.output = output
        self._remote = remote
        self._session: Any = None

    async def count(self, timeout: float = 15.0) -> int:
        """TimeoutError after ``timeout`` s (a Connect server that went away: its client retries for minutes)."""
        if self._remote is None:
            return parquet_rows(self.output)
        return await asyncio.wait_for(asyncio.to_thread(self._count_remote), timeout)

    def _count_remote(self) -> int:
        assert self._remote is not None  # count() only calls this with a remote
        if self._session is None:
            from pyspark.sql import SparkSession

            self._session = SparkSession.builder.remote(self._remote).create()
        return parquet_rows(self.output, self._session)

    async def close(self) -> None:
        if self._session is not None:
            await asyncio.to_thread(self._session.stop)


async def run_pipeline(
    workdir: Path,
    port: int,
    duration: float | None,
    every_s: float = 0.5,
    spark_props: Mapping[str, str] | None = None,
    bootstrap_servers: str | None = None,
) -> int:
    """``spark_props``: the worker's ``spark.*`` properties (``spark_properties``; default local);
    ``bootstrap_servers``: a Kafka cluster for the topics instead of the embedded topic file."""
    spark_props = dict(spark_props) if spark_props is not None else spark_properties()
    # absolute: a Spark Connect server (or a cluster's executors) resolve a relative path against their own
    # working directory, not this process's
    db, output = workdir / "shop.db", (workdir / "parquet").resolve()
    await asyncio.to_thread(_prepare, db)
    if _on_loopback(spark_props.get(MASTER, "")):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    counter = RowCounter(output, spark_props.get(REMOTE))
    worker = StandaloneWorker(
        {
            "listeners": f"http://127.0.0.1:{port}",
            "offset.flush.interval.ms": "3000",
            # Spark's first write cannot be cancelled while it is being planned (seconds on a cold JVM): a
            # stop then waits for it rather than abandon the task with its final commit undone
            "task.shutdown.graceful.timeout.ms": "30000",
            **(
                {"bootstrap.servers": bootstrap_servers}
                if bootstrap_servers
                else {"topics.storage.file.filename": str(workdir / "topics.jsonl")}
            ),
            "offset.storage.file.filename": str(workdir / "offsets"),
            "config.storage.file.filename": str(workdir / "configs"),
            **spark_props,
        }
    )
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
  Spark         {_where(spark_props)}
  Ctrl-C stops the worker; run it again and it carries on where it stopped (--reset starts afresh).
""")
        spark = asyncio.create_task(_start_spark(worker.engine))
        await _wait_until_capturing(worker.engine, stop)
        generator = asyncio.create_task(_generate(db, every_s))
        await _report(worker.engine, db, counter, stop, duration, spark)
    finally:
        starting = spark is not None and not spark.done()
        _say(
            "stopping the pipeline: connectors and tasks stop, the sink commits what it holds"
            + (" (Spark is still starting: it stops once up)" if starting else "")
            + " ...\n"
        )
        for task in (generator, spark):
            if task is not None:
                task.cancel()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        await worker.stop()
    try:
        rows = str(await counter.count())
    except Exception as exc:  # the Connect server is away: the rows are there, uncounted
        rows = f"? ({type(exc).__name__})"
    _say(f"stopped: {rows} rows in Parquet; run it again to carry on\n")
    with contextlib.suppress(Exception):
        await asyncio.wait_for(counter.close(), 15.0)
    return 0


def _where(props: Mapping[str, str]) -> str:
    if REMOTE in props:
        return f"Spark Connect server {props[REMOTE].split(';')[0]} (the driver runs there)"
    master = props[MASTER]
    return (
        f"local ({master}) in this process"
        if master.startswith("local")
        else f"cluster {master}, driver here"
    )


async def _create_connectors(engine: Engine, db: Path, output: Path) -> None:
    """The source and the sink, unless an earlier run left them (stopped, paused or deleted by the user)."""
    if SOURCE not in await engine.connectors():
        await engine.create_connector(
            SOURCE,
            {
                "connector.class": "AuditTableSourceConnector",
                "audit.db.url": f"sqlite:///{db}",
                "audit.tables": "orders",
                "topic": "orders",
                "poll.interval.ms": "500",
                **JSON,
            },
        )
    if SINK not in await engine.connectors():
        await engine.create_connector(
            SINK,
            {
                "connector.class": "SparkParquetSinkConnector",
                "topics": "orders",
                "path": str(output),
                "partition.by": "op",
                **JSON,
            },
        )


async def _report(
    engine: Engine,
    db: Path,
    counter: RowCounter,
    stop: asyncio.Event,
    duration: float | None,
    spark: asyncio.Task[None],
) -> None:
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
        present = await engine.connectors()
        states = [
            status_text(name, await engine.connector_status(name))
            for name in (SOURCE, SINK)
            if name in present
        ]
        starting = "  (Spark is starting)" if not spark.done() else ""
        try:
            rows = f"{await counter.count():5d}"
        except Exception as exc:  # the Connect server is away: say so, keep reporting
            rows = f"? ({type(exc).__name__})"
        _say(
            f"orders in SQLite: {count_orders(db):5d}   rows in Parquet: {rows}   "
            + ", ".join(states)
            + starting
            + "\n"
        )


def status_text(name: str, status: Mapping[str, Any]) -> str:
    """``name STATE``, plus every task whose state differs from its connector's (``task 0 FAILED``)."""
    state = status["connector"]["state"]
    odd = [f"task {task['id']} {task['state']}" for task in status["tasks"] if task["state"] != state]
    return f"{name} {state}" + (f" ({', '.join(odd)})" if odd else "")


def missing_spark() -> str | None:
    """The one line for a pipeline that cannot run its sink: the spark extra is not installed."""
    extras = extras_by_module()
    for module in ("pyspark", "pandas"):
        if importlib.util.find_spec(module) is None:
            return (
                f"the demo's Parquet sink runs on Spark: {install_hint(module, extras.get(module, 'spark'))}"
            )
    return None


def main(
    workdir: str,
    port: int,
    duration: float | None,
    *,
    fresh: bool = False,
    spark_props: Mapping[str, str] | None = None,
    bootstrap_servers: str | None = None,
) -> int:
    """``fresh`` (``--reset``): remove what an earlier run left in ``workdir`` first (topics on a Kafka
    cluster stay); ``spark_props`` and ``bootstrap_servers``: see ``run_pipeline``."""
    missing = missing_spark()
    if missing is not None:
        sys.stderr.write(f"connect-engine pipeline: {missing}\n")
        return 1
    if fresh:
        removed = reset(Path(workdir))
        _say(
            f"reset {workdir}: removed {', '.join(removed) if removed else 'nothing (it held no pipeline)'}\n"
        )
    try:
        return asyncio.run(
            run_pipeline(
                Path(workdir), port, duration, spark_props=spark_props, bootstrap_servers=bootstrap_servers
            )
        )
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            sys.stderr.write(
                f"connect-engine pipeline: port {port} on 127.0.0.1 is already in use (another "
                f"pipeline or worker?); choose another with --port, e.g. `connect-engine pipeline "
                f"--port {port + 1}` or `make run PORT={port + 1}`\n"
            )
        else:
            sys.stderr.write(f"connect-engine pipeline: {exc}\n")
        return 1
