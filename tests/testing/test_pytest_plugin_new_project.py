"""The pytest plugin in a new project (no pytest configuration at all): a plain ``pytest`` run uses its
fixtures and prints no pytest-asyncio deprecation warning about the unset fixture loop scope."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TEST = """
import pytest


@pytest.mark.asyncio
async def test_the_engine_fixture(connect_engine):
    await connect_engine.create_connector("c", {"connector.class": "RecordingSource", "tasks.max": "1"})
    assert await connect_engine.connectors() == ["c"]
"""


def _pytest(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_new_project_runs_without_the_loop_scope_warning(tmp_path: Path) -> None:
    (tmp_path / "test_mine.py").write_text(TEST)
    done = _pytest(tmp_path)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "1 passed" in output
    assert "is unset" not in output
    assert "PytestDeprecationWarning" not in output


def test_a_project_that_sets_the_loop_scope_keeps_it(tmp_path: Path) -> None:
    (tmp_path / "test_mine.py").write_text(TEST)
    (tmp_path / "pytest.ini").write_text("[pytest]\nasyncio_default_fixture_loop_scope = module\n")
    done = _pytest(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "asyncio_default_fixture_loop_scope=module" in done.stdout
