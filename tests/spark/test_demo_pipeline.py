"""``make run``'s pipeline, as a user runs it: rows inserted into SQLite end up in Parquet via Spark,
the REST API answers while it runs, a second run carries on without repeating a row, and Ctrl-C in
the middle of a Spark write stops it quietly."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from engine.cli.demo_pipeline import count_orders, parquet_rows
from engine.connectors.spark_sink import read_committed
from engine.spark import SparkSupervisor
from tests.spark_servers import QUICK_JVM, child_env

pytestmark = pytest.mark.integration  # the demo pipeline as a process, its Spark JVM started afresh per run

ENV = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _command(workdir: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "engine.cli",
        *extra,
        "pipeline",
        "--dir",
        str(workdir),
        "--port",
        str(_free_port()),
    ]


# The audit source's start() (which creates the triggers) made as slow as a remote database's: a
# generator that inserted before it returned would lose the first orders every time, not now and then.
SLOW_SOURCE = """
import sys, time
from engine.cli import main
from engine.connectors.audit import AuditTableSourceConnector

start = AuditTableSourceConnector.start
def slow_start(self, props):
    time.sleep(1.5)
    return start(self, props)
AuditTableSourceConnector.start = slow_start
sys.exit(main(sys.argv[1:]))
"""


def _run(workdir: Path, seconds: int, *, slow_source: bool = False) -> str:
    command = [*_command(workdir), "--duration", str(seconds)]
    if slow_source:
        command[1:3] = ["-c", SLOW_SOURCE]  # instead of -m engine.cli
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=seconds + 240, env=ENV, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.fixture(scope="module")
def first_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """One 30 s run of a fresh pipeline (its source slow to start): its directory and what it printed."""
    workdir = tmp_path_factory.mktemp("pipeline")
    return workdir, _run(workdir, 30, slow_source=True)


@pytest.mark.timeout(600)
def test_the_first_order_reaches_parquet(first_run: tuple[Path, str], supervisor: SparkSupervisor) -> None:
    """The generator starts once the source has provisioned its triggers: order 1 is captured too."""
    workdir, _ = first_run
    spark = asyncio.run(supervisor.session())
    ids = {
        int(row["row"]["id"])
        for row in read_committed(str(workdir / "parquet"), spark).select("row").collect()
    }
    assert ids
    assert min(ids) == 1


@pytest.mark.timeout(600)
def test_the_pipeline_says_when_spark_is_starting_and_when_it_is_up(first_run: tuple[Path, str]) -> None:
    _, out = first_run
    assert "Spark is starting" in out
    assert "Spark is up" in out
    assert out.index("Spark is starting") < out.index("Spark is up")
    assert out.rstrip().splitlines()[-2].startswith("stopping the pipeline")
    assert out.rstrip().splitlines()[-1].startswith("stopped: ")


@pytest.mark.timeout(600)
def test_the_pipeline_moves_rows_into_parquet_and_resumes_without_duplicates(
    first_run: tuple[Path, str],
) -> None:
    workdir, out = first_run
    assert "REST API" in out
    assert "rows in Parquet" in out
    first = parquet_rows(workdir / "parquet")
    assert first > 0
    rows = first
    for _ in range(3):  # a loaded machine may spend a short run starting Spark: run again, as a user would
        _run(workdir, 20)
        rows = parquet_rows(workdir / "parquet")
        if rows > first:
            break
    assert rows > first
    assert rows <= count_orders(workdir / "shop.db")
    ids: list[int] = []
    for manifest in (workdir / "parquet" / "_manifests").glob("*/*.json"):
        body = json.loads(manifest.read_text())
        ids.extend(range(body["first_offset"], body["next_offset"]))
    assert len(ids) == len(set(ids))  # no offset committed twice across the two runs


def _wait_for(
    condition: object, what: str, process: subprocess.Popen[str], timeout: float, every: float = 0.005
) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        assert process.poll() is None, f"the pipeline exited before {what}"
        assert time.monotonic() < deadline, f"no {what} within {timeout} s"
        time.sleep(every)


@pytest.mark.timeout(600)
def test_ctrl_c_during_a_spark_write_stops_quietly(tmp_path: Path) -> None:
    """SIGINT while the sink's Spark write runs: no Java stack trace, nothing at warning level or above,
    one line saying it stops and one that it stopped; the cancelled write is committed by the stop."""
    parquet, log = tmp_path / "parquet", tmp_path / "pipeline.log"
    # its output goes to a file: at INFO a pipe nobody reads until the end would fill and block it
    with log.open("w") as output:
        process = subprocess.Popen(
            [*_command(tmp_path, "--log-level", "INFO")],
            stdout=output,
            stderr=subprocess.STDOUT,
            text=True,
            env=ENV,
        )
    try:
        _wait_for(
            lambda: parquet_rows(parquet) > 0, "rows in Parquet", process, 240, every=0.2
        )  # Spark is warm
        writing = ("_batches/*/_temporary", "_batches/*/*/_temporary")  # a batch's write in progress
        _wait_for(lambda: any(any(parquet.glob(p)) for p in writing), "Spark write", process, 60)
        process.send_signal(signal.SIGINT)
        process.wait(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    out = log.read_text()
    assert process.returncode == 0, out[-3000:]
    lines = out.splitlines()
    stopping = next(n for n, line in enumerate(lines) if line.startswith("stopping the pipeline"))
    after = lines[stopping + 1 :]
    assert after[-1].startswith("stopped: "), out[-3000:]
    events = [json.loads(line) for line in after[:-1] if line.startswith("{")]
    assert [line for line in after[:-1] if not line.startswith("{")] == [], out[
        -3000:
    ]  # no JVM or py4j output
    assert [e for e in events if e["level"] not in ("debug", "info")] == []
    assert not any(line.startswith("\tat ") or "Traceback" in line for line in lines)
    names = [e["event"] for e in events]
    # the write in progress is committed: by the stop's final commit once the cancel cut it short,
    # or by the job itself when the cancel came after its last manifest (then nothing was cut short)
    assert "spark_sink.batch_committed" in names, after
    if "task.pre_commit_interrupted" in names:
        assert names.index("spark_sink.batch_committed") > names.index("task.pre_commit_interrupted"), after


def _until_rows_then_interrupt(command: list[str], timeout: float) -> list[str]:
    """Run the pipeline until it reports committed rows, then Ctrl-C it; every line it printed."""
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**child_env(), "SPARK_LOCAL_IP": "127.0.0.1", "JAVA_TOOL_OPTIONS": QUICK_JVM},
    )
    lines: list[str] = []
    reader = threading.Thread(
        target=lambda: lines.extend(iter(process.stdout.readline, "")),  # type: ignore[union-attr]
        daemon=True,
    )
    reader.start()
    try:
        assert process.stdout is not None
        deadline = time.monotonic() + timeout
        while not any(_reported_rows(line) for line in list(lines)):
            assert process.poll() is None, "".join(lines)[-3000:]
            assert time.monotonic() < deadline, (
                f"no rows in Parquet within {timeout} s:\n" + "".join(lines)[-3000:]
            )
            time.sleep(0.5)
        process.send_signal(signal.SIGINT)
        process.wait(timeout=120)
        reader.join(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stdout.close()  # type: ignore[union-attr]
    assert process.returncode == 0, "".join(lines)[-3000:]
    return lines


def _reported_rows(line: str) -> int:
    found = re.search(r"rows in Parquet:\s+(\d+)", line)
    return int(found[1]) if found else 0


def _stopped_rows(lines: list[str]) -> int:
    found = re.match(r"stopped: (\d+) rows in Parquet", lines[-1])
    assert found, lines[-5:]
    return int(found[1])


@pytest.mark.timeout(600)
def test_the_pipeline_on_a_standalone_cluster(
    spark_master_url: str, tmp_path: Path, supervisor: SparkSupervisor
) -> None:
    """``--spark-master spark://...``: the driver in the pipeline, executors on the cluster write the data."""
    lines = _until_rows_then_interrupt(
        [
            *_command(tmp_path),
            "--spark-master",
            spark_master_url,
            "--spark-conf",
            "spark.executor.memory=512m",
            "--spark-conf",
            f"spark.executor.extraJavaOptions={QUICK_JVM}",
        ],
        400,
    )
    assert any(line.strip() == f"Spark         cluster {spark_master_url}, driver here" for line in lines), (
        lines[:12]
    )
    rows = _stopped_rows(lines)
    assert rows > 0
    spark = asyncio.run(supervisor.session())  # the files are on this machine: read them back locally
    ids = [
        int(row["row"]["id"])
        for row in read_committed(str(tmp_path / "parquet"), spark).select("row").collect()
    ]
    assert len(ids) == rows == parquet_rows(tmp_path / "parquet")
    assert len(set(ids)) == len(ids)
    assert rows <= count_orders(tmp_path / "shop.db")


