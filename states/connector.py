"""The connector's observed lifecycle (Kafka's ``AbstractStatus.State`` as ``WorkerConnector`` reports
it) and its transition table."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Final

from states.lifecycle import DestroyHook, Lifecycle
from states.machine import make_machine


class ConnectorState(StrEnum):
    """What a connector is observed doing; the status store and REST report these names."""

    UNASSIGNED = "UNASSIGNED"
    RUNNING = "RUNNING"
    PAUSED = "PAUSED"
    STOPPED = "STOPPED"
    FAILED = "FAILED"
    RESTARTING = "RESTARTING"
    DESTROYED = "DESTROYED"


C = ConnectorState
_LIVE: Final = [s for s in C if s is not C.DESTROYED]

# Read top to bottom: each trigger names the outcome the worker observed.
# one transition a line, unformatted: the table reads as the diagram does
# fmt: off
CONNECTOR_TRANSITIONS: Final[list[dict[str, Any]]] = [
    # instance started (created, restarted or reassigned) with target STARTED
    {"trigger": "start", "source": [C.UNASSIGNED, C.RESTARTING], "dest": C.RUNNING},
    # target PAUSED honoured: stop() on a running instance, or a paused creation/restart;
    # STOPPED -> PAUSED keeps 0 tasks (Connect's testPauseStopResume)
    {"trigger": "pause", "source": [C.RUNNING, C.UNASSIGNED, C.RESTARTING, C.STOPPED], "dest": C.PAUSED},
    # target STARTED again: start() on the same instance
    {"trigger": "resume", "source": [C.PAUSED, C.STOPPED], "dest": C.RUNNING},
    # target STOPPED: FAILED -> STOPPED is allowed (Connect: stop() skipped for a failed instance)
    {"trigger": "stop", "source": [C.RUNNING, C.PAUSED, C.FAILED, C.UNASSIGNED, C.RESTARTING], "dest": C.STOPPED},
    # a callback raised, raise_error() was called, or tasks.max was exceeded
    {"trigger": "fail", "source": [C.UNASSIGNED, C.RUNNING, C.PAUSED, C.STOPPED, C.RESTARTING], "dest": C.FAILED},
    # KIP-745 restart plan selected this connector
    {"trigger": "restart", "source": _LIVE, "dest": C.RESTARTING},
    # instance stopped without deletion: plain restart, config update, worker shutdown
    {"trigger": "unassign", "source": [C.RUNNING, C.PAUSED, C.STOPPED, C.FAILED, C.RESTARTING], "dest": C.UNASSIGNED},
    # not "*": that includes DESTROYED, and a second tombstone would re-run deletion
    {"trigger": "destroy", "source": _LIVE, "dest": C.DESTROYED},
]
# fmt: on


class ConnectorLifecycle(Lifecycle[ConnectorState]):
    """One connector's observed state; entering DESTROYED runs its deletion callbacks."""

    _machine = make_machine(ConnectorState, CONNECTOR_TRANSITIONS, C.UNASSIGNED)
    _destroyed = C.DESTROYED

    def __init__(self, connector: str, on_destroyed: DestroyHook | None = None) -> None:
        super().__init__(connector, None, on_destroyed)
