"""``trace_of``: a Java-style trace, the exception's ``Type: message`` first (what UIs and CLIs show); and
the exception tree drawn in ``engine/errors.py``'s docstring, which must be the module's classes."""

from __future__ import annotations

import re

import pytest

from engine import errors
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


def _drawn_tree() -> dict[str, tuple[str | None, str]]:
    """The tree in ``engine.errors``' docstring: each drawn class -> (its drawn parent, its line's text).

    A ``* Name`` line is a class, two spaces of indent per level; an indented line without ``*`` goes on
    with the text of the class above it.
    """
    drawn: dict[str, tuple[str | None, str]] = {}
    parents: list[tuple[int, str]] = []  # (indent, name) of the open ancestors
    last: str | None = None
    for line in (errors.__doc__ or "").splitlines():
        entry = re.match(r"( *)\* (\w+)\s*(.*)", line)
        if entry is None:
            if last is not None and line.startswith(" ") and line.strip():
                parent, text = drawn[last]
                drawn[last] = (parent, f"{text} {line.strip()}")
            else:
                last = None
            continue
        indent, name, text = len(entry[1]), entry[2], entry[3]
        while parents and parents[-1][0] >= indent:
            parents.pop()
        assert name not in drawn, f"{name} is drawn twice"
        drawn[name] = (parents[-1][1] if parents else None, text)
        parents.append((indent, name))
        last = name
    return drawn


def _defined_errors() -> dict[str, type[BaseException]]:
    return {
        name: value
        for name, value in vars(errors).items()
        if isinstance(value, type)
        and issubclass(value, BaseException)
        and value.__module__ == errors.__name__
    }


def test_the_docstring_draws_every_error_class_once() -> None:
    assert set(_drawn_tree()) == set(_defined_errors())


def test_each_class_is_drawn_under_its_parent_and_names_its_other_bases() -> None:
    """The drawn parent is the class's one base from this module (none for the root); a base from
    elsewhere (``TimeoutError``, ``states.IllegalTransition``, the root's ``Exception``) is named on its line."""
    drawn = _drawn_tree()
    for name, cls in _defined_errors().items():
        own = [base for base in cls.__bases__ if base.__module__ == errors.__name__]
        assert len(own) <= 1, f"{name} has several parents in engine.errors: draw it as a tree first"
        parent, text = drawn[name]
        assert parent == (own[0].__name__ if own else None), name
        foreign = [base.__name__ for base in cls.__bases__ if base.__module__ != errors.__name__]
        assert [base for base in foreign if base not in text] == [], name
