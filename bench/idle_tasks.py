"""What an idle task costs its worker: CPU time per empty ``poll()`` (sources) or per idle second (sinks).

An embedded ``Engine`` runs N connectors x 2 tasks that have nothing to do, lets them settle, then
reads the process's CPU time (``time.process_time()``, every thread) over a stretch of idling:

- ``async``: the test kit's source with ``test.poll.idle.ms=1000`` (an ``async def poll`` that sleeps
  1 s and returns nothing);
- ``sync``: a synchronous source whose ``poll`` sleeps 1 s in its thread and returns None, as an idle
  blocking source does (Connect's FileStreamSourceTask waits 1 s);
- ``sink``: the test kit's sink on a topic that receives nothing (its loop still calls ``put`` with
  an empty batch at each offset-commit interval, as Connect does).

Each measurement runs in its own process; ``--against PATH`` runs the same measurement on the
``engine`` of another checkout first (a same-run before/after). ``--kafka`` runs on the topics of
an Apache Kafka 4.1 node instead of in-process ones.

    python bench/idle_tasks.py [--connectors 1000] [--seconds 20] [--against PATH] [--kafka]
        [--profile] [--append BENCHMARKS.md]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import logging
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TASKS = 2
KINDS = ("async", "sync", "sink")
IDLE_MS = 1000
MODULE = "idle_tasks_bench"  # this file's name for the engine's class loader, whichever engine runs it

if "--child" not in sys.argv:  # a measuring child imports the engine its PYTHONPATH names
    sys.path.insert(0, str(ROOT))

from engine.api import SourceConnector, SourceRecord, SourceTask, Task  # noqa: E402
from engine.testing.recording import (  # noqa: E402
    RecordingSinkConnector,
    RecordingSinkTask,
    RecordingSourceConnector,
    RecordingSourceTask,
)

_CALLS = itertools.count()  # next() is atomic in CPython: sync polls count from their threads


class CountedSourceTask(RecordingSourceTask):
    async def poll(self) -> list[SourceRecord] | None:
        next(_CALLS)
        return await super().poll()


class CountedSinkTask(RecordingSinkTask):
    async def put(self, records: Any) -> None:
        next(_CALLS)
        await super().put(records)


class IdleSyncTask(SourceTask):
    def start(self, props: dict[str, str]) -> None:
        return None

    def poll(self) -> list[SourceRecord] | None:
        next(_CALLS)
        time.sleep(IDLE_MS / 1000)
        return None

    def stop(self, connector_deleted: bool = False) -> None:
        return None


class IdleSyncConnector(SourceConnector):
    def start(self, props: dict[str, str]) -> None:
        return None

    def stop(self) -> None:
        return None

    def task_class(self) -> type[Task]:
        return IdleSyncTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{} for _ in range(max_tasks)]


class CountedSourceConnector(RecordingSourceConnector):
    task_type = CountedSourceTask


class CountedSinkConnector(RecordingSinkConnector):
    task_type = CountedSinkTask


# the engine loads classes by name: this file is ``__main__`` when run, so it gets a name of its own
sys.modules.setdefault(MODULE, sys.modules[__name__])
for _cls in (
    CountedSourceTask,
    CountedSinkTask,
    IdleSyncTask,
    IdleSyncConnector,
    CountedSourceConnector,
    CountedSinkConnector,
):
    _cls.__module__ = MODULE
CLASSES = {
    kind: f"{MODULE}.{name}"
    for kind, name in (
        ("async", "CountedSourceConnector"),
        ("sync", "IdleSyncConnector"),
        ("sink", "CountedSinkConnector"),
    )
}


async def _measure(
    kind: str, n: int, seconds: float, bootstrap: str | None, settle: float, profile: str | None = None
) -> dict[str, Any]:
    import structlog

    from engine import Engine

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    n = 0 if kind == "none" else n  # "none": the engine alone, what its own clients cost while idle
    config = {"connector.class": CLASSES.get(kind, ""), "tasks.max": str(TASKS)}
    if kind == "async":
        config["test.poll.idle.ms"] = str(IDLE_MS)
    if kind == "sink":
        config["topics"] = "idle-sink-input"
    worker: dict[str, str] = {"task.threads.max": str(n * TASKS + 8)}  # every sync poll its own thread
    topics = None
    if bootstrap is None:
        from engine.topics.memory import MemoryTopics

        topics = MemoryTopics()
    else:
        run = uuid.uuid4().hex[:8]
        worker |= {
            "bootstrap.servers": bootstrap,
            "config.storage.topic": f"idle-configs-{run}",
            "offset.storage.topic": f"idle-offsets-{run}",
            "status.storage.topic": f"idle-status-{run}",
        }
        if kind == "sink":
            config["topics"] = f"idle-sink-input-{run}"
    async with Engine(worker, topics=topics) as engine:
        started = time.perf_counter()
        names = [f"idle-{i}" for i in range(n)]
        await asyncio.gather(*(engine.create_connector(name, config) for name in names))
        await asyncio.gather(*(engine.wait_for_state(name, "RUNNING", TASKS, timeout=300) for name in names))
        created = time.perf_counter() - started
        await asyncio.sleep(settle)  # the first polls and offset commits out of the way
        profiler, profiled = None, ""
        if profile is not None:
            from pyinstrument import Profiler

            profiler = Profiler(interval=0.0005, async_mode="disabled")
            profiler.start()
        calls0, cpu0, wall0 = next(_CALLS), time.process_time(), time.perf_counter()
        await asyncio.sleep(seconds)
        calls1, cpu1, wall1 = next(_CALLS), time.process_time(), time.perf_counter()
        if profiler is not None and profile is not None:
            from pyinstrument.renderers import ConsoleRenderer

            profiler.stop()
            profiled = profiler.output(ConsoleRenderer(flat=True, time="percent_of_total"))
    cpu, wall, calls = cpu1 - cpu0, wall1 - wall0, calls1 - calls0 - 1
    return {
        "kind": kind,
        "tasks": n * TASKS,
        "seconds": wall,
        "create_s": created,
        "cpu_s": cpu,
        "calls": calls,
        "profile": profiled,
    }


def _child(args: argparse.Namespace) -> None:
    result = asyncio.run(
        _measure(args.child, args.connectors, args.seconds, args.bootstrap, args.settle, args.profile)
    )
    if args.profile:
        Path(args.profile).write_text(result["profile"], encoding="utf-8")
    print("RESULT " + json.dumps(result), flush=True)


def _run(
    engine_root: Path, kind: str, args: argparse.Namespace, bootstrap: str | None, profile: str | None
) -> dict[str, Any]:
    """One measurement in a fresh process whose ``engine`` is the one under ``engine_root``."""
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        kind,
        "--connectors",
        str(args.connectors),
        "--seconds",
        str(args.seconds),
        "--settle",
        str(args.settle),
    ]
    if bootstrap is not None:
        command += ["--bootstrap", bootstrap]
    if profile is not None:
        command += ["--profile", profile]
    env = {**os.environ, "PYTHONPATH": str(engine_root)}
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True, cwd=engine_root)
    out, _ = process.communicate()
    for line in out.splitlines():
        if line.startswith("RESULT "):
            result: dict[str, Any] = json.loads(line[len("RESULT ") :])
            del result["profile"]
            return result
    raise RuntimeError(f"{kind} on {engine_root}: no result (exit {process.returncode})")


@contextlib.contextmanager
def _broker(kafka: bool) -> Iterator[str | None]:
    if not kafka:
        yield None
        return
    from engine.testing.kafka import apache_kafka

    with apache_kafka("4.1") as node:
        yield node.bootstrap_servers()


def _net(row: dict[str, Any], own: dict[str, Any]) -> dict[str, Any]:
    """Per-call and per-task figures, net of what the engine does with no task at all."""
    cpu = max(0.0, row["cpu_s"] - own["cpu_s"] / own["seconds"] * row["seconds"])
    tasks, wall = row["tasks"], row["seconds"]
    return row | {
        "net_cpu_s": cpu,
        "us_per_call": cpu / max(row["calls"], 1) * 1e6,
        "us_per_task_s": cpu / wall / tasks * 1e6,
        "core_pct_per_1000_tasks": cpu / wall * 100 / (tasks / 1000),
    }


def _table(rows: list[dict[str, Any]]) -> list[str]:
    lines = [
        "| task | tasks | side | µs CPU per empty call | empty calls/s | µs CPU per task-second "
        "| % of a core per 1,000 idle tasks |",
        "|---|---:|---|---:|---:|---:|---:|",
    ]
    for row in rows:
        unit = "`put`" if row["kind"] == "sink" else "`poll`"
        per_call = f"{row['us_per_call']:,.0f}" if row["calls"] else "-"
        lines.append(
            f"| {row['kind']} ({unit}) | {row['tasks']:,} | {row['side']} | {per_call} | "
            f"{row['calls'] / row['seconds']:,.0f} | {row['us_per_task_s']:,.1f} | "
            f"{row['core_pct_per_1000_tasks']:.1f} |"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--connectors", type=int, default=1000, help="connectors (2 tasks each)")
    parser.add_argument("--seconds", type=float, default=20.0, help="idling measured")
    parser.add_argument("--settle", type=float, default=5.0, help="idling before the measurement")
    parser.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS))
    parser.add_argument("--against", metavar="PATH", help="a checkout to measure first (before)")
    parser.add_argument("--kafka", action="store_true", help="on an Apache Kafka 4.1 node's topics")
    parser.add_argument(
        "--profile",
        metavar="FILE",
        help="a pyinstrument profile (own time) of one more async run, unmeasured",
    )
    parser.add_argument("--append", metavar="FILE")
    parser.add_argument("--child", choices=(*KINDS, "none"), help=argparse.SUPPRESS)
    parser.add_argument("--bootstrap", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args)
        return
    from bench.report import append_to

    sides = ([("before", Path(args.against).resolve())] if args.against else []) + [("after", ROOT)]
    rows, own = [], {}
    with _broker(args.kafka) as bootstrap:
        for side, root in sides:  # the engine's own idle work (its clients), subtracted from the tasks'
            own[side] = _run(root, "none", args, bootstrap, None)
            print(json.dumps(own[side] | {"side": side}), flush=True)
        for kind in args.kinds:
            for side, root in sides:
                row = _net(_run(root, kind, args, bootstrap, None), own[side]) | {"side": side}
                print(json.dumps(row), flush=True)
                rows.append(row)
        if args.profile:
            _run(ROOT, "async", args, bootstrap, args.profile)
    load = os.getloadavg()
    where = "Apache Kafka 4.1 topics" if args.kafka else "in-process topics"
    text = "\n".join(
        [
            "",
            "## Idle tasks: what a task costs its worker while it waits",
            "",
            f"`python bench/idle_tasks.py --connectors {args.connectors} --seconds {args.seconds:g}"
            + (" --kafka" if args.kafka else "")
            + (" --against <checkout of main>" if args.against else "")
            + f"`: {where}, {args.connectors:,} connectors x {TASKS} tasks, each idle; the process's CPU time "
            f"over {args.seconds:g} s of idling (load average {load[0]:.2f}).",
            "",
            *_table(rows),
            "",
            "The engine's own work with no task (its clients' fetches on Kafka), subtracted above: "
            + ", ".join(
                f"{side} {o['cpu_s'] / o['seconds'] * 100:.1f} % of a core" for side, o in own.items()
            )
            + ".",
            "",
        ]
    )
    print(text)
    append_to(args.append, text)


if __name__ == "__main__":
    main()
