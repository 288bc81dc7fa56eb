"""Lifecycle benchmark: N connectors x 2 tasks through create, pause, resume and delete.

Baseline, measured in the same run: bare ``transitions`` AsyncMachine models (one shared machine
per kind, as the engine uses) making the same transitions: per connector 3 starts, 3 pauses,
3 resumes and 3 destroys. Each measurement runs in its own process so peak RSS is its own.

    python bench/lifecycle.py --write BENCHMARKS.md      (what `make bench` runs)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TASKS = 2
DELETE_SAMPLES = 200


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def _baseline(n: int) -> dict[str, Any]:
    from transitions.extensions.asyncio import AsyncMachine

    states = ["UNASSIGNED", "RUNNING", "PAUSED", "DESTROYED"]
    table = [
        {"trigger": "start", "source": "UNASSIGNED", "dest": "RUNNING"},
        {"trigger": "pause", "source": "RUNNING", "dest": "PAUSED"},
        {"trigger": "resume", "source": "PAUSED", "dest": "RUNNING"},
        {"trigger": "destroy", "source": ["UNASSIGNED", "RUNNING", "PAUSED"], "dest": "DESTROYED"},
    ]

    class Model:
        pass

    phases: dict[str, float] = {}
    t0 = time.perf_counter()
    connectors = AsyncMachine(
        model=None, states=states, transitions=table, initial="UNASSIGNED", auto_transitions=False
    )
    tasks = AsyncMachine(
        model=None, states=states, transitions=table, initial="UNASSIGNED", auto_transitions=False
    )
    models: list[tuple[Model, list[Model]]] = []
    for _ in range(n):
        c, ts = Model(), [Model() for _ in range(TASKS)]
        connectors.add_model(c)
        tasks.add_model(ts)
        models.append((c, ts))

    async def each(trigger: str) -> None:
        async def one(c: Model, ts: list[Model]) -> None:
            await c.trigger(trigger)  # type: ignore[attr-defined]
            for t in ts:
                await t.trigger(trigger)  # type: ignore[attr-defined]

        await asyncio.gather(*(one(c, ts) for c, ts in models))

    registered = time.perf_counter() - t0
    for phase in ("start", "pause", "resume", "destroy"):
        start = time.perf_counter()
        await each(phase)
        if phase == "destroy":
            for c, ts in models:
                connectors.remove_model(c)
                tasks.remove_model(ts)
        phases[phase] = time.perf_counter() - start
    total = time.perf_counter() - t0
    return {
        "total_s": total,
        "phases": phases,
        "register_s": registered,
        "transitions": n * (1 + TASKS) * 4,
        "peak_rss_mib": _peak_rss_mib(),
    }


async def _engine(
    n: int, delete_samples: int, connector_class: str = "bench.noop.NoopConnector"
) -> dict[str, Any]:
    import structlog

    sys.path.insert(0, str(ROOT))
    from bench.noop import NoopConnector
    from engine import Engine

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    config = {"connector.class": connector_class, "tasks.max": str(TASKS)}
    phases: dict[str, float] = {}
    async with Engine() as engine:
        feed = engine.transitions()

        async def reach(state: str, count: int) -> None:
            seen = 0
            async for event in feed:
                if event.to_state == state:
                    seen += 1
                    if seen == count:
                        return

        t0 = time.perf_counter()
        names = [f"c{i}" for i in range(n)]
        start = time.perf_counter()
        waiting = asyncio.ensure_future(reach("RUNNING", n * (1 + TASKS)))
        await asyncio.gather(*(engine.create_connector(name, config) for name in names))
        await waiting
        phases["create"] = time.perf_counter() - start
        for phase, verb, state in (
            ("pause", "pause_connector", "PAUSED"),
            ("resume", "resume_connector", "RUNNING"),
        ):
            start = time.perf_counter()
            waiting = asyncio.ensure_future(reach(state, n * (1 + TASKS)))
            await asyncio.gather(*(getattr(engine, verb)(name) for name in names))
            await waiting
            phases[phase] = time.perf_counter() - start
        # delete latency with n connectors present: extra connectors deleted one at a time
        latencies = []
        extra = [f"probe{i}" for i in range(delete_samples)]
        waiting = asyncio.ensure_future(reach("RUNNING", delete_samples * (1 + TASKS)))
        await asyncio.gather(*(engine.create_connector(name, config) for name in extra))
        await waiting
        for name in extra:
            called = time.perf_counter()
            outcome = await engine.delete_connector(name)
            assert outcome.succeeded
            latencies.append(NoopConnector.DELETED_AT[name] - called)
        start = time.perf_counter()
        outcomes = await asyncio.gather(*(engine.delete_connector(name) for name in names))
        phases["delete"] = time.perf_counter() - start
        assert all(o.succeeded for o in outcomes)
        assert len(NoopConnector.DELETED_AT) == n + delete_samples
        total = sum(phases.values())
        del t0
        await feed.aclose()
    latencies.sort()
    return {
        "total_s": total,
        "phases": phases,
        "peak_rss_mib": _peak_rss_mib(),
        "delete_p50_ms": statistics.median(latencies) * 1000,
        "delete_p99_ms": latencies[int(len(latencies) * 0.99) - 1] * 1000,
    }


def _measure(kind: str, n: int) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", kind, "--n", str(n)],
        check=True,
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _report(results: dict[int, dict[str, dict[str, Any]]], command: str) -> str:
    lines = [
        "# Benchmarks",
        "",
        f"Command: `{command}` ({platform.python_implementation()} {platform.python_version()}, "
        f"{platform.machine()}, run {time.strftime('%Y-%m-%d')}).",
        "",
        "## Lifecycle: N connectors x 2 tasks, memory log, no-op async connectors",
        "",
        "Engine = create all -> all RUNNING, pause all -> all PAUSED, resume all -> all RUNNING, delete all",
        "(each delete runs `deleted()`), through the public `Engine` API and the config log.",
        "Baseline = bare `transitions` AsyncMachine models making the same 12 transitions per connector,",
        "measured in the same run. Each figure comes from its own process.",
        "The baseline total includes registering its models: bare `transitions` checks membership in a",
        "list on every `add_model`, so registration is quadratic and dominates the baseline at large N",
        "(the engine registers in O(1)). The last two columns set the engine against the baseline's",
        "transitions alone, for reading the large-N ratio; the target applies to the total.",
        "",
        "| N | engine s | baseline s | ratio (target <= 2) | engine us/connector | engine peak RSS MiB "
        "| baseline peak RSS MiB | RSS ratio (target <= 2) | baseline registration s "
        "| engine / baseline transitions only |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for n, r in results.items():
        e, b = r["engine"], r["baseline"]
        moves = b["total_s"] - b["register_s"]
        lines.append(
            f"| {n} | {e['total_s']:.2f} | {b['total_s']:.2f} | {e['total_s'] / b['total_s']:.2f} | "
            f"{e['total_s'] / n * 1e6:.0f} | {e['peak_rss_mib']:.0f} | {b['peak_rss_mib']:.0f} | "
            f"{e['peak_rss_mib'] / b['peak_rss_mib']:.2f} | {b['register_s']:.2f} | {e['total_s'] / moves:.2f} |"
        )
    ns = sorted(results)
    small, large = results[ns[0]]["engine"], results[ns[-1]]["engine"]
    growth = (large["total_s"] / ns[-1]) / (small["total_s"] / ns[0])
    lines += [
        "",
        f"Cost per connector at N={ns[-1]} vs N={ns[0]}: {growth:.2f}x (target <= 1.5x).",
        "",
        "Engine phases (s):",
        "",
        "| N | create | pause | resume | delete |",
        "|---|---|---|---|---|",
    ]
    for n, r in results.items():
        p = r["engine"]["phases"]
        lines.append(
            f"| {n} | {p['create']:.2f} | {p['pause']:.2f} | {p['resume']:.2f} | {p['delete']:.2f} |"
        )
    lines += [
        "",
        f"## Delete latency with N connectors present ({DELETE_SAMPLES} deletes, call -> `deleted()` returned)",
        "",
        "| N present | p50 ms | p99 ms (target <= 10) |",
        "|---|---|---|",
    ]
    for n, r in results.items():
        lines.append(f"| {n} | {r['engine']['delete_p50_ms']:.2f} | {r['engine']['delete_p99_ms']:.2f} |")
    return "\n".join(lines + _sync_report(results)) + "\n"


def _sync_report(results: dict[int, dict[str, dict[str, Any]]]) -> list[str]:
    """The same walk with synchronous connectors (``bench.noop.SyncNoopConnector``), as most users
    write them: every method on a thread, and an idle ``poll()`` sleeping 0.1 s as FileStream's does."""
    lines = [
        "",
        "## Lifecycle: N connectors x 2 tasks, memory log, synchronous connectors",
        "",
        "The same walk and baseline (the same bare `transitions` run as above); the connectors' and tasks' methods are",
        "`def`, so each runs on a thread, and each task's idle `poll()` sleeps 0.1 s (as the FileStream source does",
        "on an empty file) on the engine's task threads (`task.threads.max`, default 128).",
        "",
        "| N | engine s | baseline s | ratio (target <= 2) | engine peak RSS MiB | RSS ratio (target <= 2) "
        "| create | pause | resume | delete | delete p50 / p99 ms |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for n, r in results.items():
        e, b = r["engine-sync"], r["baseline"]
        p = e["phases"]
        lines.append(
            f"| {n} | {e['total_s']:.2f} | {b['total_s']:.2f} | {e['total_s'] / b['total_s']:.2f} | "
            f"{e['peak_rss_mib']:.0f} | {e['peak_rss_mib'] / b['peak_rss_mib']:.2f} | {p['create']:.2f} | "
            f"{p['pause']:.2f} | {p['resume']:.2f} | {p['delete']:.2f} | "
            f"{e['delete_p50_ms']:.2f} / {e['delete_p99_ms']:.2f} |"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--child", choices=["engine", "engine-sync", "baseline"])
    parser.add_argument("--n", type=int, nargs="*", default=[1000, 10000])
    parser.add_argument("--write", help="write the markdown report to this file")
    args = parser.parse_args()
    if args.child:
        n = args.n[0]
        if args.child == "baseline":
            result = asyncio.run(_baseline(n))
        else:
            kind = "SyncNoopConnector" if args.child == "engine-sync" else "NoopConnector"
            result = asyncio.run(_engine(n, DELETE_SAMPLES, f"bench.noop.{kind}"))
        print(json.dumps(result))
        return
    results = {}
    for n in args.n:
        results[n] = {
            "baseline": _measure("baseline", n),
            "engine": _measure("engine", n),
            "engine-sync": _measure("engine-sync", n),
        }
        print(
            f"N={n}: engine {results[n]['engine']['total_s']:.2f}s, with sync connectors "
            f"{results[n]['engine-sync']['total_s']:.2f}s; baseline {results[n]['baseline']['total_s']:.2f}s",
            flush=True,
        )
    report = _report(results, "make bench")
    print(report)
    if args.write:
        Path(args.write).write_text(report)


if __name__ == "__main__":
    main()
