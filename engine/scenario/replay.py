"""``connect-engine replay FILE...``: run scenario files and print traces and verdicts.

Cluster scenarios (``workers: N``) run on the deterministic in-process cluster with the file's
``seed`` (``--seed`` overrides it); ``--explore N`` tries N seeds and stops at the first that fails;
``--processes`` runs them on real worker processes and a broker instead.

Text output streams: each scenario's header is printed before it runs (so whatever it logs shows
under it), its trace and verdict as soon as it finishes. Log lines its injected faults provoke are
expected, so they are quieted and counted (``expected_faults``). JSON output is one document at the end.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from engine.scenario.cluster_runner import ClusterScenarioRunner
from engine.scenario.expected_faults import ExpectedFaults
from engine.scenario.model import Scenario, ScenarioError, load_scenario
from engine.scenario.process_runner import ProcessScenarioRunner
from engine.scenario.runner import LogKind, ScenarioResult, ScenarioRunner
from engine.scenario.timeline import timeline_svg

EXIT_FAILED = 1
EXIT_BAD_FILE = 2


def print_header(result_log: LogKind, name: str, path: str, out: TextIO) -> None:
    print(f"== {name} ({path}, {result_log.value} log)", file=out, flush=True)


def print_result(result: ScenarioResult, out: TextIO, expected: int = 0) -> None:
    """The trace (step, the step's verb, virtual clock when the scenario moves it, the worker in a
    cluster scenario, transition) and verdict; a failed cluster run says how to replay it."""
    scenario = result.scenario
    width = max([len(line.connector) for line in result.trace] + [9])
    clock = any(line.time for line in result.trace)
    workers = scenario.cluster
    verbs = {step.index: step.verb for step in scenario.steps}
    print("  " + "step".rjust(4) + " " + "".ljust(14) + ("  virtual" if clock else "")
          + ("  worker" if workers else "")
          + f"  {'connector':<{width}}  {'unit':<9}  {'trigger':<8}  transition", file=out)
    for line in result.trace:
        print("  " + line.text(width, verb=verbs.get(line.step, "(end)"), clock=clock, workers=workers), file=out)
    on_processes = scenario.cluster and result.seed is None  # their transitions are in the workers' logs
    seed = " (worker processes)" if on_processes else f" (seed {result.seed})" if result.seed is not None else ""
    if result.passed:
        transitions = "" if on_processes else f", {len(result.trace)} transitions"
        print(f"PASS {scenario.name}{seed}: {len(scenario.steps)} steps{transitions}", file=out)
    else:
        print(f"FAIL {scenario.name}{seed}: {_where(result)}{result.failure}", file=out)
        if result.seed is not None:
            for rebalance in result.rounds[-5:]:
                print(f"  rebalance {rebalance}", file=out)
            print(f"  replay it: connect-engine replay --seed {result.seed} {scenario.path}", file=out)
    if expected:
        print(f"  expected: {expected} warning/error log line(s) provoked by this scenario's injected faults "
              "(hidden below --log-level INFO, where they are marked expected=\"injected fault\")", file=out)
    out.flush()


def print_summary(results: Sequence[ScenarioResult], out: TextIO) -> None:
    failed = sum(not r.passed for r in results)
    print(f"{len(results) - failed} passed, {failed} failed", file=out, flush=True)


def _where(result: ScenarioResult) -> str:
    step = result.failed_step
    return f"{result.scenario.path} step {step.index} ({step.verb}): " if step else f"{result.scenario.path}: "


def timeline_problem(path: str) -> str | None:
    """Why ``--timeline path`` cannot be written as asked (None when it can): the timeline is SVG, so
    the name must say ``.svg``, in a directory that exists."""
    target = Path(path)
    if target.suffix.lower() != ".svg":
        return "the timeline is drawn as SVG: name a .svg file (e.g. timeline.svg)"
    if target.is_dir():
        return "is a directory"
    parent = target.parent
    if not parent.is_dir():
        return f"no such directory: {parent}"
    return None


def write_timelines(results: Sequence[ScenarioResult], path: str) -> list[Path]:
    """One SVG per scenario: ``path`` itself for one, ``<stem>-<n>.svg`` beside it for several."""
    target = Path(path)
    written = []
    for n, result in enumerate(results, 1):
        file = target if len(results) == 1 else target.with_name(f"{target.stem}-{n}{target.suffix or '.svg'}")
        file.write_text(timeline_svg(result.trace), encoding="utf-8")
        written.append(file)
    return written


def print_json(results: Sequence[ScenarioResult], out: TextIO) -> None:
    json.dump({"results": [r.as_json() for r in results], "passed": all(r.passed for r in results)}, out, indent=2)
    out.write("\n")


async def run_one(scenario: Scenario, kind: LogKind, bootstrap_servers: str | None, seed: int | None) -> ScenarioResult:
    """A cluster scenario on the deterministic in-process cluster (seeded), any other on one engine."""
    if scenario.cluster:
        return await ClusterScenarioRunner(scenario, seed).run()
    return await ScenarioRunner(scenario, kind, bootstrap_servers=bootstrap_servers).run()


async def explore(scenario: Scenario, runs: int, first_seed: int = 0) -> tuple[ScenarioResult, int]:
    """Run ``runs`` seeds from ``first_seed``; the first failing result (or the last) and the seeds tried."""
    result: ScenarioResult | None = None
    for tried, seed in enumerate(range(first_seed, first_seed + runs), 1):
        result = await ClusterScenarioRunner(scenario, seed).run()
        if not result.passed:
            return result, tried
    assert result is not None
    return result, runs


async def replay(paths: Sequence[str], log: str, bootstrap_servers: str | None, output: str,
                 out: TextIO | None = None, err: TextIO | None = None, *, timeline: str | None = None,
                 seed: int | None = None, explore_runs: int | None = None, processes: bool = False) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    problem = timeline_problem(timeline) if timeline else None
    if problem is not None:  # refused before anything runs, as a malformed file is
        print(f"error: --timeline {timeline}: {problem}", file=err)
        return EXIT_BAD_FILE
    try:
        scenarios = [load_scenario(path) for path in paths]  # a typo in any file fails before anything runs
    except ScenarioError as exc:
        print(f"error: {exc}", file=err)
        return EXIT_BAD_FILE
    text = output != "json"
    kind = LogKind.KAFKA if processes else LogKind(log)
    if processes and not all(s.cluster for s in scenarios):
        print("error: --processes runs cluster scenarios (workers: N) only: "
              + ", ".join(s.path for s in scenarios if not s.cluster), file=err)
        return EXIT_BAD_FILE
    results = []
    with ExpectedFaults().installed() as expected:
        for scenario in scenarios:
            expected.begin(scenario)
            if text:
                print_header(kind, scenario.name, scenario.path, out)
            if processes:
                assert bootstrap_servers is not None
                result = await ProcessScenarioRunner(scenario, bootstrap_servers).run()
            elif explore_runs is not None and scenario.cluster:
                result, tried = await explore(scenario, explore_runs, seed or 0)
                if text:
                    verdict = (f"seed {result.seed} breaks it" if not result.passed
                               else f"all {tried} passed")
                    print(f"explore: {tried} seed(s) from {seed or 0}: {verdict}", file=out)
            else:
                result = await run_one(scenario, kind, bootstrap_servers, seed)
            results.append(result)
            provoked = expected.end()
            if text:
                print_result(result, out, provoked)
    if text:
        print_summary(results, out)
    else:
        print_json(results, out)
    if timeline:
        write_timelines(results, timeline)
    return 0 if all(r.passed for r in results) else EXIT_FAILED
