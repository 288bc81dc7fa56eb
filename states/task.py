"""The task's observed lifecycle (Kafka's ``AbstractStatus.State`` as ``WorkerTask`` reports it) and its
transition table. Tasks never STOP."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Final

from states.lifecycle import DestroyHook, Lifecycle
from states.machine import make_machine


class TaskState(StrEnum):
    """What a task is observed doing. There is no STOPPED: a stopped connector has no tasks."""

    UNASSIGNED = "UNASSIGNED"
    RUNNING = "RUNNING"
    PAUSED = "PAUSED"
    FAILED = "FAILED"
    RESTARTING = "RESTARTING"
    DESTROYED = "DESTROYED"


T = TaskState
_LIVE: Final = [s for s in T if s is not T.DESTROYED]

# one transition a line, unformatted: the table reads as the diagram does
# fmt: off
TASK_TRANSITIONS: Final[list[dict[str, Any]]] = [
    # start() returned with the connector's target STARTED
    {"trigger": "start", "source": [T.UNASSIGNED, T.RESTARTING], "dest": T.RUNNING},
    # connector paused: the task keeps its resources; assigned while paused: no callbacks yet
    {"trigger": "pause", "source": [T.RUNNING, T.UNASSIGNED, T.RESTARTING], "dest": T.PAUSED},
    {"trigger": "resume", "source": T.PAUSED, "dest": T.RUNNING},
    # start/poll/put raised: the connector's state is unaffected
    {"trigger": "fail", "source": [T.UNASSIGNED, T.RUNNING, T.PAUSED, T.RESTARTING], "dest": T.FAILED},
    {"trigger": "restart", "source": _LIVE, "dest": T.RESTARTING},
    # stopped without deletion: reconfiguration, restart, worker shutdown
    {"trigger": "unassign", "source": [T.RUNNING, T.PAUSED, T.FAILED, T.RESTARTING], "dest": T.UNASSIGNED},
    {"trigger": "destroy", "source": _LIVE, "dest": T.DESTROYED},
]
# fmt: on


class TaskLifecycle(Lifecycle[TaskState]):
    """One task's observed state; entering DESTROYED releases it."""

    _machine = make_machine(TaskState, TASK_TRANSITIONS, T.UNASSIGNED)
    _destroyed = T.DESTROYED

    def __init__(self, connector: str, task: int, on_destroyed: DestroyHook | None = None) -> None:
        super().__init__(connector, task, on_destroyed)
