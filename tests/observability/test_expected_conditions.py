"""aiokafka's expected, transient conditions (a topic being auto-created, a group's coordinator still
loading, a rebalance seen by a heartbeat) are logged at debug level; real errors stay errors."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator

import pytest
from aiokafka.errors import GroupAuthorizationFailedError, GroupCoordinatorNotAvailableError

from engine.observability.logs import configure_logging


@pytest.fixture
def configured() -> Iterator[None]:
    configure_logging("DEBUG", json=True)
    yield
    for handler in list(logging.getLogger().handlers):
        if type(handler).__name__ == "_ToStructlog":
            logging.getLogger().removeHandler(handler)
    configure_logging("INFO", json=True)


def _levels(err: str) -> dict[str, str]:
    events = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    return {e["event"]: e["level"] for e in events if e.get("component", "").startswith("aiokafka")}


@pytest.mark.usefixtures("configured")
def test_transient_conditions_are_debug_and_real_errors_stay_errors(
    capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    logging.getLogger("aiokafka").setLevel(logging.DEBUG)
    try:
        cluster = logging.getLogger("aiokafka.cluster")
        coordinator = logging.getLogger("aiokafka.consumer.group_coordinator")
        # as aiokafka logs them (cluster.py, consumer/group_coordinator.py)
        cluster.error("Topic %s not found in cluster metadata", "orders")
        cluster.warning("Topic %s is not available during auto-create initialization", "orders")
        coordinator.error("Group Coordinator Request failed: %s", GroupCoordinatorNotAvailableError())
        coordinator.warning("Heartbeat failed for group %s because it is rebalancing", "connect")
        cluster.error("Topic %s is not authorized for this client", "secret")
        coordinator.error("Group Coordinator Request failed: %s", GroupAuthorizationFailedError())
    finally:
        logging.getLogger("aiokafka").setLevel(logging.NOTSET)
    levels = _levels(capsys.readouterr().err)  # the CLI's output: library warnings and errors only
    assert levels == {
        "Topic secret is not authorized for this client": "error",
        f"Group Coordinator Request failed: {GroupAuthorizationFailedError()}": "error",
    }
    lowered = {r.getMessage(): r.levelname for r in caplog.records if r.name.startswith("aiokafka")}
    assert lowered == {
        "Topic orders not found in cluster metadata": "DEBUG",
        "Topic orders is not available during auto-create initialization": "DEBUG",
        f"Group Coordinator Request failed: {GroupCoordinatorNotAvailableError()}": "DEBUG",
        "Heartbeat failed for group connect because it is rebalancing": "DEBUG",
        "Topic secret is not authorized for this client": "ERROR",
        f"Group Coordinator Request failed: {GroupAuthorizationFailedError()}": "ERROR",
    }


def test_an_application_logging_at_warning_does_not_see_them(caplog: pytest.LogCaptureFixture) -> None:
    """The filter sits on aiokafka's loggers: an embedding application's own handlers see the lower level."""
    import engine  # noqa: F401  (its import installs the filter)

    with caplog.at_level(logging.WARNING):
        logging.getLogger("aiokafka.cluster").error("Topic %s not found in cluster metadata", "orders")
        logging.getLogger("aiokafka.cluster").error("'%s' is not a valid topic name", "a b")
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        ("ERROR", "'a b' is not a valid topic name")
    ]
