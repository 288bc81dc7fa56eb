"""The demo walkthrough of docs/getting-started.md, word for word, then a second ``make run``: no row is skipped.

The walkthrough ends by deleting both connectors: ``deleted()`` drops the audit table, and the
second run creates them again. The re-created source must capture and deliver again (it used to
resume after the old table's last id and skip every new row, silently).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.cli.demo_pipeline import count_orders, parquet_rows
from tests.docs.blocks import doc_block

pytestmark = pytest.mark.integration  # the getting-started walkthrough: the pipeline process on Spark, twice


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def walkthrough_commands() -> list[list[str]]:
    """The curl lines of the getting-started walkthrough block, as argument lists (comments dropped)."""
    block = doc_block("demo-walkthrough")
    commands = [line.split("#", 1)[0].split() for line in block.splitlines() if line.startswith("curl")]
    assert len(commands) >= 7
    return [[part.strip("'") for part in command] for command in commands]


def _start(workdir: Path, port: int, log: Path) -> subprocess.Popen[str]:
    """Start the demo with its stderr in ``log``: a pipe nobody reads until the end would fill and
    block the demo once it (or Spark's JVM, which shares the stream) logs 64 KiB."""
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}
    args = [sys.executable, "-m", "engine.cli", "pipeline", "--dir", str(workdir), "--port", str(port)]
    with log.open("w") as stderr:
        return subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=stderr, text=True, env=env)


def _wait(condition: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return
        time.sleep(0.5)
    raise AssertionError(f"{what} did not happen within {timeout} s")


@pytest.mark.timeout(600)
def test_the_readme_walkthrough_then_a_second_run_loses_no_row(tmp_path: Path) -> None:
    port = _free_port()
    output, db = tmp_path / "parquet", tmp_path / "shop.db"
    first_log, second_log = tmp_path / "first.log", tmp_path / "second.log"
    first = _start(tmp_path, port, first_log)
    try:
        _wait(lambda: parquet_rows(output) > 0, 240, "a first Parquet commit")
        for command in walkthrough_commands():
            command = [part.replace("localhost:8083", f"127.0.0.1:{port}") for part in command]
            done = subprocess.run(
                [*command, "-o", "/dev/null", "-w", "%{http_code}"],
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            assert done.stdout in ("200", "202", "204"), (command, done.stdout, done.stderr)
            time.sleep(1)
    finally:
        first.send_signal(signal.SIGINT)  # Ctrl-C
        first.wait(timeout=120)
    assert first.returncode == 0, first_log.read_text()[-3000:]
    delivered = parquet_rows(output)

    second = _start(tmp_path, _free_port(), second_log)
    try:
        # the re-created pair captures and delivers the second run's orders (not stuck after the
        # delete); waited for, not timed, so a loaded machine's slow Spark start cannot fail it
        _wait(lambda: parquet_rows(output) >= delivered + 20, 300, "20 more rows after the re-create")
    finally:
        second.send_signal(signal.SIGINT)
        second.wait(timeout=120)
    stderr = second_log.read_text()
    assert second.returncode == 0, stderr[-3000:]
    assert "offset_beyond_table" not in stderr
    assert parquet_rows(output) <= count_orders(db)
