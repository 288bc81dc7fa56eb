"""``connect-engine replay``: traces, verdicts, JSON, exit codes."""

from __future__ import annotations

import asyncio
import io
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog

from engine.cli import main
from engine.scenario.model import load_scenario
from engine.scenario.replay import replay
from engine.scenario.runner import ScenarioResult, ScenarioRunner
from tests.scenario.conftest import SCENARIO_DIR

PASSING = str(SCENARIO_DIR / "01-pause-and-resume.yaml")


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    """main() configures structlog for a program; later tests expect the defaults back."""
    yield
    structlog.reset_defaults()


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "case.yaml"
    path.write_text(text)
    return str(path)


def test_a_passing_scenario_prints_its_trace_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", PASSING]) == 0
    out = capsys.readouterr().out
    assert "   3 pause           orders     connector  pause     RUNNING -> PAUSED" in out
    assert (
        "   9 (end)           orders     connector  unassign  RUNNING -> UNASSIGNED" in out
    )  # the final stop
    assert "PASS create, pause and resume a connector and its tasks: 8 steps" in out
    assert out.rstrip().endswith("1 passed, 0 failed")


def test_a_failed_expectation_names_file_and_step_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(
        tmp_path,
        "name: wrong\nsteps:\n"
        "  - create: {name: c, config: {connector.class: engine.testing.RecordingSourceConnector}}\n"
        "  - expect: {connector: c, state: PAUSED, timeout: 0s}\n",
    )
    assert main(["replay", PASSING, path]) == 1
    out = capsys.readouterr().out
    assert f"FAIL wrong: {path} step 2 (expect): connector c: state is RUNNING, expected PAUSED" in out
    assert "1 passed, 1 failed" in out


def test_an_unexpected_error_fails_the_step_that_raised(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "steps:\n  - pause: ghost\n")
    assert main(["replay", path]) == 1
    assert f"{path} step 1 (pause): raised ConnectorNotFound" in capsys.readouterr().out


def test_a_malformed_file_exits_2_before_running_anything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "steps:\n  - pause: {name: c, hard: true}\n")
    assert main(["replay", PASSING, path]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert f"{path}: step 1 (pause), key 'hard': unknown key" in captured.err


def test_json_output(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", "--format", "json", "--log", "file", PASSING]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["passed"] is True
    (result,) = document["results"]
    assert result["log"] == "file"
    assert result["trace"][0] == {
        "time": 0.0,
        "step": 1,
        "connector": "orders",
        "task": None,
        "trigger": "start",
        "from_state": "UNASSIGNED",
        "to_state": "RUNNING",
    }


def test_kafka_needs_bootstrap_servers(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["replay", "--log", "kafka", PASSING])
    assert exited.value.code == 2
    assert "--log kafka needs --bootstrap-servers" in capsys.readouterr().err


def test_each_scenario_prints_as_soon_as_it_finishes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Streaming: scenario 1's verdict is out before scenario 2 starts running."""
    happened: list[str] = []
    run = ScenarioRunner.run

    async def recorded(self: ScenarioRunner) -> ScenarioResult:
        happened.append(f"run {self.scenario.path}")
        return await run(self)

    class Out(io.StringIO):
        def write(self, text: str) -> int:
            happened.extend(f"out {line}" for line in text.splitlines() if line.startswith(("==", "PASS")))
            return super().write(text)

    monkeypatch.setattr(ScenarioRunner, "run", recorded)
    second = str(SCENARIO_DIR / "04-stop.yaml")
    assert asyncio.run(replay([PASSING, second], "memory", None, "text", out=Out())) == 0
    assert [line.split(":")[0].split(" (")[0] for line in happened] == [
        "out == create, pause and resume a connector and its tasks",
        f"run {PASSING}",
        "out PASS create, pause and resume a connector and its tasks",
        f"out == {load_scenario(second).name}",
        f"run {second}",
        f"out PASS {load_scenario(second).name}",
    ]


def test_the_virtual_clock_gets_a_column_only_where_a_scenario_moves_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["replay", str(SCENARIO_DIR / "25-virtual-clock.yaml")]) == 0
    out = capsys.readouterr().out
    assert "  step                 virtual  connector" in out
    assert "     7 advance          5.000s  orders     connector  pause     RUNNING -> PAUSED" in out


def test_log_lines_an_injected_fault_provokes_are_quiet_and_noted(capsys: pytest.CaptureFixture[str]) -> None:
    crash = str(SCENARIO_DIR / "20-crash-during-deletion.yaml")  # an injected crash inside deleted()
    hang = str(SCENARIO_DIR / "19-stop-hangs-past-timeout.yaml")  # an injected block past the stop timeout
    assert main(["replay", crash, hang]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""  # no error-level line for a timeout it asked for, no "never retrieved" crash
    noted = re.findall(
        r"  expected: (\d+) warning/error log line\(s\) provoked by this scenario's injected", captured.out
    )
    assert len(noted) == 2
    assert all(int(count) >= 1 for count in noted)


def test_at_info_level_the_expected_lines_show_marked(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--log-level", "INFO", "replay", str(SCENARIO_DIR / "19-stop-hangs-past-timeout.yaml")]) == 0
    events = [json.loads(line) for line in capsys.readouterr().err.splitlines() if line.startswith("{")]
    loud = [e for e in events if e["level"] in ("warning", "error")]
    assert [e["event"] for e in loud] == ["task.shutdown_timed_out"]
    assert loud[0]["expected"] == "injected fault"


def test_a_listing_cut_short_by_its_reader_ends_without_a_traceback() -> None:
    """``connect-engine replay --list | head -1``: the reader closes the pipe early, as ``head`` does."""
    with subprocess.Popen(
        [sys.executable, "-m", "engine", "replay", "--list"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as listing:
        assert listing.stdout is not None
        assert listing.stderr is not None
        first = listing.stdout.readline()
        listing.stdout.close()
        errors = listing.stderr.read().decode()
        listing.wait(timeout=60)
    assert first.startswith(b"builtin:")
    assert "Traceback" not in errors, errors
