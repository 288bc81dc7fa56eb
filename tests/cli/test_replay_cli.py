"""``connect-engine replay``: traces, verdicts, JSON, exit codes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog

from engine.cli import main
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
    assert "0.000s  orders     connector  pause     RUNNING -> PAUSED" in out
    assert "PASS create, pause and resume a connector and its tasks: 8 steps" in out
    assert out.rstrip().endswith("1 passed, 0 failed")


def test_a_failed_expectation_names_file_and_step_and_exits_1(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "name: wrong\nsteps:\n"
                 "  - create: {name: c, config: {connector.class: engine.testing.RecordingSourceConnector}}\n"
                 "  - expect: {connector: c, state: PAUSED, timeout: 0s}\n")
    assert main(["replay", PASSING, path]) == 1
    out = capsys.readouterr().out
    assert f"FAIL wrong: {path} step 2 (expect): connector c: state is RUNNING, expected PAUSED" in out
    assert "1 passed, 1 failed" in out


def test_an_unexpected_error_fails_the_step_that_raised(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "steps:\n  - pause: ghost\n")
    assert main(["replay", path]) == 1
    assert f"{path} step 1 (pause): raised ConnectorNotFound" in capsys.readouterr().out


def test_a_malformed_file_exits_2_before_running_anything(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
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
    assert result["trace"][0] == {"time": 0.0, "step": 1, "connector": "orders", "task": None, "trigger": "start",
                                  "from_state": "UNASSIGNED", "to_state": "RUNNING"}


def test_kafka_needs_bootstrap_servers(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["replay", "--log", "kafka", PASSING])
    assert exited.value.code == 2
    assert "--log kafka needs --bootstrap-servers" in capsys.readouterr().err
