"""A cluster of distributed workers as separate processes, for tests of distributed behaviour.

Each worker is ``python -m engine distributed`` with its own REST port on 127.0.0.1, so killing
one with SIGKILL is a real crash: no ``stop()``, no leaving the group, nothing flushed. Workers
share a group and internal topics named per cluster; instrumented connectors given
``test.record.file=cluster.record_file`` append every callback (with the process id) there.

    with worker_cluster("127.0.0.1:9092", tmp_path, delay_ms=0) as cluster:
        first, second = cluster.start_worker(), cluster.start_worker()
        await cluster.started(first, second)
        status, body = await request(first, "POST", "/connectors", {...})
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, overload

import aiohttp

from engine.testing.waiting import eventually

__all__ = ["HOST", "START_TIMEOUT_S", "WorkerCluster", "WorkerProcess", "free_port", "poll_until", "request",
           "worker_cluster"]

T = TypeVar("T")
HOST = "127.0.0.1"
START_TIMEOUT_S = 60.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


@dataclass
class WorkerProcess:
    name: str
    port: int
    process: subprocess.Popen[bytes]
    log: Path
    scheme: str = "http"
    tls: ssl.SSLContext | None = None  # what ``request`` uses for https (trust, client certificate)

    @property
    def url(self) -> str:
        return f"{self.scheme}://{HOST}:{self.port}"

    @property
    def worker_id(self) -> str:
        return f"{HOST}:{self.port}"

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        """kill -9: the worker vanishes mid-whatever; the group notices after session.timeout.ms."""
        if self.alive:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def stop(self, timeout: float = 30.0) -> int:
        """SIGTERM: plain stop() of everything it runs, then it leaves the group."""
        if self.alive:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
        return int(self.process.returncode)

    def output(self) -> str:
        with contextlib.suppress(OSError):
            return self.log.read_text(errors="replace")
        return ""


@dataclass
class WorkerCluster:
    """Workers of one group on one broker, with their own internal topics. ``scheme="https"`` gives
    them HTTPS listeners (``extra`` carries the ``ssl.*`` keys) and ``tls`` is the test's client side."""

    bootstrap: str
    directory: Path
    delay_ms: int = 0
    extra: dict[str, str] = field(default_factory=dict)
    scheme: str = "http"
    tls: ssl.SSLContext | None = None
    workers: list[WorkerProcess] = field(default_factory=list)

    def __post_init__(self) -> None:
        tag = uuid.uuid4().hex[:10]
        self.group = f"connect-{tag}"
        self.topics = {"config.storage.topic": f"cfg-{tag}", "status.storage.topic": f"status-{tag}",
                       "offset.storage.topic": f"offsets-{tag}"}
        self.record_file = self.directory / "calls.jsonl"

    def properties(self, port: int) -> dict[str, str]:
        return {"group.id": self.group, "bootstrap.servers": self.bootstrap,
                "listeners": f"{self.scheme}://{HOST}:{port}", **self.topics,
                "scheduled.rebalance.max.delay.ms": str(self.delay_ms),
                "session.timeout.ms": "6000", "heartbeat.interval.ms": "1000", "request.timeout.ms": "5000",
                "task.shutdown.graceful.timeout.ms": "3000", "connector.shutdown.graceful.timeout.ms": "3000",
                "offset.flush.interval.ms": "1000", **self.extra}

    def start_worker(self, port: int | None = None, *, log_level: str = "INFO") -> WorkerProcess:
        port = port or free_port()
        name = f"w{len(self.workers) + 1}"
        props = self.directory / f"{name}-{port}.properties"
        props.write_text("".join(f"{k}={v}\n" for k, v in self.properties(port).items()))
        log = self.directory / f"{name}-{port}.log"
        with log.open("ab") as out:
            process = subprocess.Popen(
                [sys.executable, "-m", "engine", "--log-level", log_level, "distributed", str(props)],
                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                env={**os.environ, "SPARK_LOCAL_IP": HOST})
        worker = WorkerProcess(name, port, process, log, self.scheme, self.tls)
        self.workers.append(worker)
        return worker

    async def started(self, *workers: WorkerProcess) -> None:
        """Wait until each worker's REST API answers (it has joined the group by then)."""
        deadline = time.monotonic() + START_TIMEOUT_S
        for worker in workers:
            while True:
                if not worker.alive:
                    raise AssertionError(f"{worker.name} exited:\n{worker.output()[-4000:]}")
                with contextlib.suppress(aiohttp.ClientError, OSError):
                    status, _ = await request(worker, "GET", "/connectors", retry_conflicts=False)
                    if status == 200:
                        break
                if time.monotonic() > deadline:
                    raise AssertionError(f"{worker.name} did not start:\n{worker.output()[-4000:]}")
                await asyncio.sleep(0.1)

    def live(self) -> list[WorkerProcess]:
        return [w for w in self.workers if w.alive]

    def calls(self) -> list[dict[str, Any]]:
        if not self.record_file.exists():
            return []
        return [json.loads(line) for line in self.record_file.read_text().splitlines() if line.strip()]

    def shutdown(self) -> None:
        for worker in self.workers:
            if worker.alive:
                os.killpg(worker.process.pid, signal.SIGTERM)
        for worker in self.workers:
            try:
                worker.process.wait(30)
            except subprocess.TimeoutExpired:
                worker.kill()


@contextlib.contextmanager
def worker_cluster(bootstrap: str, directory: Path, **options: Any) -> Iterator[WorkerCluster]:
    cluster = WorkerCluster(bootstrap, directory, **options)
    try:
        yield cluster
    finally:
        cluster.shutdown()


async def request(worker: WorkerProcess, method: str, path: str, body: Any = None, *,
                  retry_conflicts: bool = True, timeout: float = 60.0) -> tuple[int, Any]:
    """One REST call; a 409 during a rebalance is retried, as Connect's clients are told to."""
    deadline = time.monotonic() + timeout
    async with aiohttp.ClientSession() as session:
        while True:
            async with session.request(method, worker.url + path, json=body,
                                       ssl=worker.tls if worker.tls is not None else True) as response:
                text = await response.text()
                payload = json.loads(text) if text else None
                if response.status == 409 and retry_conflicts and time.monotonic() < deadline and \
                        "already exists" not in str(payload):
                    await asyncio.sleep(0.2)
                    continue
                return response.status, payload


@overload
async def poll_until(check: Callable[[], Awaitable[T | None]], *, timeout: float = ..., interval: float = ...,
                     what: str = ...) -> T: ...


@overload
async def poll_until(check: Callable[[], T | None], *, timeout: float = ..., interval: float = ...,
                     what: str = ...) -> T: ...


async def poll_until(check: Callable[[], object], *, timeout: float = 60.0, interval: float = 0.2,
                     what: str = "") -> Any:
    """``engine.testing.eventually`` with defaults for worker processes: a rebalance takes seconds."""
    return await eventually(check, timeout=timeout, interval=interval, what=what)
