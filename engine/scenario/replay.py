"""``connect-engine replay FILE...``: run scenario files and print traces and verdicts."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from engine.scenario.model import ScenarioError, load_scenario
from engine.scenario.runner import LogKind, ScenarioResult, ScenarioRunner
from engine.scenario.timeline import timeline_svg

EXIT_FAILED = 1
EXIT_BAD_FILE = 2


async def run_files(paths: Sequence[str], log: LogKind | str = LogKind.MEMORY, *,
                    bootstrap_servers: str | None = None) -> list[ScenarioResult]:
    """Parse every file first (a typo anywhere fails before anything runs), then run them in order."""
    scenarios = [load_scenario(path) for path in paths]
    return [await ScenarioRunner(s, log, bootstrap_servers=bootstrap_servers).run() for s in scenarios]


def print_text(results: Sequence[ScenarioResult], out: TextIO) -> None:
    for result in results:
        scenario = result.scenario
        print(f"== {scenario.name} ({scenario.path}, {result.log.value} log)", file=out)
        width = max([len(line.connector) for line in result.trace] + [9])
        for line in result.trace:
            print(line.text(width), file=out)
        if result.passed:
            print(f"PASS {scenario.name}: {len(scenario.steps)} steps, {len(result.trace)} transitions", file=out)
        else:
            print(f"FAIL {scenario.name}: {_where(result)}{result.failure}", file=out)
    failed = sum(not r.passed for r in results)
    print(f"{len(results) - failed} passed, {failed} failed", file=out)


def _where(result: ScenarioResult) -> str:
    step = result.failed_step
    return f"{result.scenario.path} step {step.index} ({step.verb}): " if step else f"{result.scenario.path}: "


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
    try:
        results = await run_files(paths, log, bootstrap_servers=bootstrap_servers)
    except ScenarioError as exc:
        print(f"error: {exc}", file=err)
        return EXIT_BAD_FILE
    (print_json if output == "json" else print_text)(results, out)
    if timeline:
        write_timelines(results, timeline)
    return 0 if all(r.passed for r in results) else EXIT_FAILED
