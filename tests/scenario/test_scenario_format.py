"""Malformed scenario files are refused before anything runs, naming file, step and key."""

from __future__ import annotations

import pytest

from engine.scenario.model import ScenarioError, parse_duration, parse_scenario

CREATE = "  - create: {name: c, config: {connector.class: engine.testing.RecordingSourceConnector}}\n"


@pytest.mark.parametrize(
    ("steps", "message"),
    [
        ("  - explode: c\n", "f.yaml: step 1 (explode): unknown verb; known verbs: create, update"),
        (
            "  - pause: {name: c, force: true}\n",
            "f.yaml: step 1 (pause), key 'force': unknown key; pause takes: name",
        ),
        ("  - create: {name: c}\n", "f.yaml: step 1 (create), key 'config': is required"),
        (
            CREATE + "  - advance: soon\n",
            "f.yaml: step 2 (advance), key 'by': not a duration (use e.g. 5s, 250ms, 2m)",
        ),
        ("  - {pause: c, resume: c}\n", "f.yaml: step 1: each step is a mapping with exactly one verb"),
        ("  - crash: {now: true}\n", "f.yaml: step 1 (crash): takes no arguments"),
        (
            "  - expect: {state: RUNNING}\n",
            "f.yaml: step 1 (expect), key 'connector': is required to check a connector",
        ),
        (
            "  - expect: {connector: c, state: SLEEPING}\n",
            "f.yaml: step 1 (expect), key 'state': expected one of",
        ),
        (
            "  - restart_task: {name: c, task: -1}\n",
            "f.yaml: step 1 (restart_task), key 'task': expected a non-negative",
        ),
        (
            "  - inject: {connector: c, callback: stop, action: raise, for: 1s}\n",
            "f.yaml: step 1 (inject), key 'for': only a block lasts for a duration",
        ),
        (
            "  - record: {key: k, value: [1, 2]}\n",
            "f.yaml: step 1 (record), key 'value': expected a JSON object",
        ),
    ],
)
def test_bad_steps_name_the_file_step_and_key(steps: str, message: str) -> None:
    with pytest.raises(ScenarioError) as refused:
        parse_scenario(f"name: x\nsteps:\n{steps}", "f.yaml")
    assert str(refused.value).startswith(message)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("- just a list", "f.yaml: a scenario is a mapping"),
        ("name: x\nstep: []", "f.yaml, key 'step': unknown top-level key"),
        ("name: x\nsteps: []", "f.yaml, key 'steps': needs a non-empty list of steps"),
        ("name: x\nsteps: [: :", "f.yaml: not valid YAML"),
        ("name: x\nworker: [1]\nsteps:\n" + CREATE, "f.yaml, key 'worker': expected a mapping"),
    ],
)
def test_bad_documents_are_refused(text: str, message: str) -> None:
    with pytest.raises(ScenarioError) as refused:
        parse_scenario(text, "f.yaml")
    assert str(refused.value).startswith(message)


def test_a_good_file_parses_with_shorthands_and_defaults() -> None:
    scenario = parse_scenario(
        "steps:\n" + CREATE + "  - pause: c\n  - advance: 250ms\n  - crash:\n"
        "  - restart: {name: c, include_tasks: true}\n",
        "dir/my-case.yaml",
    )
    assert scenario.name == "my-case"
    assert [s.verb for s in scenario.steps] == ["create", "pause", "advance", "crash", "restart"]
    assert scenario.steps[1].args == {"name": "c"}
    assert scenario.steps[2].args == {"by": 0.25}
    assert scenario.steps[0].args["config"] == {"connector.class": "engine.testing.RecordingSourceConnector"}
    assert [s.index for s in scenario.steps] == [1, 2, 3, 4, 5]


@pytest.mark.parametrize(
    ("text", "seconds"), [("5s", 5.0), ("250ms", 0.25), ("2m", 120.0), (3, 3.0), ("1.5", 1.5)]
)
def test_durations(text: object, seconds: float) -> None:
    assert parse_duration(text) == seconds
