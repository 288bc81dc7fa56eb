"""A worker-level converter or override policy that cannot load stops the worker at start with one
line naming the nearest known class (Connect's ``WorkerConfig`` refuses it), instead of a worker that
starts and fails every task."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from engine import Engine
from engine.connectors.file.source import FileStreamSourceTask
from engine.errors import ConfigError


@pytest.mark.parametrize(
    ("key", "value", "suggestion"),
    [
        (
            "value.converter",
            "org.apache.kafka.connect.json.JsonConvertr",
            "org.apache.kafka.connect.json.JsonConverter",
        ),
        ("key.converter", "Strng", "String"),
        ("header.converter", "SimpleHeaderConvertr", "SimpleHeaderConverter"),
    ],
)
def test_a_worker_converter_that_cannot_load_refuses_the_engine(
    key: str, value: str, suggestion: str
) -> None:
    with pytest.raises(ConfigError) as raised:
        Engine({key: value})
    assert str(raised.value) == (
        f"Invalid value {value} for configuration {key}: Class {value} could not be found. "
        f"Did you mean '{suggestion}'?"
    )
    assert raised.value.errors == {
        key: [f"Invalid value {value} for configuration {key}: Class {value} could not be found."]
    }


def test_a_far_off_converter_name_gets_no_suggestion() -> None:
    with pytest.raises(ConfigError, match=r"Class qqq could not be found\.$"):
        Engine({"value.converter": "qqq"})


@pytest.mark.parametrize(
    ("props", "expected"),
    [
        (
            "value.converter=org.apache.kafka.connect.json.JsonConvertr\n",
            "Class org.apache.kafka.connect.json.JsonConvertr could not be found. "
            "Did you mean 'org.apache.kafka.connect.json.JsonConverter'?",
        ),
        (
            "connector.client.config.override.policy=org.example.MyPolicy\n",
            "Invalid value org.example.MyPolicy for configuration connector.client.config.override.policy",
        ),
    ],
)
def test_the_standalone_worker_exits_with_one_line(tmp_path: Path, props: str, expected: str) -> None:
    properties = tmp_path / "worker.properties"
    properties.write_text("listeners=http://127.0.0.1:0\n" + props)
    done = subprocess.run(
        [sys.executable, "-m", "engine", "standalone", str(properties)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("connect-engine standalone: "), lines[0]
    assert expected in lines[0]


def test_a_file_source_task_stopped_before_it_started_stops_quietly() -> None:
    """A task whose ``start()`` failed is still stopped; ``_stream`` only existed after ``start()``."""
    FileStreamSourceTask().stop()
