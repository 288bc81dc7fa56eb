"""``make demo`` and the parts of ``make run`` that need no Spark: what they print, what they leave behind."""

from __future__ import annotations

import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog

from engine.cli import main
from engine.cli.demo import run_demo
from engine.cli.demo_pipeline import STATE_DIRS, STATE_FILES, reset, spark_properties

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    """main() configures structlog for a program; later tests expect the defaults back."""
    yield
    structlog.reset_defaults()


async def test_make_demo_removes_its_temporary_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    await run_demo()
    assert "deleted() succeeded=True" in capsys.readouterr().out
    assert list(tmp_path.iterdir()) == []


def test_the_pipeline_on_a_busy_port_says_so_and_suggests_another(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert main(["pipeline", "--dir", str(tmp_path / "p"), "--port", str(port), "--duration", "1"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"connect-engine pipeline: port {port} on 127.0.0.1 is already in use"), err
    assert f"--port {port + 1}" in err
    assert "connect-engine demo" not in err


def test_reset_removes_the_pipelines_files_and_nothing_else(tmp_path: Path) -> None:
    for name in STATE_FILES:
        (tmp_path / name).write_text("x")
    for name in STATE_DIRS:
        (tmp_path / name / "_manifests").mkdir(parents=True)
    (tmp_path / "notes.txt").write_text("mine")
    assert sorted(reset(tmp_path)) == sorted(STATE_FILES + STATE_DIRS)
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]
    (tmp_path / "notes.txt").unlink()
    assert reset(tmp_path) == []
    assert not tmp_path.exists()  # an emptied directory goes too


def test_git_ignores_the_pipelines_default_directory() -> None:
    ignored = (ROOT / ".gitignore").read_text().split()
    assert "demo-pipeline/" in ignored or "/demo-pipeline/" in ignored


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--spark-remote", "spark://127.0.0.1:7077"],
            "--spark-remote must be a Spark Connect URL (sc://host:port)",
        ),
        (["--spark-conf", "spark.executor.memory"], "--spark-conf takes KEY=VALUE"),
        (["--spark-master", "spark://a:1", "--spark-remote", "sc://a:2"], "not allowed with argument"),
    ],
)
def test_the_pipeline_refuses_bad_spark_options_naming_the_option(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["pipeline", "--dir", str(tmp_path / "p"), *argv])
    assert exited.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "p").exists()  # refused before anything ran


def test_the_pipelines_spark_options_become_worker_properties() -> None:
    assert spark_properties() == {
        "spark.master": "local[2]",
        "spark.conf.spark.sql.shuffle.partitions": "2",
        "spark.conf.spark.ui.showConsoleProgress": "false",
        "spark.conf.spark.driver.host": "127.0.0.1",
        "spark.conf.spark.driver.bindAddress": "127.0.0.1",
    }
    cluster = spark_properties(
        master="spark://10.0.0.5:7077", conf=["spark.driver.host=10.0.0.9", "spark.cores.max=4"]
    )
    assert cluster["spark.master"] == "spark://10.0.0.5:7077"
    assert cluster["spark.conf.spark.driver.host"] == "10.0.0.9"  # not loopback: executors elsewhere reach it
    assert "spark.conf.spark.driver.bindAddress" not in cluster
    assert cluster["spark.conf.spark.cores.max"] == "4"
    assert spark_properties(remote="sc://connect:15002", conf=["a=b=c"]) == {
        "spark.remote": "sc://connect:15002",
        "spark.conf.a": "b=c",
    }
