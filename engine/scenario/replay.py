"""``connect-engine replay FILE...``: run scenario files and print traces and verdicts.

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

from engine.scenario.expected_faults import ExpectedFaults
from engine.scenario.model import ScenarioError, load_scenario
from engine.scenario.runner import LogKind, ScenarioResult, ScenarioRunner
from engine.scenario.timeline import timeline_svg

EXIT_FAILED = 1
EXIT_BAD_FILE = 2


def print_header(result_log: LogKind, name: str, path: str, out: TextIO) -> None:
    print(f"== {name} ({path}, {result_log.value} log)", file=out, flush=True)


def print_result(result: ScenarioResult, out: TextIO, expected: int = 0) -> None:
    """The trace (step, the step's verb, virtual clock when the scenario moves it, transition) and verdict."""
    scenario = result.scenario
    width = max([len(line.connector) for line in result.trace] + [9])
    clock = any(line.time for line in result.trace)
    verbs = {step.index: step.verb for step in scenario.steps}
    print("  " + "step".rjust(4) + " " + "".ljust(14) + ("  virtual" if clock else "")
          + f"  {'connector':<{width}}  {'unit':<9}  {'trigger':<8}  transition", file=out)
    for line in result.trace:
        print("  " + line.text(width, verb=verbs.get(line.step, "(end)"), clock=clock), file=out)
    if result.passed:
        print(f"PASS {scenario.name}: {len(scenario.steps)} steps, {len(result.trace)} transitions", file=out)
    else:
        print(f"FAIL {scenario.name}: {_where(result)}{result.failure}", file=out)
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


async def replay(paths: Sequence[str], log: str, bootstrap_servers: str | None, output: str,
                 out: TextIO | None = None, err: TextIO | None = None, *, timeline: str | None = None) -> int:
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
    kind = LogKind(log)
    results = []
    with ExpectedFaults().installed() as expected:
        for scenario in scenarios:
            expected.begin(scenario)
            if text:
                print_header(kind, scenario.name, scenario.path, out)
            result = await ScenarioRunner(scenario, kind, bootstrap_servers=bootstrap_servers).run()
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
