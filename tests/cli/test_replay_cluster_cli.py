"""``connect-engine replay`` on cluster scenarios: --seed, --explore, and what a failure prints."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog

from engine.cli import main
from tests.scenario.conftest import SCENARIO_DIR

JOINING = str(SCENARIO_DIR / "cluster" / "01-revocation-before-reassignment.yaml")


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    yield
    structlog.reset_defaults()


def test_a_cluster_scenario_prints_the_worker_of_each_transition(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", "--seed", "3", JOINING]) == 0
    out = capsys.readouterr().out
    assert "  step                 worker  connector  unit       trigger   transition" in out
    assert "     4 start_worker    w3      src        task-2     start     UNASSIGNED -> RUNNING" in out
    assert "(seed 3): 9 steps" in out


def test_the_same_seed_prints_the_same_output(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", "--seed", "5", JOINING]) == 0
    first = capsys.readouterr().out
    assert main(["replay", "--seed", "5", JOINING]) == 0
    assert capsys.readouterr().out == first


def test_a_failing_run_names_seed_and_step_and_how_to_replay_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "case.yaml"
    path.write_text("""
workers: 2
seed: 4
steps:
  - create: {name: c, config: {connector.class: engine.testing.RecordingSourceConnector, tasks.max: 2}}
  - expect: {assigned: {w2: [c]}}
""")
    assert main(["replay", str(path)]) == 1
    out = capsys.readouterr().out
    assert f"(seed 4): {path} step 2 (expect): assigned: w2 runs ['c-1'], expected ['c']" in out
    assert f"replay it: connect-engine replay --seed 4 {path}" in out


def test_explore_tries_seeds_and_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", "--explore", "3", "--seed", "10", JOINING]) == 0
    out = capsys.readouterr().out
    assert "explore: 3 seed(s) from 10: all 3 passed" in out


def test_seed_and_explore_take_non_negative_and_positive_numbers(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["replay", "--seed", "-1", JOINING])
    with pytest.raises(SystemExit):
        main(["replay", "--explore", "0", JOINING])
    assert "expected a number of seeds" in capsys.readouterr().err


def test_processes_needs_a_broker_and_cluster_scenarios(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["replay", "--processes", JOINING])
    assert "--processes needs --bootstrap-servers" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["replay", "--processes", "--bootstrap-servers", "127.0.0.1:9", "--seed", "1", JOINING])
    assert "not --processes" in capsys.readouterr().err
    single = str(SCENARIO_DIR / "01-pause-and-resume.yaml")
    assert main(["replay", "--processes", "--bootstrap-servers", "127.0.0.1:9", single]) == 2
    assert f"--processes runs cluster scenarios (workers: N) only: {single}" in capsys.readouterr().err
