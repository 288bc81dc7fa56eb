"""``connect-engine internal-topics``' refusals, as Connect's ``connect-internal-topics.sh`` words them (the
creation itself: tests/integration/test_internal_topics_creation.py)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from engine.cli.internal_topics import run
from engine.cli.main import main

TOPICS = {
    "offset.storage.topic": "o",
    "config.storage.topic": "c",
    "status.storage.topic": "s",
}


def _run(tmp_path: Path, props: dict[str, str], subcommand: str = "create") -> tuple[int, str, str]:
    path = tmp_path / "worker.properties"
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    out, err = io.StringIO(), io.StringIO()
    code = run(subcommand, str(path), out, err)
    return code, out.getvalue(), err.getvalue()


def test_a_missing_topic_name_is_connects_missing_configuration(tmp_path: Path) -> None:
    props = {k: v for k, v in TOPICS.items() if k != "status.storage.topic"}
    code, out, err = _run(tmp_path, {"bootstrap.servers": "127.0.0.1:1", **props})
    assert code == 1
    assert err == 'Missing required configuration "status.storage.topic" which has no default value.\n'
    assert out == "Parsed arguments and loaded worker properties\nSubcommand: create\n"


def test_a_blank_topic_name_is_refused_in_connects_words(tmp_path: Path) -> None:
    code, _, err = _run(tmp_path, {"bootstrap.servers": "127.0.0.1:1", **TOPICS, "config.storage.topic": " "})
    assert code == 1
    assert err == "Must specify non-empty value for required internal topic config: 'config.storage.topic'.\n"


def test_an_unreadable_worker_config_and_an_unknown_subcommand(tmp_path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert run("create", str(tmp_path / "nowhere.properties"), out, err) == 1
    assert err.getvalue().startswith(f"Could not read properties file {tmp_path / 'nowhere.properties'}: ")
    code, _, err_text = _run(tmp_path, TOPICS, subcommand="delete")
    assert (code, err_text) == (1, "Unrecognized subcommand: 'delete'\n")


def test_the_command_line_needs_a_worker_config(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["internal-topics", "create"])
    assert exited.value.code == 2
    assert "the following arguments are required: --worker-config" in capsys.readouterr().err