@pytest.mark.timeout(600)
def test_the_pipeline_on_spark_connect(
    spark_connect_url: str, tmp_path: Path, connect_supervisor: SparkSupervisor
) -> None:
    """``--spark-remote sc://...``: the pipeline is only a client; it counts through the server's reads too."""
    lines = _until_rows_then_interrupt([*_command(tmp_path), "--spark-remote", spark_connect_url], 300)
    assert any(
        line.strip().startswith(f"Spark         Spark Connect server {spark_connect_url}") for line in lines
    )
    rows = _stopped_rows(lines)
    assert rows > 0
    spark = asyncio.run(connect_supervisor.session())
    output = str(tmp_path / "parquet")
    ids = [int(row["row"]["id"]) for row in read_committed(output, spark).select("row").collect()]
    assert len(ids) == rows == parquet_rows(output, spark)
    assert len(set(ids)) == len(ids)
    assert rows <= count_orders(tmp_path / "shop.db")
    # the server shares this disk here: the local count reads the manifests it wrote (directories) alike
    assert parquet_rows(tmp_path / "parquet") == rows


@pytest.mark.timeout(1500)
def test_the_demo_moved_from_its_topic_file_to_a_broker(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """The README's order: ``make run`` (the topic file), then ``make kafka`` and ``connect-engine
    pipeline --bootstrap-servers ...`` in the same directory. The Spark sink's manifests from the first
    run name the in-process topic, so their position is not applied to the broker's topic (before,
    Parquet stayed at the first run's count while the broker's topic was shorter than it); the rows
    the second run captures reach Parquet, each once."""
    kafka = request.getfixturevalue("kafka")
    first = 0
    for _ in range(3):  # until the topic file's run has put rows in Parquet (Spark may start slowly)
        _run(tmp_path, 120)
        if (first := parquet_rows(tmp_path / "parquet")) > 0:
            break
    assert first > 0
    rows, logs = first, ""
    for _ in range(3):  # a loaded machine may spend a short run starting Spark: run again, as a user would
        done = subprocess.run(
            [*_command(tmp_path), "--duration", "120", "--bootstrap-servers", kafka.bootstrap],
            capture_output=True,
            text=True,
            timeout=360,
            env=ENV,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        logs += done.stderr
        rows = parquet_rows(tmp_path / "parquet")
        if rows > first:
            break
    assert rows > first
    assert "task.offsets_identity_mismatch" in logs
    ids: list[int] = []
    for manifest in (tmp_path / "parquet" / "_manifests").glob("*/*.json"):
        body = json.loads(manifest.read_text())
        ids.extend(range(body["first_offset"], body["next_offset"]))
    assert len(ids) >= rows
