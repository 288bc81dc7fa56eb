"""The two Connect runtimes side by side on one Apache Kafka, for bench/java_connect.py.

A worker is a process reached over REST, the same way for both: Java Connect
(``tests/differential/java_connect.py``, a normal JIT JVM, :data:`BENCH_JVM`) and ours
(``python -m engine standalone|distributed``). Each gets the same worker settings where Connect
has them (:data:`GROUP_SETTINGS`), and the bench asks both the same REST calls.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.testing.kafka.node import free_port
from tests.differential.java_connect import JavaConnect, Response, rest_call, start_java_connect

ROOT = Path(__file__).resolve().parents[1]
# A normal JIT JVM (C1 + C2, G1), for Java Connect and the broker alike: not the quick C1-only test JVM.
BENCH_JVM = ("-Xms512m", "-Xmx1g", "-XX:+UseG1GC", "-Djava.awt.headless=true")
BENCH_JVM_TEXT = "JVM " + " ".join(BENCH_JVM[:3]) + " (C1+C2 JIT)"
# Group settings both runtimes get in a cluster (Connect's keys; ours reads the same ones).
GROUP_SETTINGS = {
    "session.timeout.ms": "6000",
    "heartbeat.interval.ms": "1000",
    "scheduled.rebalance.max.delay.ms": "0",
    "offset.flush.interval.ms": "1000",
    "task.shutdown.graceful.timeout.ms": "3000",
}
RUNTIMES = ("java", "engine")


@dataclass
class Worker:
    """One worker process of either runtime."""

    runtime: str
    url: str
    stop_it: Any = field(repr=False)
    log: Path | None = None

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        retry_conflicts: bool = True,
        timeout: float = 120.0,
    ) -> Response:
        """A REST call; a 409 while the group rebalances is retried, as Connect tells clients to."""
        deadline = time.monotonic() + timeout
        while True:
            answer = rest_call(self.url, method, path, body, timeout=timeout)
            if (
                answer.status == 409
                and retry_conflicts
                and time.monotonic() < deadline
                and "already exists" not in answer.text
            ):
                time.sleep(0.05)
                continue
            return answer

    def stop(self) -> None:
        self.stop_it()


def wait_rest(url: str, alive: Any, timeout: float = 120.0, what: str = "worker") -> None:
    deadline = time.monotonic() + timeout
    while True:
        if not alive():
            raise RuntimeError(f"{what} at {url} exited before its REST API answered")
        with contextlib.suppress(OSError):
            if rest_call(url, "GET", "/connectors", timeout=5).status == 200:
                return
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} at {url} did not answer within {timeout:g} s")
        time.sleep(0.05)


def _stop_process(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def start_engine(
    mode: str,
    bootstrap: str,
    directory: Path,
    extra: Mapping[str, str] | None = None,
    *,
    wait: bool = True,
    profile: Path | None = None,
) -> Worker:
    """``python -m engine <mode> worker.properties`` on a free port (logs at WARNING); ``profile``: under
    pyinstrument (sampling), its pstats written there when the worker stops."""
    port = free_port()
    tag = uuid.uuid4().hex[:6]
    props = {"bootstrap.servers": bootstrap, "listeners": f"http://127.0.0.1:{port}", **(extra or {})}
    if mode == "standalone":
        props.setdefault("offset.storage.file.filename", str(directory / f"offsets-{tag}"))
    path = directory / f"engine-{mode}-{port}.properties"
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    log = directory / f"engine-{mode}-{port}.log"
    with log.open("ab") as out:
        profiler = [] if profile is None else ["-m", "pyinstrument", "-r", "pstats", "-o", str(profile)]
        process = subprocess.Popen(
            [sys.executable, *profiler, "-m", "engine", "--log-level", "WARNING", mode, str(path)],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
            start_new_session=True,
        )
    worker = Worker("engine", f"http://127.0.0.1:{port}", lambda: _stop_process(process), log)
    worker.process = process  # type: ignore[attr-defined]
    if wait:
        try:
            wait_rest(worker.url, lambda: process.poll() is None, what="engine worker")
        except BaseException:
            _stop_process(process)
            raise
    return worker


def start_java(
    mode: str,
    bootstrap: str,
    directory: Path,
    extra: Mapping[str, str] | None = None,
    *,
    group_id: str | None = None,
    topics: Mapping[str, str] | None = None,
) -> Worker:
    """Java Connect (``ConnectStandalone``/``ConnectDistributed``) on :data:`BENCH_JVM`."""
    work = directory / f"java-{uuid.uuid4().hex[:6]}"
    java: JavaConnect = start_java_connect(
        bootstrap,
        mode=mode,
        group_id=group_id,
        topics=topics,  # type: ignore[arg-type]
        worker_config=dict(extra or {}),
        jvm_options=BENCH_JVM,
        directory=work,
    )
    worker = Worker("java", java.url, java.stop, java.log_file)
    worker.java = java  # type: ignore[attr-defined]
    return worker


def start_worker(
    runtime: str,
    mode: str,
    bootstrap: str,
    directory: Path,
    extra: Mapping[str, str] | None = None,
    *,
    group_id: str | None = None,
    topics: Mapping[str, str] | None = None,
) -> Worker:
    """A worker of ``runtime`` (``java`` or ``engine``); distributed workers given the same
    ``group_id`` and ``topics`` form one cluster."""
    if runtime == "java":
        return start_java(mode, bootstrap, directory, extra, group_id=group_id, topics=topics)
    settings = dict(extra or {})
    if mode == "distributed":
        settings |= {"group.id": group_id or f"engine-{uuid.uuid4().hex[:8]}", **(topics or {})}
    return start_engine(mode, bootstrap, directory, settings)


def cluster_names(runtime: str) -> tuple[str, dict[str, str]]:
    """A fresh group id and internal topic names."""
    tag = f"{runtime}-{uuid.uuid4().hex[:8]}"
    return f"group-{tag}", {
        "config.storage.topic": f"cfg-{tag}",
        "offset.storage.topic": f"off-{tag}",
        "status.storage.topic": f"st-{tag}",
    }


@contextlib.contextmanager
def workers() -> Iterator[list[Worker]]:
    """A list the caller appends started workers to; each is stopped afterwards."""
    started: list[Worker] = []
    try:
        yield started
    finally:
        for worker in reversed(started):
            with contextlib.suppress(Exception):
                worker.stop()


def statuses(worker: Worker) -> dict[str, Any]:
    """``GET /connectors?expand=status``: name -> status."""
    answer = worker.call("GET", "/connectors?expand=status")
    assert answer.status == 200, answer.text
    return {name: entry["status"] for name, entry in (answer.json or {}).items()}


def all_running(status: Mapping[str, Any], names: set[str], tasks: int = 1) -> bool:
    if not names <= status.keys():
        return False
    for name in names:
        s = status[name]
        if (
            s["connector"]["state"] != "RUNNING"
            or len(s["tasks"]) != tasks
            or any(t["state"] != "RUNNING" for t in s["tasks"])
        ):
            return False
    return True
