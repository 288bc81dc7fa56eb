"""Faults injected into the instrumented connectors while they run, and the virtual clock they obey.

Config keys (``test.fail.*``) fix a connector's behaviour for its whole life; a scenario's
``inject`` step needs to change it mid-run, for one callback, and undo it again. A blocked
callback waits on the virtual clock, so a scenario decides when "five seconds" have passed.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from engine.api.errors import ConnectException

_LEAVE_TIMEOUT_S = 5.0


class FaultAction(StrEnum):
    RAISE = "raise"
    BLOCK = "block"
    CRASH = "crash"


class SimulatedCrash(ConnectException):
    """Raised in a callback whose worker was crashed under it; nobody is left to observe it."""


@dataclass(frozen=True, slots=True)
class Fault:
    action: FaultAction
    until: float | None = None  # virtual time a block ends; None blocks until cleared
    task: int | None = None  # for task callbacks: only this task (None: every task)


class VirtualClock:
    """Seconds since the scenario began; moves only through ``advance``."""

    def __init__(self) -> None:
        self.now = 0.0


class Faults:
    """Thread-safe: callbacks consult it from worker threads, scenarios change it from the loop."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._faults: dict[tuple[str, str], Fault] = {}
        self._parked: Counter[tuple[str, str]] = Counter()
        self._holds: dict[int, Callable[[], bool]] = {}  # each parked callback: does it stay parked?
        self._generation = 0  # bumped by release_all: every parked callback returns
        self.clock = VirtualClock()
        self.on_crash: Callable[[], None] | None = None

    # ---- what scenarios call --------------------------------------------------------------

    def inject(
        self,
        connector: str,
        callback: str,
        action: FaultAction | str,
        *,
        seconds: float | None = None,
        task: int | None = None,
    ) -> None:
        """``callback`` as the recording kit names it: ``stop``, ``deleted``, ``task.start``, ..."""
        kind = FaultAction(action)
        until = None if seconds is None else self.clock.now + seconds
        with self._changed:
            self._faults[(connector, callback)] = Fault(kind, until, task)
            self._changed.notify_all()

    def clear(self, connector: str, callback: str | None = None) -> None:
        """Remove one fault, or every fault of ``connector``; blocked callbacks return."""
        with self._changed:
            for key in [k for k in self._faults if k[0] == connector and callback in (None, k[1])]:
                del self._faults[key]
            self._released()

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("the clock only moves forward")
        with self._changed:
            self.clock.now += seconds
            self._released()

    def _released(self) -> None:
        """Wake parked callbacks and wait (briefly) until those no longer held have left: until then
        they still count as parked, and the engine would look settled before they return."""
        self._changed.notify_all()
        self._changed.wait_for(
            lambda: all(holds() for holds in self._holds.values()), timeout=_LEAVE_TIMEOUT_S
        )

    def release_all(self) -> None:
        """Let every parked callback return (faults stay); used on crash and at the end of a run."""
        with self._changed:
            self._generation += 1
            self._changed.notify_all()

    def reset(self) -> None:
        """Forget every fault and wait (briefly) until released callbacks have left, so a stale
        parked count cannot make the next run's engine look settled too early."""
        with self._changed:
            self._faults.clear()
            self._generation += 1
            self.clock.now = 0.0
            self.on_crash = None
            self._changed.notify_all()
            self._changed.wait_for(lambda: not +self._parked, timeout=_LEAVE_TIMEOUT_S)

    def armed(self, connector: str, callback: str) -> bool:
        """Whether a fault is set for this callback: lets hot callbacks skip the thread hop otherwise."""
        with self._changed:
            return (connector, callback) in self._faults

    def parked(self, connector: str, unit: str) -> bool:
        """Whether a callback of this connector's unit (``connector``, ``task-N``) is blocked on purpose."""
        with self._changed:
            return self._parked[(connector, unit)] > 0

    # ---- what instrumented callbacks call -------------------------------------------------

    def hit(self, connector: str, unit: str, callback: str) -> None:
        with self._changed:
            fault = self._faults.get((connector, callback))
            if fault is None or (fault.task is not None and unit != f"task-{fault.task}"):
                return
            # registered as parked before anything can release it: a release racing the crash
            # handler (or the clock) then cannot be missed
            generation = self._generation
            if fault.action is not FaultAction.RAISE:
                self._parked[(connector, unit)] += 1
            if fault.action is FaultAction.CRASH:
                del self._faults[(connector, callback)]  # a crash happens once; the restart recovers
        name = f"{unit}.{callback.removeprefix('task.')}"
        if fault.action is FaultAction.RAISE:
            raise ConnectException(f"injected failure in {name}")
        if fault.action is FaultAction.CRASH:
            if self.on_crash is not None:
                self.on_crash()
            self._park(connector, unit, generation, lambda: True)
            raise SimulatedCrash(f"the worker crashed in {name}")
        self._park(
            connector,
            unit,
            generation,
            lambda: (
                self._faults.get((connector, callback)) is fault
                and (fault.until is None or self.clock.now < fault.until)
            ),
        )

    def _park(self, connector: str, unit: str, generation: int, holds: Callable[[], bool]) -> None:
        """Wait (already counted as parked) until released, cleared, or past the block's time."""

        def still() -> bool:
            return holds() and generation == self._generation

        with self._changed:
            self._holds[id(still)] = still
            try:
                while still():
                    self._changed.wait()
            finally:
                del self._holds[id(still)]
                self._parked[(connector, unit)] -= 1
                self._changed.notify_all()  # reset() and _released() wait for parked callbacks to leave


FAULTS = Faults()
