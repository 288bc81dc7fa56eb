"""A library repeating one error (aiokafka during a broker outage) is logged once per window, with a count."""

from __future__ import annotations

import logging

import pytest

from engine.observability.logs import RepeatFilter, configure_logging


def _record(*args: object, message: str = "Unable connect to node with id %s") -> logging.LogRecord:
    return logging.LogRecord("aiokafka.conn", logging.ERROR, __file__, 1, message, args, None)


def test_repeats_within_the_window_are_dropped_and_counted_on_the_next_one_shown() -> None:
    now = [0.0]
    repeat = RepeatFilter(window_s=10, clock=lambda: now[0])
    assert repeat.filter(_record(1))
    assert [repeat.filter(_record(1)) for _ in range(89)] == [False] * 89
    assert repeat.filter(_record(message="another message"))  # a different message is its own line
    now[0] = 10.5
    shown = _record(1)
    assert repeat.filter(shown)
    assert shown.getMessage() == "Unable connect to node with id 1 (repeated 89 more times in 10 s)"


def test_configured_logging_shows_a_flood_of_one_library_error_once(
    capsys: pytest.CaptureFixture[str],
) -> None:
    configure_logging("INFO", json=True)
    try:
        for _ in range(100):
            logging.getLogger("aiokafka.conn").error("Unable connect to node with id %s", 1)
    finally:
        for handler in list(logging.getLogger().handlers):
            if type(handler).__name__ == "_ToStructlog":
                logging.getLogger().removeHandler(handler)
    lines = [line for line in capsys.readouterr().err.splitlines() if "Unable connect" in line]
    assert len(lines) == 1
    assert '"component": "aiokafka.conn"' in lines[0]
