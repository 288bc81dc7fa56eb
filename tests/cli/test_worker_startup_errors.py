"""A worker that cannot reach its Kafka cluster exits 1 with one line naming the cause, no traceback."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path


def _closed_port() -> int:
    with socket.socket() as sock:  # bound then released: nothing listens there afterwards
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_distributed_worker_without_its_brokers_exits_with_one_line(tmp_path: Path) -> None:
    port = _closed_port()
    properties = tmp_path / "worker.properties"
    properties.write_text(
        f"bootstrap.servers=127.0.0.1:{port}\ngroup.id=g\nconfig.storage.topic=cfg\n"
        "offset.storage.topic=off\nstatus.storage.topic=st\nlisteners=http://127.0.0.1:0\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "engine", "distributed", str(properties)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("connect-engine distributed: cannot start against the Kafka cluster:"), last
    assert f"127.0.0.1:{port}" in last
    assert "'cfg'" in last
