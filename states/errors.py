"""The one error ``states`` raises: a trigger the transition table does not allow."""

from __future__ import annotations


class IllegalTransition(Exception):
    """A trigger was fired from a state the table has no edge for.

    Never a silent no-op: the caller learns which unit, state and trigger were involved.
    """

    def __init__(self, *, unit: str, state: str, trigger: str) -> None:
        super().__init__(f"{trigger!r} is not allowed from {state} for {unit}")
        self.unit = unit
        self.state = state
        self.trigger = trigger
