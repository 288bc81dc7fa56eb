"""A cluster of real worker processes holding N connectors, walked as an operator would; Java Connect the same.

Three distributed workers (``connect-engine distributed``, separate processes) on one Apache Kafka 4.1
broker (KRaft, Maven jars), with N connectors of the test kit's source connector x 2 tasks whose
``poll()`` sleeps 1 s and returns nothing (``test.poll.idle.ms=1000``, as Connect's FileStream source
waits when idle). The walk, each step timed:

1. create: N POSTs one after another from one client (the rate, and p50/p99 of each POST);
2. first POST -> every connector and task RUNNING (``GET /connectors?expand=status``, every 0.5 s);
3. REST p50/p99 with them present: ``GET /connectors``, ``GET /connectors/{name}/status``,
   ``GET /connectors?expand=status``, spread over the workers;
4. resident memory of each worker (``/proc/<pid>/status`` VmRSS), before and after, per connector;
5. kill -9 of a worker: -> all RUNNING on the other two; then the same worker (same port, same id)
   started again: -> all RUNNING with it holding its share (at least 90 % of units / workers);
6. a rolling restart: each worker in turn stopped (SIGTERM) and started, waiting for all RUNNING with
   it holding its share before the next;
7. a 4th worker: process start -> its ``GET /connectors`` lists all N (the config topic read) -> its
   share RUNNING;
8. delete: N DELETEs one after another, then -> ``GET /connectors`` empty.

Then (ours, ``--present``, 10,000 by default) a cluster of ``--present-workers`` (3) holding that many
connectors, their configs written straight to its config topic as a leader writes them: written -> all
RUNNING, REST p50/p99, RSS; ``--present-parked`` gives them tasks that park instead of polling idle.

``--runtime java`` walks Java Connect 4.1 (``bench/runtimes.py``'s JVM and settings) with
``FileStreamSourceConnector`` on an empty file (``tasks.max=1``: Connect ships no idle source with
more tasks), as ``bench/java_connect.py`` runs it; ``--budget`` bounds each step, and a step past it
ends the walk there (the section says where). ``--profile`` runs the first worker of ours under
pyinstrument; the top of its profile goes in the section.

    python bench/cluster_processes.py [--runtime engine|java|both] [--connectors 1000 3000]
        [--java-connectors 1000] [--present 10000] [--present-workers 3] [--present-parked] [--budget 900]
        [--profile] [--append BENCHMARKS.md]
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import logging
import os
import platform
import pstats
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.report import append_to  # noqa: E402
from bench.runtimes import BENCH_JVM, BENCH_JVM_TEXT, GROUP_SETTINGS, cluster_names  # noqa: E402
from engine.testing.cluster import WorkerCluster, WorkerProcess  # noqa: E402
from engine.testing.kafka import apache_kafka  # noqa: E402
from tests.differential.java_connect import (  # noqa: E402
    JavaConnect,
    Response,
    rest_call,
    start_java_connect,
)

ENGINE_SOURCE = {
    "connector.class": "engine.testing.RecordingSourceConnector",
    "tasks.max": "2",
    "test.poll.idle.ms": "1000",
}
JAVA_SOURCE = {
    "connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
    "tasks.max": "1",
    "topic": "idle",
    "key.converter": "org.apache.kafka.connect.storage.StringConverter",
    "value.converter": "org.apache.kafka.connect.storage.StringConverter",
}
LABEL = {"engine": "connect-engine", "java": "Java Connect 4.1"}
SHARE = 0.9  # a worker holds its share with at least this fraction of units / workers


class StepTimeout(Exception):
    """A step did not finish within the budget: the walk ends there."""


def _within(began: float, budget: float, what: str) -> None:
    """Raise :class:`StepTimeout` once ``budget`` seconds have passed since ``began`` (perf_counter)."""
    if time.perf_counter() - began > budget:
        raise StepTimeout(what)


def _progress(text: str) -> None:
    sys.stderr.write(f"[{time.strftime('%H:%M:%S')}] {text}\n")
    sys.stderr.flush()


@dataclass
class Node:
    """One worker process of either runtime, restartable on its port (so with its worker id)."""

    runtime: str
    port: int
    start_it: Callable[[], Any]
    kill_it: Callable[[], object]
    stop_it: Callable[[], object]
    pid_of: Callable[[], int | None]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def worker_id(self) -> str:
        return f"127.0.0.1:{self.port}"

    def call(self, method: str, path: str, body: Any = None) -> Response:
        """One REST call; a 409 while the group rebalances is retried, as Connect tells clients to."""
        deadline = time.monotonic() + 120
        while True:
            answer = rest_call(self.url, method, path, body, timeout=120)
            if answer.status == 409 and "already exists" not in answer.text and time.monotonic() < deadline:
                time.sleep(0.05)
                continue
            return answer

    def rss(self) -> int:
        pid = self.pid_of()
        if pid is None:
            return 0
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        return 0


@dataclass
class Fleet:
    """The runtime's workers of one cluster; ``add`` starts one more."""

    runtime: str
    bootstrap: str
    directory: Path
    profile: Path | None = None
    nodes: list[Node] = field(default_factory=list)
    _engine: WorkerCluster | None = None
    _group: tuple[str, dict[str, str]] = ("", {})

    def __post_init__(self) -> None:
        if self.runtime == "engine":
            self._engine = WorkerCluster(self.bootstrap, self.directory, extra=dict(GROUP_SETTINGS))
        else:
            self._group = cluster_names("java")

    def add(self) -> Node:
        return self._add_engine() if self.runtime == "engine" else self._add_java()

    def _add_engine(self) -> Node:
        cluster = self._engine
        assert cluster is not None
        held: list[WorkerProcess] = []
        profile = self.profile if not self.nodes else None

        def start() -> None:
            port = held[0].port if held else None
            worker = cluster.start_worker(port, log_level="WARNING")
            if profile is not None and not held:  # the first incarnation: create through the kill -9
                _under_pyinstrument(cluster, worker, profile)
            held[:] = [worker]

        start()
        node = Node(
            "engine",
            held[0].port,
            start,
            lambda: held[0].kill(),
            lambda: held[0].stop(60),
            lambda: held[0].process.pid if held[0].alive else None,
        )
        _wait_ready(node)
        self.nodes.append(node)
        return node

    def _add_java(self) -> Node:
        group, topics = self._group
        java: JavaConnect = start_java_connect(
            self.bootstrap,
            group_id=group,
            topics=topics,
            worker_config=dict(GROUP_SETTINGS),
            jvm_options=BENCH_JVM,
            directory=self.directory / f"java-{len(self.nodes) + 1}",
        )
        node = Node(
            "java",
            java.port,
            lambda: java.start(300),
            java.kill,
            lambda: java.stop(60),
            lambda: java.process.pid if java.running and java.process is not None else None,
        )
        self.nodes.append(node)
        return node

    def close(self) -> None:
        for node in reversed(self.nodes):
            with contextlib.suppress(Exception):
                node.stop_it()
        if self._engine is not None:
            self._engine.shutdown()


