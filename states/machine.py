"""One shared AsyncMachine per lifecycle kind, with O(1) model registration."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Iterator
from enum import StrEnum
from typing import Any

from transitions.extensions.asyncio import AsyncMachine


class _ModelRegistry:
    """The list-shaped container ``transitions`` keeps models in, keyed by identity.

    ``transitions`` stores models in a list, so ``add_model``/``remove_model`` cost O(n) each and
    creating or deleting 10,000 connectors becomes quadratic. This keeps its list interface.
    """

    def __init__(self) -> None:
        self._models: dict[int, object] = {}

    def append(self, model: object) -> None:
        self._models[id(model)] = model

    def remove(self, model: object) -> None:
        del self._models[id(model)]

    def __contains__(self, model: object) -> bool:
        return id(model) in self._models

    def __iter__(self) -> Iterator[object]:
        return iter(list(self._models.values()))

    def __len__(self) -> int:
        return len(self._models)

    def __getitem__(self, index: int) -> object:
        return list(self._models.values())[index]


class _Machine(AsyncMachine):
    """AsyncMachine without a log warning per unbound convenience method per model.

    With ``model_override=True`` transitions binds only what the model declares and warns
    about each ``is_<STATE>``/``may_<trigger>`` it skips: a dozen log records per connector.
    """

    def _checked_assignment(self, model: object, name: str, func: object) -> None:
        if hasattr(model, name):
            setattr(model, name, func)

    async def callbacks(self, funcs: Iterable[Any], event_data: Any) -> None:  # type: ignore[override]
        """Run a callback list without ``asyncio.gather`` when it is empty or has one entry.

        A transition consults about ten callback lists and nearly all are empty; gathering each
        costs a future and a loop round trip. One callback is awaited in place, as gather would
        have run it alone; two or more keep transitions' concurrent semantics.
        """
        listed = funcs if isinstance(funcs, list) else list(funcs)
        if not listed:
            return
        if len(listed) == 1:
            await self.callback(listed[0], event_data)
            return
        await super().callbacks(listed, event_data)

    @staticmethod
    async def await_all(callables: list[Any]) -> list[Any]:
        """Condition checks: none (our tables have none) costs nothing; otherwise transitions' gather."""
        if not callables:
            return []
        return list(await asyncio.gather(*[func() for func in callables]))


def make_machine(
    states: type[StrEnum], transitions: list[dict[str, Any]], initial: StrEnum
) -> AsyncMachine:
    """Build the machine every lifecycle of one kind shares.

    ``queued=False`` because the herder already serializes events per connector (a queued
    trigger would return True before it ran); no auto transitions, so only the table's edges exist.
    """
    machine = _Machine(
        model=None,
        states=states,
        transitions=transitions,
        initial=initial,
        auto_transitions=False,
        model_override=True,
        queued=False,
        ignore_invalid_triggers=False,
        send_event=False,
    )
    machine.models = _ModelRegistry()  # type: ignore[assignment]  # duck-typed list, O(1) removal
    return machine
