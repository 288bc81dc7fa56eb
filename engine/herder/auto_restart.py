"""One actor's automatic restarts (``restart.policy=on-failure``): attempts, backoff timers, resets.

This is bookkeeping only. It never fires a lifecycle: a due restart or a healthy-period reset is
a message posted to the actor's own mailbox (``RestartDue``, ``RestartReset``), and the actor
decides, in order with everything else it applies, whether the unit is still FAILED, still
wanted (target STARTED, still owned here, not deleted) and restarts it through the same path as
a REST restart (``ConnectorActor._restart_units``). Every transition of a unit bumps its token,
so a timer that fires after the unit moved on is recognised as stale and ignored.

A timer waiting for its time is not work in flight: ``Engine.settled`` does not wait for it,
as it does not wait for a cleanup's retry backoff.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import structlog

from engine.herder.messages import Message, RestartDue, RestartReset
from engine.herder.restart_policy import RestartPolicy
from engine.herder.timers import TimerHandle, Timers

log = structlog.get_logger(component="herder")

Unit = int | None  # None: the connector itself; n: task n


@dataclass
class UnitRestarts:
    attempts: int = 0  # automatic restarts since the last reset
    next_at: float | None = None  # epoch seconds of the scheduled restart
    token: int = 0
    timer: TimerHandle | None = None
    gave_up: bool = False

    def cancel(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
        self.timer, self.next_at = None, None
        self.token += 1


class AutoRestarts:
    """The restart state of one connector's units on this worker (the owner's; lost on restart)."""

    def __init__(self, connector: str, timers: Timers, post: Callable[[Message], None]) -> None:
        self.connector = connector
        self._timers = timers
        self._post = post
        self._units: dict[Unit, UnitRestarts] = {}

    @property
    def scheduled(self) -> int:
        """Restarts waiting for their backoff (the metrics gauge)."""
        return sum(1 for u in self._units.values() if u.next_at is not None)

    def fields(self, unit: Unit) -> tuple[int, int | None]:
        """``restart_attempts`` and ``next_restart_ms`` (epoch ms) for the unit's status."""
        state = self._units.get(unit)
        if state is None:
            return 0, None
        return state.attempts, None if state.next_at is None else int(state.next_at * 1000)

    # ---- what the actor reports -------------------------------------------------------------

    def failed(self, unit: Unit, policy: RestartPolicy) -> None:
        """The unit entered FAILED and may be restarted (on-failure, target STARTED, owned here)."""
        state = self._units.setdefault(unit, UnitRestarts())
        state.cancel()
        if policy.exhausted(state.attempts):
            if not state.gave_up:
                state.gave_up = True
                log.error("connector.auto_restart_gave_up", task=unit, attempts=state.attempts)
            return
        delay = policy.backoff(state.attempts)
        state.next_at = self._timers.time() + delay
        token = state.token
        state.timer = self._timers.call_later(delay, lambda: self._post(RestartDue(unit, token)))
        log.info(
            "connector.auto_restart_scheduled", task=unit, attempt=state.attempts + 1, in_s=round(delay, 3)
        )

    def running(self, unit: Unit, policy: RestartPolicy) -> None:
        """The unit entered RUNNING: its attempts reset once it stays RUNNING ``restart.reset.after.ms``."""
        state = self._units.get(unit)
        if state is None:
            return
        state.cancel()
        if state.attempts:
            token = state.token
            state.timer = self._timers.call_later(
                policy.reset_after, lambda: self._post(RestartReset(unit, token))
            )

    def left(self, unit: Unit) -> None:
        """Any other transition (restarting, paused, unassigned ...): no timer runs for it; attempts stay."""
        state = self._units.get(unit)
        if state is not None:
            state.cancel()

    def forget(self, unit: Unit) -> None:
        """Destroyed, or no longer owned here."""
        state = self._units.pop(unit, None)
        if state is not None:
            state.cancel()

    def clear(self) -> None:
        """A new config, a deletion, a shutdown: every timer cancelled, every count back to 0."""
        for state in self._units.values():
            state.cancel()
        self._units.clear()

    # ---- what the actor asks when a timer's message arrives -----------------------------------

    def take_due(self, unit: Unit, token: int) -> bool:
        """The restart this token scheduled is still wanted by the bookkeeping; it is no longer scheduled."""
        state = self._units.get(unit)
        if state is None or state.token != token or state.next_at is None:
            return False
        state.timer, state.next_at = None, None
        return True

    def attempted(self, unit: Unit) -> int:
        state = self._units.setdefault(unit, UnitRestarts())
        state.attempts += 1
        state.gave_up = False
        return state.attempts

    def reset(self, unit: Unit, token: int) -> bool:
        """A healthy period passed; True when the count was reset (the status is rewritten then)."""
        state = self._units.get(unit)
        if state is None or state.token != token or not state.attempts:
            return False
        state.timer = None
        state.attempts, state.gave_up = 0, False
        log.info("connector.auto_restart_reset", task=unit)
        return True
