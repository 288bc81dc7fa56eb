"""Private PostgreSQL clusters for the tests and benchmarks: one with ``wal_level=logical`` for the CDC
source, one with the default ``wal_level=replica`` (logical decoding refuses it) for the audit-table
connector and the CDC source's refusal of such a server.

No server runs when a machine starts, so the test session makes its own: ``initdb`` under the
``postgres`` user (PostgreSQL refuses to run as root), a free port on 127.0.0.1, the unix socket in
the data directory, stopped by PID. Missing binaries are an error, never a skip: CI installs them
(Debian's ``postgresql``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg

_READY_TIMEOUT_S = 60.0


@dataclass(frozen=True, slots=True)
class LogicalPostgres:
    """A running private cluster; ``url`` connects as the superuser to ``database``."""

    port: int
    data_dir: Path
    pid: int
    database: str = "postgres"

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{self.database}"


def _bindir() -> Path:
    pg_config = shutil.which("pg_config")
    if pg_config is None:
        raise RuntimeError(
            "pg_config is not on PATH: install PostgreSQL (Debian: postgresql) to run these tests"
        )
    return Path(
        subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, check=True).stdout.strip()
    )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _as_postgres(args: list[str]) -> list[str]:
    """PostgreSQL refuses to run as root: run as the ``postgres`` user when we are root."""
    return ["runuser", "-u", "postgres", "--", *args] if os.geteuid() == 0 else args


@contextlib.contextmanager
def logical_postgres() -> Iterator[LogicalPostgres]:
    """Start a private cluster (``wal_level=logical``), yield it, stop it by PID and remove its files."""
    with private_postgres("logical") as cluster:
        yield cluster


@contextlib.contextmanager
def private_postgres(wal_level: str, database: str = "postgres") -> Iterator[LogicalPostgres]:
    """Start a private cluster at ``wal_level`` with ``database`` created in it; stop and remove it after."""
    bindir = _bindir()
    parent = Path(tempfile.mkdtemp(prefix="connect-pg-"))
    data = parent / "data"
    if os.geteuid() == 0:
        shutil.chown(parent, "postgres")
    parent.chmod(0o755)
    subprocess.run(
        _as_postgres([str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync"]),
        capture_output=True,
        text=True,
        check=True,
    )
    port = _free_port()
    server = subprocess.Popen(
        _as_postgres(
            [
                str(bindir / "postgres"),
                "-D",
                str(data),
                "-p",
                str(port),
                "-c",
                f"wal_level={wal_level}",
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                f"unix_socket_directories={data}",
                "-c",
                "max_replication_slots=64",
                "-c",
                "max_wal_senders=16",
                "-c",
                "fsync=off",
                "-c",
                "full_page_writes=off",
            ]
        ),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        cluster = LogicalPostgres(port, data, server.pid)
        _wait_ready(cluster, server)
        if database != "postgres":
            with psycopg.connect(cluster.url, autocommit=True) as conn:
                conn.execute(f'CREATE DATABASE "{database}"')
        yield LogicalPostgres(port, data, server.pid, database)
    finally:
        _stop(server)
        shutil.rmtree(parent, ignore_errors=True)


def _wait_ready(cluster: LogicalPostgres, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + _READY_TIMEOUT_S
    while True:
        if server.poll() is not None:
            raise RuntimeError(
                f"the private PostgreSQL exited with {server.returncode} before accepting connections"
            )
        try:
            with psycopg.connect(cluster.url, connect_timeout=2):
                return
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def _stop(server: subprocess.Popen[bytes]) -> None:
    """SIGINT is PostgreSQL's fast shutdown (runuser forwards it to the server it runs)."""
    if server.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(server.pid, signal.SIGINT)
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGKILL)
        server.wait(timeout=10)
