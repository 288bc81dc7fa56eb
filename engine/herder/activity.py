"""Which connector actors and runners may be busy: a quiet check costs what is active, not what exists.

``Engine.settled`` and the cluster scenario runner ask "is anything busy?" many times a step. Asking
every connector's actor and every runner made that O(connectors) per question, which at thousands
of connectors (and dozens of simulated workers) was most of a run's time. Instead, an actor marks
itself here whenever a message is posted to it, and a runner whenever it may stop being parked
(launched, woken, its wait over or cancelled); the check looks at the marked ones only and forgets
those it finds idle, until their next mark.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from engine.worker.runner import Runner


class ActiveActor(Protocol):
    """What the check reads of a connector actor."""

    @property
    def name(self) -> str: ...

    @property
    def idle(self) -> bool: ...

    def unit_runner(self, unit: str) -> Runner | None: ...


class Activity:
    """The actors and runners that may be busy; ``busy_count`` forgets those it finds idle."""

    def __init__(self, live: Callable[[str], object | None]) -> None:
        self._live = live  # the herder's current actor for a connector name (a replaced one is gone)
        self._actors: set[ActiveActor] = set()
        self._runners: dict[Runner, tuple[ActiveActor, str]] = {}

    def actor_active(self, actor: ActiveActor) -> None:
        self._actors.add(actor)

    def runner_active(self, runner: Runner, actor: ActiveActor, unit: str) -> None:
        self._runners[runner] = (actor, unit)

    def busy_count(self, parked: Callable[[str, str], bool]) -> int:
        """Actors handling a message and the current runners in flight, leaving out those
        ``parked(connector, unit)`` says are stuck on purpose."""
        busy = 0
        for actor in list(self._actors):
            if self._live(actor.name) is not actor or actor.idle:
                self._actors.discard(actor)
            else:
                busy += 1
        for runner, (actor, unit) in list(self._runners.items()):
            current = self._live(actor.name) is actor and actor.unit_runner(unit) is runner
            if not current or not runner.busy:
                del self._runners[runner]
            elif not parked(actor.name, unit):
                busy += 1
        return busy
