"""connect-engine: run Kafka Connect-style connectors in asyncio, with deletion callbacks."""

from __future__ import annotations

from engine.engine import Engine
from engine.errors import (
    ConfigError,
    ConnectorAlreadyExists,
    ConnectorNotFound,
    EngineError,
    EngineNotRunning,
    IllegalTransition,
    SettleTimeout,
    StateTimeout,
    TaskNotFound,
)
from engine.herder.deletion import DeletionOutcome
from engine.herder.transition_feed import TransitionEvent

__all__ = [
    "ConfigError",
    "ConnectorAlreadyExists",
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