def _under_pyinstrument(cluster: WorkerCluster, worker: WorkerProcess, target: Path) -> None:
    """Start ``worker`` again under pyinstrument (its pstats written to ``target`` when it stops)."""
    import subprocess

    worker.stop()
    props = cluster.directory / f"{worker.name}-{worker.port}.properties"
    with worker.log.open("ab") as out:
        worker.process = subprocess.Popen(
            [
                sys.executable,
                *("-m", "pyinstrument", "-r", "pstats", "-o", str(target)),
                *("-m", "engine", "--log-level", "WARNING", "distributed", str(props)),
            ],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def _wait_ready(node: Node, timeout: float = 300.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(OSError):
            if rest_call(node.url, "GET", "/connectors", timeout=30).status == 200:
                return
        if time.monotonic() > deadline:
            raise StepTimeout(f"{node.runtime} worker {node.worker_id} did not answer")
        time.sleep(0.1)


def _statuses(node: Node) -> dict[str, Any]:
    answer = node.call("GET", "/connectors?expand=status")
    if answer.status != 200:
        return {}
    return {name: entry["status"] for name, entry in (answer.json or {}).items()}


def _settled(status: dict[str, Any], names: set[str], tasks: int) -> bool:
    if len(status) != len(names) or not names <= status.keys():
        return False
    return all(
        s["connector"]["state"] == "RUNNING"
        and len(s["tasks"]) == tasks
        and all(t["state"] == "RUNNING" for t in s["tasks"])
        for s in status.values()
    )


def _held(status: dict[str, Any], worker_id: str) -> int:
    return sum(
        (s["connector"]["worker_id"] == worker_id) + sum(t["worker_id"] == worker_id for t in s["tasks"])
        for s in status.values()
    )


def _until(
    node: Node,
    names: set[str],
    tasks: int,
    budget: float,
    what: str,
    *,
    holds: Callable[[dict[str, Any]], bool],
) -> float:
    """Seconds until every connector and task is RUNNING and ``holds`` is true of the statuses."""
    began = time.perf_counter()
    deadline = time.monotonic() + budget
    while True:
        asked = time.perf_counter()
        status = _statuses(node)
        took = time.perf_counter() - asked
        if _settled(status, names, tasks) and holds(status):
            return time.perf_counter() - began
        if time.monotonic() > deadline:
            raise StepTimeout(what)
        time.sleep(max(0.5, 4 * took))  # at 10,000 a status of everything costs the worker ~0.25 s


def _holds_share(status: dict[str, Any], *, worker_id: str, share: float) -> bool:
    return _held(status, worker_id) >= share


def _latency_cell(result: dict[str, Any], *, label: str) -> str:
    p50, p99 = result["rest"][label]
    return f"{p50 * 1000:.1f} / {p99 * 1000:.1f} ms"


def _generation(node: Node) -> int | None:
    """Ours: the group generation from ``/metrics`` (Java Connect keeps it in JMX)."""
    if node.runtime != "engine":
        return None
    for line in node.call("GET", "/metrics").text.splitlines():
        if line.startswith("kafka_connect_worker_rebalance_epoch"):
            return int(float(line.split()[-1]))
    return None


def _percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def _rest_latency(
    nodes: list[Node], names: list[str], rounds: dict[str, int]
) -> dict[str, tuple[float, float]]:
    chooser = random.Random(7)
    paths: dict[str, Callable[[], str]] = {
        "GET /connectors": lambda: "/connectors",
        "GET /connectors/{name}/status": lambda: f"/connectors/{chooser.choice(names)}/status",
        "GET /connectors?expand=status": lambda: "/connectors?expand=status",
    }
    out = {}
    for label, path in paths.items():
        samples = []
        for i in range(rounds[label]):
            node = nodes[i % len(nodes)]
            began = time.perf_counter()
            answer = rest_call(node.url, "GET", path(), timeout=60)
            samples.append(time.perf_counter() - began)
            assert answer.status == 200, (label, answer.status, answer.text[:200])
        out[label] = _percentiles(samples)
    return out


def walk(
    runtime: str, connectors: int, bootstrap: str, directory: Path, budget: float, profile: Path | None
) -> dict[str, Any]:
    """The whole walk on a fresh cluster; a step past ``budget`` ends it (``stopped`` names the step)."""
    tasks = 2 if runtime == "engine" else 1
    units_per = 1 + tasks
    config = (
        dict(ENGINE_SOURCE) if runtime == "engine" else {**JAVA_SOURCE, "file": str(directory / "empty.txt")}
    )
    (directory / "empty.txt").touch()
    names = [f"c-{i:05d}" for i in range(connectors)]
    everything = set(names)
    units = connectors * units_per
    result: dict[str, Any] = {"runtime": runtime, "connectors": connectors, "units": units, "tasks": tasks}
    fleet = Fleet(runtime, bootstrap, directory, profile)
    step = "start"
    try:
        for _ in range(3):
            fleet.add()
        nodes = list(fleet.nodes)
        first = nodes[0]
        time.sleep(2)
        result["rss_before"] = [n.rss() for n in nodes]

        step = "create"
        generation = _generation(first)
        posts: list[float] = []
        began = time.perf_counter()
        for name in names:
            t = time.perf_counter()
            answer = first.call("POST", "/connectors", {"name": name, "config": config})
            posts.append(time.perf_counter() - t)
            assert answer.status == 201, (runtime, name, answer.status, answer.text[:300])
            result["created"] = len(posts)
            _within(began, budget, f"created {len(posts):,} of {connectors:,}")
            if len(posts) % 500 == 0:
                _progress(
                    f"{runtime}: {len(posts):,} created, {len(posts) / (time.perf_counter() - began):.1f}/s"
                )
        result["create_s"] = time.perf_counter() - began
        result["post_p50"], result["post_p99"] = _percentiles(posts)
        _progress(f"{runtime}: {connectors:,} POSTs in {result['create_s']:.1f} s")

        step = "all RUNNING"
        waited = _until(first, everything, tasks, budget, step, holds=lambda _s: True)
        result["running_s"] = result["create_s"] + waited
        after = _generation(first)
        if generation is not None and after is not None:
            result["rounds"] = after - generation
        _progress(f"{runtime}: all RUNNING {result['running_s']:.1f} s after the first POST")

        step = "REST latency"
        time.sleep(2)
        result["rest"] = _rest_latency(
            nodes,
            names,
            {
                "GET /connectors": 100,
                "GET /connectors/{name}/status": 300,
                "GET /connectors?expand=status": 20,
            },
        )
        result["rss_after"] = [n.rss() for n in nodes]

        step = "kill -9"
        victim = nodes[2]
        began = time.perf_counter()
        victim.kill_it()
        result["failover_s"] = _until(
            first, everything, tasks, budget, step, holds=lambda s: _held(s, victim.worker_id) == 0
        )
        _progress(f"{runtime}: kill -9 -> all RUNNING on the others in {result['failover_s']:.1f} s")
        step = "return after kill -9"
        began = time.perf_counter()
        victim.start_it()
        _wait_ready(victim)
        share = SHARE * units / 3
        _until(first, everything, tasks, budget, step, holds=lambda s: _held(s, victim.worker_id) >= share)
        result["return_s"] = time.perf_counter() - began
        _progress(f"{runtime}: the killed worker back with its share in {result['return_s']:.1f} s")

        step = "rolling restart"
        began = time.perf_counter()
        for node in nodes:
            node.stop_it()
            node.start_it()
            _wait_ready(node)
            _until(
                first if node is not first else nodes[1],
                everything,
                tasks,
                budget,
                step,
                holds=functools.partial(_holds_share, worker_id=node.worker_id, share=SHARE * units / 3),
            )
        result["rolling_s"] = time.perf_counter() - began
        _progress(f"{runtime}: rolling restart in {result['rolling_s']:.1f} s")

        step = "4th worker"
        began = time.perf_counter()
        fourth = fleet.add()
        result["fourth_ready_s"] = time.perf_counter() - began
        while len(fourth.call("GET", "/connectors").json or []) < connectors:
            _within(began, budget, step)
            time.sleep(0.05)
        result["fourth_caught_up_s"] = time.perf_counter() - began
        _until(
            first,
            everything,
            tasks,
            budget,
            step,
            holds=lambda s: _held(s, fourth.worker_id) >= SHARE * units / 4,
        )
        result["fourth_share_s"] = time.perf_counter() - began
        result["rss_four"] = [n.rss() for n in fleet.nodes]
        _progress(
            f"{runtime}: 4th worker caught up {result['fourth_caught_up_s']:.1f} s, share {result['fourth_share_s']:.1f} s"
        )

        step = "delete"
        began = time.perf_counter()
        for name in names:
            answer = first.call("DELETE", f"/connectors/{name}")
            assert answer.status == 204, (runtime, name, answer.status, answer.text[:300])
            _within(began, budget, step)
        result["deletes_s"] = time.perf_counter() - began
        while first.call("GET", "/connectors").json:
            _within(began, budget, step)
            time.sleep(0.2)
        result["deleted_s"] = time.perf_counter() - began
        _progress(f"{runtime}: all deleted in {result['deleted_s']:.1f} s")
    except StepTimeout as stopped:
        result["stopped"] = f"{step}: {stopped} (budget {budget:g} s)"
        _progress(f"{runtime}: stopped at {result['stopped']}")
    finally:
        fleet.close()
    return result


def _write_configs(bootstrap: str, topic: str, names: list[str], config: dict[str, str]) -> None:
    """Connector configs written straight into a running cluster's config topic, as its leader writes
    them for a POST: the quick way to have thousands present (posting them is what ``walk`` measures)."""
    import asyncio
    import json

    from aiokafka import AIOKafkaProducer

    async def write() -> None:
        producer = AIOKafkaProducer(
            bootstrap_servers=bootstrap, acks="all", enable_idempotence=False, linger_ms=5
        )
        await producer.start()
        try:
            for name in names:
                value = json.dumps({"properties": {**config, "name": name}}).encode()
                await producer.send(topic, value, key=f"connector-{name}".encode(), partition=0)
            await producer.flush()
        finally:
            await producer.stop()

    asyncio.run(write())


def present(
    connectors: int,
    bootstrap: str,
    directory: Path,
    budget: float,
    config: dict[str, str] | None = None,
    *,
    workers: int = 3,
) -> dict[str, Any]:
    """REST p50/p99 on a cluster of ``workers`` of ours holding ``connectors`` (x 2 tasks), written to
    its config topic; ``config`` defaults to the walk's idle-polling source."""
    names = [f"c-{i:05d}" for i in range(connectors)]
    result: dict[str, Any] = {
        "runtime": "engine",
        "connectors": connectors,
        "units": 3 * connectors,
        "tasks": 2,
        "workers": workers,
        "parked": config is not None and "test.poll.idle.ms" not in config,
    }
    fleet = Fleet("engine", bootstrap, directory)
    step = "start"
    try:
        nodes = [fleet.add() for _ in range(workers)]
        node = nodes[0]
        time.sleep(2)
        result["rss_before"] = [n.rss() for n in nodes]
        assert fleet._engine is not None
        began = time.perf_counter()
        _write_configs(
            bootstrap, fleet._engine.topics["config.storage.topic"], names, config or ENGINE_SOURCE
        )
        step = "all RUNNING"
        _until(node, set(names), 2, budget, step, holds=lambda _s: True)
        result["running_s"] = time.perf_counter() - began
        _progress(
            f"engine: {connectors:,} written -> all RUNNING on {workers} workers in {result['running_s']:.1f} s"
        )
        time.sleep(2)
        step = "REST latency"
        result["rest"] = _rest_latency(
            nodes,
            names,
            {
                "GET /connectors": 100,
                "GET /connectors/{name}/status": 300,
                "GET /connectors?expand=status": 20,
            },
        )
        result["rss_after"] = [n.rss() for n in nodes]
    except StepTimeout as stopped:
        result["stopped"] = f"{step}: {stopped} (budget {budget:g} s)"
    finally:
        fleet.close()
    return result


def markdown_present(result: dict[str, Any]) -> str:
    n = result["connectors"]
    out = [
        "",
        f"REST with {n:,} connectors present on {result['workers']} workers of ours (written to their config "
        "topic, as a leader writes a POST's config; each with 2 tasks "
        + ("parked, the test kit's default source" if result["parked"] else "polling idle")
        + "): written -> all RUNNING "
        + (f"{result['running_s']:.1f} s" if "running_s" in result else "—")
        + ". REST samples spread over the workers.",
        "",
        "| request | p50 | p99 |",
        "|---|---|---|",
    ]
    for label, (p50, p99) in result.get("rest", {}).items():
        out.append(f"| `{label}` | {p50 * 1000:.1f} ms | {p99 * 1000:.1f} ms |")
    if "rss_after" in result:
        grown = sum(result["rss_after"]) - sum(result["rss_before"])
        out += [
            "",
            "The workers' RSS: "
            + ", ".join(_mb(v) for v in result["rss_before"])
            + " empty, "
            + ", ".join(_mb(v) for v in result["rss_after"])
            + f" with them ({grown / len(result['rss_after']) / n / 1024:,.0f} KB per connector with its 2 "
            "tasks on each worker, every worker keeping every connector).",
        ]
    if result.get("stopped"):
        out += ["", f"Stopped at {result['stopped']}."]
    return "\n".join(out) + "\n"


def _top(pstats_file: Path, lines: int = 20) -> str:
    if not pstats_file.exists():
        return ""
    stream = io.StringIO()
    pstats.Stats(str(pstats_file), stream=stream).sort_stats("tottime").print_stats(lines + 2)
    idle = ("epoll.poll", "selectors.py")  # waiting for I/O, not work
    kept = [
        line.rstrip()
        for line in stream.getvalue().splitlines()
        if line.strip() and not any(w in line for w in idle)
    ]
    start = next((i for i, line in enumerate(kept) if line.lstrip().startswith("ncalls")), 0)
    return "\n".join(
        line.replace(str(ROOT) + "/", "").replace(sys.prefix, "<venv>") for line in kept[max(0, start - 1) :]
    )


def _mb(value: float) -> str:
    return f"{value / 2**20:,.0f} MB"


def markdown(results: list[dict[str, Any]], command: str, load_start: float, profile: str) -> str:
    load_end = os.getloadavg()[0]
    out = [
        "## Real worker processes: a 3-worker cluster holding thousands of connectors",
        "",
        f"Command: `{command}` ({platform.python_implementation()} {platform.python_version()}, "
        f"{platform.machine()}, {os.cpu_count()} cores, run {time.strftime('%Y-%m-%d')}; Apache Kafka 4.1, "
        f"one KRaft node; Java Connect 4.1 and the broker on {BENCH_JVM_TEXT}). "
        + (
            "**Taken under load**: the machine is shared with other work, "
            if max(load_start, load_end) > (os.cpu_count() or 1)
            else "Taken on a quiet machine: "
        )
        + f"1-min load average {load_start:.1f} at the start and {load_end:.1f} at the end.",
        "",
        "Three distributed workers (separate processes, one group and its internal topics per run) with "
        + ", ".join(f"`{k}={v}`" for k, v in GROUP_SETTINGS.items())
        + ". Ours: the test kit's `RecordingSourceConnector`, `tasks.max=2`, `test.poll.idle.ms=1000` "
        "(each task's `poll()` sleeps 1 s and returns nothing, as an idle FileStream source waits). Java "
        "Connect: `FileStreamSourceConnector` on an empty file (1 task: it makes one whatever `tasks.max` "
        "says). Creates and deletes are one request after another from one client on the first worker; "
        '"all RUNNING" is read from `GET /connectors?expand=status` every 0.5 s (or 4 times as long as the last answer took); a worker holds its share '
        f"with at least {SHARE:.0%} of (connectors + tasks) / workers. REST samples are spread over the "
        "three workers (100 x `GET /connectors`, 300 x one random connector's status, 20 x "
        "`?expand=status`). Memory: resident set of each worker's process (VmRSS).",
        "",
    ]
    header = (
        "| measure | " + " | ".join(f"{LABEL[r['runtime']]}, {r['connectors']:,}" for r in results) + " |"
    )
    out += [header, "|---" * (len(results) + 1) + "|"]

    def row(label: str, fn: Callable[[dict[str, Any]], str]) -> None:
        cells = []
        for r in results:
            try:
                cells.append(fn(r))
            except (KeyError, ZeroDivisionError, TypeError, IndexError):
                cells.append("—")
        out.append(f"| {label} | " + " | ".join(cells) + " |")

    row("connectors + tasks", lambda r: f"{r['units']:,}")
    row(
        "create: all POSTs answered",
        lambda r: f"{r['create_s']:.1f} s ({r['connectors'] / r['create_s']:.1f}/s)",
    )
    row("POST p50 / p99", lambda r: f"{r['post_p50'] * 1000:.0f} / {r['post_p99'] * 1000:.0f} ms")
    row("first POST -> all RUNNING", lambda r: f"{r['running_s']:.1f} s")
    row("rebalance rounds, first POST -> all RUNNING", lambda r: f"{r['rounds']:,}")
    for label in ("GET /connectors", "GET /connectors/{name}/status", "GET /connectors?expand=status"):
        row(
            f"`{label}` p50 / p99",
            functools.partial(_latency_cell, label=label),
        )
    row("RSS per worker, empty", lambda r: ", ".join(_mb(v) for v in r["rss_before"]))
    row("RSS per worker, all present", lambda r: ", ".join(_mb(v) for v in r["rss_after"]))
    row(
        "RSS per connector (mean over workers)",
        lambda r: (
            f"{statistics.mean(a - b for a, b in zip(r['rss_after'], r['rss_before'], strict=True)) / r['connectors'] / 1024:,.0f} KB"
        ),
    )
    row("kill -9 -> all RUNNING on the other two", lambda r: f"{r['failover_s']:.1f} s")
    row("killed worker started again -> its share RUNNING", lambda r: f"{r['return_s']:.1f} s")
    row("rolling restart of the 3 workers", lambda r: f"{r['rolling_s']:.1f} s")
    row("4th worker: process start -> REST answers", lambda r: f"{r['fourth_ready_s']:.1f} s")
    row("4th worker: -> lists every connector", lambda r: f"{r['fourth_caught_up_s']:.1f} s")
    row("4th worker: -> its share RUNNING", lambda r: f"{r['fourth_share_s']:.1f} s")
    row("delete: all DELETEs answered", lambda r: f"{r['deletes_s']:.1f} s")
    row("delete: -> `GET /connectors` empty", lambda r: f"{r['deleted_s']:.1f} s")
    stopped = [r for r in results if r.get("stopped")]
    if stopped:
        out += [""] + [
            f"- {LABEL[r['runtime']]} with {r['connectors']:,} connectors stopped at {r['stopped']}."
            for r in stopped
        ]
    if profile:
        out += [
            "",
            "Top of a profile of our first worker over the whole walk (pyinstrument, the event loop's thread, "
            "pstats sorted by own time):",
            "",
            "```",
            profile,
            "```",
        ]
    return "\n".join(out) + "\n"


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    logging.basicConfig(level=logging.ERROR)
    logging.getLogger("aiokafka").setLevel(logging.CRITICAL)
    yield


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runtime", choices=("engine", "java", "both"), default="both")
    parser.add_argument(
        "--connectors", type=int, nargs="*", default=[1000, 3000], help="sizes for ours (none: skip)"
    )
    parser.add_argument(
        "--java-connectors", type=int, nargs="+", default=[1000], help="sizes for Java Connect"
    )
    parser.add_argument("--budget", type=float, default=900.0, help="seconds each step may take")
    parser.add_argument("--profile", action="store_true", help="ours: the first worker under pyinstrument")
    parser.add_argument(
        "--present",
        type=int,
        default=10_000,
        help="ours: REST latency on one worker holding this many connectors (0: skip)",
    )
    parser.add_argument("--present-workers", type=int, default=3, help="ours: workers holding --present")
    parser.add_argument(
        "--present-parked",
        action="store_true",
        help="ours: --present's tasks park (the test kit's default) instead of polling idle once a second",
    )
    parser.add_argument("--append", metavar="FILE", help="append the markdown section to FILE")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    command = ("python bench/cluster_processes.py " + " ".join(sys.argv[1:])).strip()
    results = []
    profile_text = ""
    with _quiet(), apache_kafka("4.1", jvm_options=BENCH_JVM) as kafka, tempfile.TemporaryDirectory() as tmp:
        bootstrap = kafka.bootstrap_servers()
        plan = []
        if args.runtime in ("engine", "both"):
            plan += [("engine", n) for n in args.connectors]
        if args.runtime in ("java", "both"):
            plan += [("java", n) for n in args.java_connectors]
        for runtime, n in plan:
            directory = Path(tmp) / f"{runtime}-{n}"
            directory.mkdir()
            target = directory / "worker.pstats" if args.profile and runtime == "engine" else None
            results.append(walk(runtime, n, bootstrap, directory, args.budget, target))
            if target is not None:
                profile_text = _top(target) or profile_text
        if args.present and args.runtime in ("engine", "both"):
            directory = Path(tmp) / f"present-{args.present}"
            directory.mkdir()
            parked = {k: v for k, v in ENGINE_SOURCE.items() if k != "test.poll.idle.ms"}
            held = present(
                args.present,
                bootstrap,
                directory,
                args.budget,
                parked if args.present_parked else None,
                workers=args.present_workers,
            )
    if results:
        report = markdown(results, command, load, profile_text)
    else:  # --present alone
        report = (
            "## Real worker processes: a cluster holding thousands of connectors\n\n"
            f"Command: `{command}` ({os.cpu_count()} cores, run {time.strftime('%Y-%m-%d')}; Apache Kafka 4.1, "
            f"one KRaft node on {BENCH_JVM_TEXT}); 1-min load average {load:.1f} at the start and "
            f"{os.getloadavg()[0]:.1f} at the end.\n"
        )
    if args.present and args.runtime in ("engine", "both"):
        report += markdown_present(held)
    print(report)
    append_to(args.append, "\n" + report)


if __name__ == "__main__":
    main()
