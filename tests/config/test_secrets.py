"""``engine.config.secrets``: every value a provider resolved, put back as its reference in any text."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.config.providers import ConfigTransformer
from engine.config.secrets import REVEALED, hide, hide_in_event


@pytest.fixture(autouse=True)
def _forget() -> Iterator[None]:
    REVEALED.forget_all()
    yield
    REVEALED.forget_all()


def test_resolving_a_reference_hides_its_value_everywhere(tmp_path: Path) -> None:
    secrets = tmp_path / "s.properties"
    secrets.write_text("password=hunter22\nlong=hunter22-and-more\n", encoding="utf-8")
    ConfigTransformer.from_worker({"config.providers": "file"}).resolve(
        {"a": f"${{file:{secrets}:password}}", "b": f"jdbc://x?p=${{file:{secrets}:long}}"}
    )
    assert hide("login failed: hunter22") == f"login failed: ${{file:{secrets}:password}}"
    assert hide("got hunter22-and-more") == f"got ${{file:{secrets}:long}}"  # the longer one whole


def test_short_values_stay_in_free_text() -> None:
    REVEALED.remember("7", "${env:N}")
    assert hide("tasks.max=7") == "tasks.max=7"


def test_a_log_event_is_hidden_in_every_field_and_its_traceback() -> None:
    REVEALED.remember("hunter22", "${env:PW}")
    try:
        raise ValueError("bad hunter22")
    except ValueError as exc:
        event = hide_in_event(
            None, "error", {"event": "x", "error": repr(exc), "nested": {"k": ["hunter22"]}, "exc_info": exc}
        )
    assert "hunter22" not in repr(event)
    assert "${env:PW}" in event["exception"]
    assert event["nested"] == {"k": ["${env:PW}"]}


def test_nothing_remembered_leaves_events_alone() -> None:
    event = {"event": "x", "exc_info": True}
    assert hide_in_event(None, "info", event) is event
