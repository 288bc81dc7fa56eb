"""The transition trace of a scenario run, ordered so the same file always prints the same trace."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from engine.herder.transition_feed import TransitionEvent


@dataclass(frozen=True, slots=True)
class TraceLine:
    """One transition, stamped with virtual time and the step that caused it (one past the last step:
    the worker's final stop)."""

    time: float
    step: int
    connector: str
    task: int | None
    trigger: str
    from_state: str
    to_state: str
    worker: str = ""  # cluster scenarios: the worker that made the transition
    phase: int = 0  # cluster scenarios: which settle within the step (each member's part of a round is one)

    @property
    def unit(self) -> str:
        return "connector" if self.task is None else f"task-{self.task}"

    def text(self, width: int = 12, *, verb: str = "", clock: bool = False, workers: bool = False) -> str:
        """``step verb [virtual time] connector unit trigger from -> to``: the step that caused it, and the
        virtual clock (only worth a column in scenarios that ``advance`` it); never wall time, so the
        same file prints the same lines on every run."""
        at = f"  {self.time:6.3f}s" if clock else ""
        if workers:
            at += f"  {self.worker:<6}"
        return (
            f"{self.step:>4} {verb:<14}{at}  {self.connector:<{width}}  {self.unit:<9}  {self.trigger:<8}  "
            f"{self.from_state} -> {self.to_state}"
        )

    def as_json(self) -> dict[str, Any]:
        body = asdict(self)
        del body["phase"]
        if not self.worker:
            del body["worker"]
        return body


def stamp(events: Iterable[TransitionEvent], time: float, step: int) -> list[TraceLine]:
    """One step's events in a canonical order: by connector; its own transitions before its
    tasks' except its destruction, which follows theirs (as deletion does); tasks by number.

    Each connector's and task's own sequence keeps the engine's order (that order is
    deterministic); how concurrent units interleave depends on scheduling, so it is not shown.
    """
    lines = [TraceLine(time, step, e.connector, e.task, e.trigger, e.from_state, e.to_state) for e in events]
    return sorted(lines, key=_canonical)


def _canonical(line: TraceLine) -> tuple[str, int, int]:
    if line.task is not None:
        return (line.connector, 1, line.task)
    return (line.connector, 2 if line.to_state == "DESTROYED" else 0, 0)
