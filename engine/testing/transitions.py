"""Recording an engine's transitions and asserting their order, for state-transition tests."""

from __future__ import annotations

from collections.abc import Iterable

from engine.herder.transition_feed import Subscription, TransitionEvent


def describe(event: TransitionEvent) -> str:
    """``orders task-0 RUNNING -> PAUSED``: the form ``assert_transitions`` expects."""
    unit = "connector" if event.task is None else f"task-{event.task}"
    return f"{event.connector} {unit} {event.from_state} -> {event.to_state}"


class TransitionRecorder:
    """Collects an engine's transition events as they happen (subscribe before acting)."""

    def __init__(self, subscription: Subscription) -> None:
        self._subscription = subscription
        self._events: list[TransitionEvent] = []

    @property
    def events(self) -> list[TransitionEvent]:
        self._events.extend(self._subscription.drain())
        return list(self._events)

    def lines(self) -> list[str]:
        return [describe(e) for e in self.events]


def _unit_of(line: str) -> str:
    connector, unit, *_ = line.split(" ", 2)
    return f"{connector} {unit}"


def assert_transitions(recorded: TransitionRecorder | Iterable[TransitionEvent], expected: list[str]) -> None:
    """Assert ``expected`` happened in this order, ignoring units it does not mention.

    Lines read ``<connector> <connector|task-N> <FROM> -> <TO>``. Units that run concurrently
    (two tasks) have no order between them: list only what your test depends on.
    """
    events = recorded.events if isinstance(recorded, TransitionRecorder) else list(recorded)
    units = {_unit_of(line) for line in expected}
    seen = [describe(e) for e in events if _unit_of(describe(e)) in units]
    position = 0
    for line in seen:
        if position < len(expected) and line == expected[position]:
            position += 1
    if position < len(expected):
        raise AssertionError(
            f"transition {expected[position]!r} (number {position + 1} expected) did not follow in order; "
            f"these units went: {seen}"
        )
