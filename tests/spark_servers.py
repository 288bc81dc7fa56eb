"""Real Spark servers for the test session, from the installed pyspark: a Spark Connect server and a
standalone master with one worker, each on free ports on 127.0.0.1, started at most once per session
(on first use) and stopped by PID at its end. One that cannot start fails the test that needs it.

Registered as a pytest plugin by ``tests/conftest.py``, so ``tests/spark`` and
``tests/connectors/spark_sink`` share the same servers.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

START_TIMEOUT_S = 120.0
# A quick-start JVM: start-up dominates these servers' cost on a 2-core machine.
QUICK_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:-UsePerfData"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


def server_env(work: Path) -> dict[str, str]:
    """Loopback only, logs and pid files in ``work``, and executors on this venv's Python."""
    return {
        **child_env(),
        "SPARK_HOME": str(spark_home()),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_LOG_DIR": str(work / "logs"),
        "SPARK_PID_DIR": str(work / "pids"),
        "SPARK_WORKER_DIR": str(work / "worker"),
        "SPARK_IDENT_STRING": "connect-engine-tests",
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
        "SPARK_DAEMON_JAVA_OPTS": QUICK_JVM,
        "SPARK_NO_DAEMONIZE": "1",
    }


def child_env() -> dict[str, str]:
    """This process's environment for a child, without pyspark's process-wide Connect mark."""
    return {k: v for k, v in os.environ.items() if k not in ("SPARK_CONNECT_MODE_ENABLED", "SPARK_REMOTE")}


@dataclass
class Server:
    name: str
    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def stop(self) -> None:
        """SIGTERM the process group (spark-class execs java: the JVM is the group leader), then SIGKILL."""
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=15)

    def tail(self) -> str:
        try:
            return self.log.read_text(errors="replace")[-3000:]
        except OSError:
            return "(no log)"


def _launch(name: str, command: list[str], env: dict[str, str], work: Path, url: str) -> Server:
    (work / "logs").mkdir(parents=True, exist_ok=True)
    log = work / "logs" / f"{name}.log"
    with log.open("ab") as out:
        process = subprocess.Popen(
            command,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    return Server(name, url, process, log)


def _wait_for_port(server: Server, port: int, timeout: float = START_TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if server.process.poll() is not None:
            raise RuntimeError(f"{server.name} exited with {server.process.returncode}:\n{server.tail()}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            return
        if time.monotonic() > deadline:
            raise RuntimeError(
                f"{server.name} did not listen on 127.0.0.1:{port} within {timeout} s:\n{server.tail()}"
            )
        time.sleep(0.2)


def start_connect_server(work: Path) -> Server:
    """``start-connect-server.sh --wait`` (foreground, so its PID is ours) on a free gRPC port."""
    port = free_port()
    home = spark_home()
    command = [
        str(home / "sbin" / "start-connect-server.sh"),
        "--wait",
        "--conf",
        f"spark.connect.grpc.binding.port={port}",
        "--conf",
        "spark.connect.grpc.binding.address=127.0.0.1",
        "--conf",
        "spark.ui.enabled=false",
        "--conf",
        "spark.ui.showConsoleProgress=false",
        "--conf",
        "spark.sql.shuffle.partitions=2",
        "--conf",
        f"spark.driver.extraJavaOptions={QUICK_JVM}",
        "--master",
        "local[4]",
    ]
    server = _launch("connect", command, server_env(work), work, f"sc://127.0.0.1:{port}")
    try:
        _wait_for_port(server, port)
    except BaseException:
        server.stop()
        raise
    return server


def start_standalone(work: Path, cores: int = 2, memory: str = "1g") -> tuple[Server, Server]:
    """A standalone master and one worker (``--cores``/``--memory`` small: the machine has 2 cores)."""
    port, ui, worker_ui = free_port(), free_port(), free_port()
    spark_class = str(spark_home() / "bin" / "spark-class")
    env = server_env(work)
    master = _launch(
        "master",
        [
            spark_class,
            "org.apache.spark.deploy.master.Master",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--webui-port",
            str(ui),
        ],
        env,
        work,
        f"spark://127.0.0.1:{port}",
    )
    try:
        _wait_for_port(master, port)
        worker = _launch(
            "worker",
            [
                spark_class,
                "org.apache.spark.deploy.worker.Worker",
                "--host",
                "127.0.0.1",
                "--cores",
                str(cores),
                "--memory",
                memory,
                "--webui-port",
                str(worker_ui),
                "--work-dir",
                str(work / "worker"),
                master.url,
            ],
            env,
            work,
            master.url,
        )
    except BaseException:
        master.stop()
        raise
    try:
        _wait_for_registration(master, worker)
    except BaseException:
        worker.stop()
        master.stop()
        raise
    return master, worker


def _wait_for_registration(master: Server, worker: Server, timeout: float = START_TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout
    while "Registering worker" not in master.tail():
        if worker.process.poll() is not None:
            raise RuntimeError(f"the Spark worker exited with {worker.process.returncode}:\n{worker.tail()}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"no worker registered with {master.url} within {timeout} s:\n{worker.tail()}")
        time.sleep(0.2)


@pytest.fixture(scope="session")
def spark_connect_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``sc://127.0.0.1:PORT`` of a Spark Connect server (local[4] inside it) for the whole session."""
    try:
        server = start_connect_server(tmp_path_factory.mktemp("spark-connect"))
    except Exception as exc:
        pytest.fail(f"the Spark Connect server did not start: {exc}")
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture(scope="session")
def spark_master_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``spark://127.0.0.1:PORT`` of a standalone master with one 2-core, 1 GiB worker."""
    try:
        master, worker = start_standalone(tmp_path_factory.mktemp("spark-standalone"))
    except Exception as exc:
        pytest.fail(f"the standalone Spark cluster did not start: {exc}")
    try:
        yield master.url
    finally:
        worker.stop()
        master.stop()


@pytest.fixture(scope="session")
def connect_supervisor(spark_connect_url: str) -> Iterator[Any]:
    """A SparkSupervisor on the session's Spark Connect server.

    The session's classic local SparkContext is made first (as ``tests/spark`` and the sink tests make it),
    so that the Connect client does not mark the whole process as Connect-only (see
    ``engine.spark.supervisor._create_connect_session``).
    """
    import asyncio

    from pyspark.sql import SparkSession

    from engine.spark import SparkSettings, SparkSupervisor

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    (
        SparkSession.builder.master("local[6]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )

    supervisor = SparkSupervisor(SparkSettings(remote=spark_connect_url))
    yield supervisor
    asyncio.run(supervisor.shutdown())
