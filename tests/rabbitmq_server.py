"""A private RabbitMQ node for the tests and benchmarks, from Debian's ``rabbitmq-server``.

No broker runs when a machine starts, so the session starts its own node: free AMQP and
distribution ports on 127.0.0.1, its database, logs and Erlang cookie in a temporary directory, no
plugins, the default ``guest``/``guest`` user (allowed from loopback), stopped by process group. A
missing ``rabbitmq-server`` is an error, never a skip: CI installs it.
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

SERVER = Path(
    "/usr/lib/rabbitmq/bin/rabbitmq-server"
)  # the real script; /usr/sbin's wrapper drops to `rabbitmq`
_READY_TIMEOUT_S = 60.0


@dataclass(frozen=True, slots=True)
class RabbitMQ:
    port: int
    pid: int

    @property
    def url(self) -> str:
        return f"amqp://guest:guest@127.0.0.1:{self.port}/"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def private_rabbitmq() -> Iterator[RabbitMQ]:
    """Start a node, yield it once it accepts AMQP connections, stop it and remove its files."""
    if not SERVER.exists():
        raise RuntimeError(
            f"{SERVER} is missing: install RabbitMQ (Debian: rabbitmq-server) to run these tests"
        )
    work = Path(tempfile.mkdtemp(prefix="connect-rabbitmq-"))
    (work / "enabled_plugins").write_text("[].\n", encoding="utf-8")
    port, dist_port = _free_port(), _free_port()
    env = {
        **os.environ,
        "HOME": str(work),
        "RABBITMQ_NODENAME": f"connect-tests-{port}@localhost",
        "RABBITMQ_NODE_IP_ADDRESS": "127.0.0.1",
        "RABBITMQ_NODE_PORT": str(port),
        "RABBITMQ_DIST_PORT": str(dist_port),
        "RABBITMQ_MNESIA_BASE": str(work / "mnesia"),
        "RABBITMQ_LOG_BASE": str(work / "log"),
        "RABBITMQ_ENABLED_PLUGINS_FILE": str(work / "enabled_plugins"),
        "RABBITMQ_PID_FILE": str(work / "pid"),
    }
    log = (work / "server.out").open("wb")
    server = subprocess.Popen(
        [str(SERVER)], env=env, cwd=work, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        _wait_ready(port, server, work)
        yield RabbitMQ(port, server.pid)
    finally:
        _stop(server)
        log.close()
        shutil.rmtree(work, ignore_errors=True)


def _wait_ready(port: int, server: subprocess.Popen[bytes], work: Path) -> None:
    """The AMQP port opens only after the node has booted its database and the default user."""
    deadline = time.monotonic() + _READY_TIMEOUT_S
    while True:
        if server.poll() is not None:
            tail = (work / "server.out").read_text(errors="replace")[-2000:]
            raise RuntimeError(
                f"the private RabbitMQ exited with {server.returncode} before listening:\n{tail}"
            )
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            return
        if time.monotonic() > deadline:
            raise RuntimeError(
                f"the private RabbitMQ did not listen on 127.0.0.1:{port} within {_READY_TIMEOUT_S} s"
            )
        time.sleep(0.2)


def _stop(server: subprocess.Popen[bytes]) -> None:
    """SIGTERM is the node's orderly shutdown; the whole group goes (the script, beam, its helpers)."""
    if server.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=10)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(server.pid, signal.SIGKILL)  # beam can outlive the script that started it
