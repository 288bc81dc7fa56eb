"""``trace_of``: a Java-style trace, the exception's ``Type: message`` first (what UIs and CLIs show)."""

from __future__ import annotations

import pytest

from engine.api.errors import ConnectException
from engine.errors import ConfigError, trace_of


def _raise_chained() -> None:
    try:
        dict[str, int]()["missing"]
    except KeyError as exc:
        raise ConfigError("bad config") from exc


def test_first_line_is_type_and_message_then_frames_then_causes() -> None:
    with pytest.raises(ConfigError) as raised:
        _raise_chained()
    lines = trace_of(raised.value).splitlines()
    assert lines[0] == "engine.errors.ConfigError: bad config"
    assert lines[1] == "Traceback (most recent call last):"
    assert any("in _raise_chained" in line for line in lines[2:])
    cause = lines.index("Caused by: KeyError: 'missing'")
    assert lines[cause + 1] == "Traceback (most recent call last):"
    assert cause > lines.index("Traceback (most recent call last):")


def _hidden_context() -> None:
    try:
        raise ConnectException("first")
    except ConnectException:
        raise LookupError from None


def _implicit_context() -> None:
    try:
        1 / 0  # noqa: B018
    except ZeroDivisionError:
        raise RuntimeError("while handling")  # noqa: B904 - the implicit context is what is tested


def test_builtins_unqualified_no_message_context_and_groups() -> None:
    with pytest.raises(LookupError) as hidden:
        _hidden_context()
    assert trace_of(hidden.value).splitlines()[0] == "LookupError"
    assert "first" not in trace_of(hidden.value)  # ``from None`` hides the context, as Python does
    with pytest.raises(RuntimeError) as implicit:
        _implicit_context()
    assert "During handling of: ZeroDivisionError: division by zero" in trace_of(implicit.value).splitlines()
    group = ExceptionGroup("two failed", [ValueError("a"), TypeError("b")])
    text = trace_of(group).splitlines()
    assert text[0] == "ExceptionGroup: two failed (2 sub-exceptions)"
    assert text[1:] == ["Contained: ValueError: a", "Contained: TypeError: b"]  # never raised: no frames


def test_a_cause_cycle_ends() -> None:
    first, second = ValueError("a"), ValueError("b")
    first.__cause__, second.__cause__ = second, first
    assert trace_of(first).splitlines() == ["ValueError: a", "Caused by: ValueError: b"]
