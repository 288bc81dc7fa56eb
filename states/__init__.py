"""Lifecycle declarations: target states, observed states and their transition tables.

This package declares; ``engine`` behaves. Nothing here imports ``engine``.
"""

from __future__ import annotations

from states.connector import CONNECTOR_TRANSITIONS, ConnectorLifecycle, ConnectorState
from states.errors import IllegalTransition
from states.lifecycle import Lifecycle, TransitionRecord
from states.target import TargetState
from states.task import TASK_TRANSITIONS, TaskLifecycle, TaskState

__all__ = [
    "CONNECTOR_TRANSITIONS",
    "TASK_TRANSITIONS",
    "ConnectorLifecycle",
    "ConnectorState",
    "IllegalTransition",
    "Lifecycle",
    "TargetState",
    "TaskLifecycle",
    "TaskState",
    "TransitionRecord",
]
