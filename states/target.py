"""The desired state a connector is asked to be in, as written to the config log."""

from __future__ import annotations

from enum import StrEnum


class TargetState(StrEnum):
    """Connect's ``TargetState``: what the operator wants, not what is running.

    STOPPED is PAUSED plus a full shutdown of every task (zero task configs).
    """

    STARTED = "STARTED"
    PAUSED = "PAUSED"
    STOPPED = "STOPPED"

    @classmethod
    def from_initial_state(cls, value: str) -> TargetState:
        """Map a REST ``initial_state`` (RUNNING/PAUSED/STOPPED, any case) to a target state."""
        upper = value.strip().upper()
        if upper == "RUNNING":
            return cls.STARTED
        if upper in ("PAUSED", "STOPPED"):
            return cls(upper)
        raise ValueError(f"Invalid initial state {value!r}: expected RUNNING, PAUSED or STOPPED")
