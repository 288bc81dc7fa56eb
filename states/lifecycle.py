"""The model both lifecycle kinds share: fire a trigger, get a transition record or an error."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import ClassVar, Generic, TypeVar

from transitions import MachineError
from transitions.extensions.asyncio import AsyncMachine

from states.errors import IllegalTransition

StateT = TypeVar("StateT", bound=StrEnum)

DestroyHook = Callable[[], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class TransitionRecord:
    """One edge taken: what the herder logs and publishes to transition listeners."""

    connector: str
    task: int | None
    trigger: str
    from_state: str
    to_state: str


class Lifecycle(Generic[StateT]):
    """The observed state of one connector or task, moved only by its machine's table.

    Subclasses name the shared machine (``_machine``) and the DESTROYED state. Entering
    DESTROYED runs ``on_destroyed`` (the deletion callbacks) and then releases the model from
    the machine, so a destroyed lifecycle holds no machine memory and accepts no trigger.
    """

    _machine: ClassVar[AsyncMachine]
    _destroyed: ClassVar[StrEnum]
    state: StateT

    def __init__(self, connector: str, task: int | None, on_destroyed: DestroyHook | None) -> None:
        self.connector = connector
        self.task = task
        self._on_destroyed = on_destroyed
        self._machine.add_model(self)

    @property
    def unit(self) -> str:
        return self.connector if self.task is None else f"{self.connector}-{self.task}"

    async def trigger(self, name: str) -> bool:  # replaced per model by the machine
        raise RuntimeError("machine not attached")

    async def fire(self, trigger: str) -> TransitionRecord:
        """Take the edge ``trigger`` names from the current state, or raise IllegalTransition."""
        before = self.state
        if before is self._destroyed:
            raise IllegalTransition(unit=self.unit, state=before.value, trigger=trigger)
        event = self._machine.events.get(trigger)
        if event is None:
            raise IllegalTransition(unit=self.unit, state=before.value, trigger=trigger)
        try:
            await event.trigger(self)  # what ``self.trigger(name)`` resolves to, minus the look-up
        except MachineError:
            raise IllegalTransition(unit=self.unit, state=before.value, trigger=trigger) from None
        current = asyncio.current_task()
        # transitions turns a cancellation inside a callback into a False result; give it back.
        if current is not None and current.cancelling():
            raise asyncio.CancelledError
        return TransitionRecord(self.connector, self.task, trigger, before.value, self.state.value)

    def allowed_triggers(self) -> list[str]:
        """Triggers the table allows from the current state (for diagnostics and tests)."""
        return sorted(self._machine.get_triggers(self.state.value))

    async def on_enter_DESTROYED(self) -> None:  # noqa: N802 - the name transitions looks up
        try:
            if self._on_destroyed is not None:
                await self._on_destroyed()
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is None or not current.cancelling():
                raise
            # the unit's coroutine is cancelled (an abort): ``fire`` raises it again, where transitions
            # would log it as an error while processing the trigger
        finally:
            self._machine.remove_model(self)
