"""Every command that cannot start says why in one line (exit 1, or 2 for a refused argument), no traceback."""

from __future__ import annotations

import errno
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog

from engine.cli import main
from engine.cli.demo_pipeline import status_text
from engine.cli.startup_errors import one_line
from engine.observability.logs import quiet_until_configured
from tests.scenario.conftest import SCENARIO_DIR

PASSING = str(SCENARIO_DIR / "01-pause-and-resume.yaml")


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    """main() configures structlog for a program; later tests get the library's quiet default back."""
    yield
    structlog.reset_defaults()
    quiet_until_configured()


def only_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, text
    return lines[0]


def test_a_standalone_worker_on_a_busy_port_says_so_in_one_line(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        properties = tmp_path / "worker.properties"
        properties.write_text(f"listeners=http://127.0.0.1:{port}\n")
        assert main(["standalone", str(properties)]) == 1
    line = only_line(capsys.readouterr().err)
    assert line.startswith("connect-engine standalone: "), line
    assert str(port) in line
    assert "address already in use" in line
    assert "listeners" in line  # what to change


def test_an_unreadable_connector_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nowhere.json"
    assert main(["standalone", str(missing)]) == 1
    line = only_line(capsys.readouterr().err)
    assert line.startswith(f"connect-engine standalone: Could not read connector file {missing}: "), line


def test_replay_refuses_a_timeline_name_it_cannot_write_as_svg(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    png = tmp_path / "x.png"
    assert main(["replay", PASSING, "--timeline", str(png)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # refused before anything ran
    assert only_line(captured.err) == (f"error: --timeline {png}: the timeline is drawn as SVG: "
                                       "name a .svg file (e.g. timeline.svg)")
    assert not png.exists()
    elsewhere = tmp_path / "missing" / "x.svg"
    assert main(["replay", PASSING, "--timeline", str(elsewhere)]) == 2
    assert only_line(capsys.readouterr().err) == f"error: --timeline {elsewhere}: no such directory: {elsewhere.parent}"
    svg = tmp_path / "x.svg"
    assert main(["replay", PASSING, "--timeline", str(svg)]) == 0
    assert svg.read_text(encoding="utf-8").startswith("<svg")


def test_start_up_errors_read_as_one_line() -> None:
    missing_extra = ModuleNotFoundError("No module named 'aio_pika'", name="aio_pika")
    assert one_line(missing_extra) == "it needs aio_pika, which is not installed: pip install 'connect-engine[rabbitmq]'"
    assert one_line(ExceptionGroup("engine", [missing_extra])) == one_line(missing_extra)
    unreadable = FileNotFoundError(errno.ENOENT, "No such file or directory", "/no/such.yaml")
    assert one_line(unreadable) == "cannot read /no/such.yaml: No such file or directory"
    assert one_line(RuntimeError("a bug")) is None  # keeps its traceback


def test_the_pipeline_status_line_shows_tasks_that_are_not_where_their_connector_is() -> None:
    running = {"connector": {"state": "RUNNING"}, "tasks": [{"id": 0, "state": "RUNNING"}]}
    assert status_text("orders", running) == "orders RUNNING"
    failed = {"connector": {"state": "RUNNING"},
              "tasks": [{"id": 0, "state": "FAILED"}, {"id": 1, "state": "RUNNING"}]}
    assert status_text("parquet", failed) == "parquet RUNNING (task 0 FAILED)"
