"""``make run``'s pipeline, as a user runs it: rows inserted into SQLite end up in Parquet via Spark,
the REST API answers while it runs, and a second run carries on without repeating a row."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from engine.cli.demo_pipeline import count_orders, parquet_rows


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _run(workdir: Path, seconds: int) -> str:
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}
    done = subprocess.run([sys.executable, "-m", "engine.cli", "pipeline", "--dir", str(workdir),
                           "--port", str(_free_port()), "--duration", str(seconds)],
                          capture_output=True, text=True, timeout=240, env=env, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.mark.timeout(600)
def test_the_pipeline_moves_rows_into_parquet_and_resumes_without_duplicates(tmp_path: Path) -> None:
    out = _run(tmp_path, 30)
    assert "REST API" in out
    assert "rows in Parquet" in out
    first = parquet_rows(tmp_path / "parquet")
    assert first > 0
    _run(tmp_path, 20)
    rows = parquet_rows(tmp_path / "parquet")
    assert rows > first
    assert rows <= count_orders(tmp_path / "shop.db")
    ids: list[int] = []
    for manifest in (tmp_path / "parquet" / "_manifests").glob("*/*.json"):
        body = json.loads(manifest.read_text())
        ids.extend(range(body["first_offset"], body["next_offset"]))
    assert len(ids) == len(set(ids))  # no offset committed twice across the two runs
