"""The deterministic cluster runner at scale: W simulated workers x C connectors (target: 50 x 10,000
in <= 10 minutes on the 2-core machine).

Each run is ``connect-engine replay`` of one generated cluster scenario, in a process of its own
(so its peak RSS is its own), with virtual time and one seed: a burst of C creates (the test kit's
source connector, 2 tasks each), a rolling restart of every worker, a zone (a fifth of the
workers) killed at once and its work moved after the session and the rebalance delay. The cluster
invariants are checked after every step and every member's part of every round. What the
simulation leaves out is listed in ``docs/operating/sizing.md``.

    python bench/cluster_simulation.py [--workers 50] [--connectors 10000] [--seeds 1]
        [--small-seeds 3] [--append BENCHMARKS.md]   (`make bench` appends)
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.report import append_to

_CONFIG = "{connector.class: engine.testing.RecordingSourceConnector, tasks.max: 2}"


def scenario(workers: int, connectors: int, seed: int) -> str:
    """The walk: a burst of creates, a rolling restart, a zone lost at once."""
    last = connectors - 1
    zone = [f"w{n}" for n in range(workers - max(1, workers // 5) + 1, workers + 1)]
    running = f"  - expect: {{connector: c{last}, state: RUNNING, tasks: [RUNNING, RUNNING]}}"
    lines = [
        f"name: {workers} workers x {connectors} connectors, a burst, a rolling restart, a zone lost",
        f"workers: {workers}",
        f"seed: {seed}",
        "worker:",
        '  scheduled.rebalance.max.delay.ms: "5000"',
        '  session.timeout.ms: "10000"',
        # a worker stopping hundreds of tasks on a loaded machine must not abandon them by the clock
        '  task.shutdown.graceful.timeout.ms: "120000"',
        "steps:",
        f'  - create: {{name: "c{{n}}", count: {connectors}, config: {_CONFIG}}}',
        running,
        *(f"  - restart_worker: w{n}" for n in range(1, workers + 1)),
        running,
        *(f"  - kill_worker: {name}" for name in zone),
        "  - advance: 16s",
        "  - expect: {assigned: {" + ", ".join(f"{name}: []" for name in zone) + "}}",
        running,
        "  - expect: {connector: c0, state: RUNNING, tasks: [RUNNING, RUNNING]}",
    ]
    return "\n".join(lines) + "\n"


@dataclass
class Run:
    workers: int
    connectors: int
    seed: int
    seconds: float
    cpu_seconds: float
    peak_rss_mb: float
    passed: bool
    summary: str


def run(workers: int, connectors: int, seed: int, folder: Path) -> Run:
    path = folder / f"scale-{workers}x{connectors}-{seed}.yaml"
    path.write_text(scenario(workers, connectors, seed))
    command = [sys.executable, "-m", "engine", "replay", str(path), "--seed", str(seed)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    verdicts = [line for line in done.stdout.splitlines() if line.startswith(("PASS ", "FAIL "))]
    summary = (verdicts or done.stderr.strip().splitlines() or ["(no output)"])[-1]
    return Run(
        workers,
        connectors,
        seed,
        seconds,
        cpu,
        after.ru_maxrss / 1024,  # the largest child so far: runs go smallest first
        done.returncode == 0,
        summary,
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=50)
    parser.add_argument("--connectors", type=int, default=10_000)
    parser.add_argument("--seeds", type=int, default=1, help="seeds of the large run")
    parser.add_argument("--small-seeds", type=int, default=3, help="seeds of 10 workers x 1,000 first")
    parser.add_argument("--append", help="append a markdown section to this file")
    args = parser.parse_args()
    runs: list[Run] = []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(args.small_seeds):
            runs.append(run(10, 1000, seed, Path(tmp)))
            print(runs[-1], flush=True)
        for seed in range(args.seeds):
            runs.append(run(args.workers, args.connectors, seed, Path(tmp)))
            print(runs[-1], flush=True)
    rows = [
        f"| {r.workers} | {r.connectors:,} | {r.seed} | {r.seconds:.1f} | {r.cpu_seconds:.1f} | "
        f"{r.peak_rss_mb:,.0f} | {'passed' if r.passed else 'FAILED: ' + r.summary} |"
        for r in runs
    ]
    largest = runs[-1]
    verdict = "met" if largest.passed and largest.seconds <= 600 else "**missed**"
    text = "\n".join(
        [
            "## The deterministic cluster runner at scale",
            "",
            "`python bench/cluster_simulation.py"
            f" --workers {args.workers} --connectors {args.connectors} --seeds {args.seeds}`: each row one"
            " `connect-engine replay --seed N` of a generated cluster scenario in its own process (virtual"
            " time): a burst of creates (2 tasks each), a rolling restart of every worker, a fifth of the"
            " workers killed at once; the invariants checked after every step and every round. Peak RSS"
            " is the largest replay process so far.",
            "",
            "| workers | connectors | seed | wall s | CPU s | peak RSS MB | result |",
            "|---|---|---|---|---|---|---|",
            *rows,
            "",
            f"Target: {args.workers} x {args.connectors:,} in <= 600 s: {largest.seconds:.0f} s, {verdict}.",
            "",
        ]
    )
    print(text)
    append_to(args.append, text)


if __name__ == "__main__":
    main()
