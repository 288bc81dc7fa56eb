"""One shared AsyncMachine per lifecycle kind, with O(1) model registration."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Iterator
from enum import Enum, StrEnum
from functools import partial
from typing import Any

from transitions.core import listify
from transitions.extensions.asyncio import AsyncMachine, AsyncState


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


class _State(AsyncState):
    """An AsyncState whose name is worked out once.

    transitions reads ``State.name`` about ten times per transition, and for Enum states each
    read is an ``isinstance`` check plus an enum property lookup.
    """

    def __init__(self, name: str | Enum, *args: Any, **kwargs: Any) -> None:
        super().__init__(name, *args, **kwargs)
        self._plain_name: str = name.name if isinstance(name, Enum) else name

    @property
    def name(self) -> str:
        return self._plain_name


class _Machine(AsyncMachine):
    """AsyncMachine without per-model warnings, and with cheaper per-transition bookkeeping.

    With ``model_override=True`` transitions binds only what the model declares and warns
    about each ``is_<STATE>``/``may_<trigger>`` it skips: a dozen log records per connector.
    """

    state_cls = _State  # type: ignore[assignment]  # the stub names the nested variant

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._bound: list[str] | None = None
        self._trigger_only: dict[type, bool] = {}
        super().__init__(*args, **kwargs)

    def _checked_assignment(self, model: object, name: str, func: object) -> None:
        if hasattr(model, name):
            setattr(model, name, func)
            if self._bound is not None:
                self._bound.append(name)

    def add_model(self, model: Any, initial: Any = None) -> None:
        """Register models; after the first of a class, one that binds only ``trigger`` is quick.

        transitions probes every state and event name on every model (about 40 ``hasattr``
        calls and partials). Instances of one class answer alike, and state callbacks
        (``on_enter_<STATE>``) are registered once per machine, so when the first instance bound
        nothing but ``trigger`` the next ones just get their ``trigger`` and initial state.
        """
        for mod in listify(model):
            kind = type(mod)
            if initial is None and self._trigger_only.get(kind) and mod not in self.models:
                mod.trigger = partial(AsyncMachine._get_trigger, self, mod)  # no bound method kept
                setattr(mod, self.model_attribute, self.get_state(self.initial).value)
                self.models.append(mod)
                continue
            self._bound = []
            try:
                super().add_model(mod, initial)
                self._trigger_only[kind] = self._bound == ["trigger"]
            finally:
                self._bound = None

    def __getattr__(self, name: str) -> Any:
        # AsyncTransition._change_state probes ``hasattr(machine, "model_graphs")`` on every
        # transition; transitions' __getattr__ parses the name as a callback first.
        if name == "model_graphs":
            raise AttributeError(name)
        return super().__getattr__(name)

    def get_state(self, state: Any) -> Any:
        """A direct lookup: our StrEnum members hash and compare as their names (see make_machine)."""
        found = self.states.get(state)
        return found if found is not None else super().get_state(state)

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


def make_machine(states: type[StrEnum], transitions: list[dict[str, Any]], initial: StrEnum) -> AsyncMachine:
    """Build the machine every lifecycle of one kind shares.

    ``queued=False`` because the herder already serializes events per connector (a queued
    trigger would return True before it ran); no auto transitions, so only the table's edges exist.
    """
    if any(s.name != s.value for s in states):
        raise ValueError(f"{states.__name__}: state values must equal their names")
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
