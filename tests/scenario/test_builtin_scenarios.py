"""The shipped scenario files: scenarios/ at the top, package data in a wheel (pyproject.toml maps
it), listed and run by ``connect-engine replay`` (``--list``, ``builtin:<name>``)."""

from __future__ import annotations

import tomllib

import pytest

from engine.cli import main
from engine.scenario.builtin import PACKAGED, builtin_scenarios, resolve, scenario_folder
from engine.scenario.model import ScenarioError, load_scenario
from tests.scenario.conftest import SCENARIO_DIR


def test_a_checkout_reads_the_top_level_folder_and_a_wheel_ships_it_where_the_code_looks() -> None:
    assert str(scenario_folder()) == str(SCENARIO_DIR)
    pyproject = tomllib.loads((SCENARIO_DIR.parent / "pyproject.toml").read_text(encoding="utf-8"))
    mapped = pyproject["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"]
    assert mapped == {"scenarios": f"engine/scenario/{PACKAGED}"}


def test_every_yaml_file_is_a_shipped_scenario() -> None:
    names = {str(p.relative_to(SCENARIO_DIR).with_suffix("")) for p in SCENARIO_DIR.rglob("*.yaml")}
    assert "01-pause-and-resume" in names
    assert "connectors/rabbitmq-sink-lifecycle" in names
    assert "cluster/01-revocation-before-reassignment" in names
    assert {scenario.name for scenario in builtin_scenarios()} == names


def test_every_shipped_scenario_parses() -> None:
    for scenario in builtin_scenarios():
        assert load_scenario(scenario.path).steps, scenario.name


def test_replay_lists_them(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", "--list"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in listed] == [f"builtin:{s.name}" for s in builtin_scenarios()]
    assert "builtin:01-pause-and-resume  create, pause and resume a connector and its tasks" in listed


def test_replay_runs_one_by_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", "builtin:01-pause-and-resume"]) == 0
    assert "1 passed, 0 failed" in capsys.readouterr().out


def test_a_glob_names_several_and_a_file_is_still_a_file() -> None:
    assert len(resolve("builtin:0*")) == 9
    everything = resolve("builtin:*")  # what CI replays: not the connector scenarios, which need servers
    assert everything
    assert not [path for path in everything if "/connectors/" in path]
    assert len(resolve("builtin:connectors/*")) == 2
    assert len(resolve("builtin:cluster/0[1-5]*")) == 5
    assert resolve("my/own.yaml") == ["my/own.yaml"]


def test_an_unknown_name_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ScenarioError, match="no shipped scenario"):
        resolve("builtin:nope")
    assert main(["replay", "builtin:nope"]) == 2
    assert "builtin:nope: no shipped scenario has that name" in capsys.readouterr().err
