"""connect-engine: run Kafka Connect-style connectors in asyncio, with deletion callbacks.

The runtime names (``Engine``, ``DeletionOutcome``, ``TransitionEvent``) resolve on first use
(PEP 562), so ``import engine.api`` — what every connector author writes — loads no runtime.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from engine.errors import (
    ConfigError,
    ConnectorAlreadyExists,
    ConnectorInstantiationError,
    ConnectorNotFound,
    EngineError,
    EngineNotRunning,
    IllegalTransition,
    SettleTimeout,
    StateTimeout,
    TaskNotFound,
)

if TYPE_CHECKING:
    from engine.engine import Engine
    from engine.herder.deletion import DeletionOutcome
    from engine.herder.transition_feed import TransitionEvent

_LAZY = {
    "DeletionOutcome": "engine.herder.deletion",
    "Engine": "engine.engine",
    "TransitionEvent": "engine.herder.transition_feed",
}

__all__ = [
    "ConfigError",
    "ConnectorAlreadyExists",
    "ConnectorInstantiationError",
    "ConnectorNotFound",
    "DeletionOutcome",
    "Engine",
    "EngineError",
    "EngineNotRunning",
    "IllegalTransition",
    "SettleTimeout",
    "StateTimeout",
    "TaskNotFound",
    "TransitionEvent",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'engine' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # resolved once
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
