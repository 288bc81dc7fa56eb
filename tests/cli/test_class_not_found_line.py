"""A ``connector.class`` that names no connector reads as one short line naming the nearest
connectors, on the command line and in a scenario's failure; REST keeps Connect's full message."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from engine.errors import ConnectorClassNotFound, short_message
from engine.plugins.loading import load_connector_class
from engine.scenario.model import parse_scenario
from engine.scenario.runner import LogKind, ScenarioRunner


def test_the_summary_names_the_nearest_connector_and_the_message_stays_connects() -> None:
    with pytest.raises(ConnectorClassNotFound) as raised:
        load_connector_class("FileStreamSourc")
    assert (
        short_message(raised.value) == "No connector class FileStreamSourc. Did you mean 'FileStreamSource'?"
    )
    assert str(raised.value).startswith(
        "Failed to find any class that implements Connector and which name matches FileStreamSourc, "
        "available connectors are: PluginDesc{"
    )


def test_nothing_close_lists_the_known_connectors_by_alias() -> None:
    with pytest.raises(ConnectorClassNotFound) as raised:
        load_connector_class("Qwerty")
    summary = short_message(raised.value)
    assert summary.startswith("No connector class Qwerty. Known connectors: ")
    assert "FileStreamSource" in summary
    assert "PluginDesc" not in summary


def test_the_standalone_worker_prints_one_short_line(tmp_path: Path) -> None:
    (tmp_path / "worker.properties").write_text("listeners=http://127.0.0.1:0\n")
    (tmp_path / "c.properties").write_text("name=c\nconnector.class=FileStreamSinkConector\ntopics=t\n")
    done = subprocess.run(
        [sys.executable, "-m", "engine", "standalone", "worker.properties", "c.properties"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last == (
        "connect-engine standalone: No connector class FileStreamSinkConector. Did you mean "
        "'FileStreamSinkConnector'?"
    ), last


async def test_a_scenario_failure_names_the_nearest_connector() -> None:
    scenario = parse_scenario(
        """
name: a typo in connector.class
steps:
  - create: {name: s, config: {connector.class: RecordingSourc, tasks.max: 1}}
""",
        "typo.yaml",
    )
    result = await ScenarioRunner(scenario, LogKind.MEMORY).run()
    assert not result.passed
    assert result.failure == (
        "raised ConnectorClassNotFound: No connector class RecordingSourc. Did you mean 'RecordingSource'? "
        "(no 'expect: {error: ...}' followed)"
    )
