"""Messages a connector actor's mailbox carries besides config-log events."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from engine.configlog.records import PendingCleanupRecord
from engine.configlog.snapshot import LogEvent
from engine.worker.report import Report
from states import TargetState


@dataclass(frozen=True, slots=True)
class FromLog:
    """A config-log event, with the offset callers wait on."""

    event: LogEvent
    offset: int


@dataclass(frozen=True, slots=True)
class Marker:
    """A record that changed nothing for this connector; only its offset counts as applied."""

    offset: int


@dataclass(frozen=True, slots=True)
class Boot:
    """Start a connector found in the log at start-up, with the task configs it already has."""

    config: dict[str, str]
    target: TargetState
    tasks: tuple[dict[str, str], ...]
    applied: dict[str, str] | None
    incarnation: str = ""


@dataclass(frozen=True, slots=True)
class RunCleanup:
    """A deletion whose ``deleted()`` never succeeded (the process died, or it failed)."""

    record: PendingCleanupRecord


@dataclass(frozen=True, slots=True)
class Reconfigure:
    """``ConnectorContext.request_task_reconfiguration()``."""

    runner: object


@dataclass(frozen=True, slots=True)
class Shutdown:
    """Worker shutdown: plain ``stop()`` everywhere, statuses UNASSIGNED, never deletion."""


@dataclass(frozen=True, slots=True)
class RaisedError:
    """``ConnectorContext.raise_error(exc)``."""

    runner: object
    error: BaseException = field(compare=False)


@dataclass(frozen=True, slots=True)
class Reconcile:
    """Distributed mode: the assignment changed; start what this worker now owns, stop what it lost."""

    done: asyncio.Future[None] = field(compare=False)


@dataclass(frozen=True, slots=True)
class AwaitStarted:
    """Done once the connector's latest (re)configuration has started it, or failed, or settled
    paused/stopped, and its task configs are written and applied (Kafka's standalone create/update)."""

    done: asyncio.Future[None] = field(compare=False)


@dataclass(frozen=True, slots=True)
class RestartDue:
    """``restart.policy=on-failure``: a FAILED unit's backoff has passed (task None: the connector)."""

    task: int | None
    token: int


@dataclass(frozen=True, slots=True)
class RestartReset:
    """``restart.reset.after.ms``: a unit has been RUNNING long enough for its attempts to reset."""

    task: int | None
    token: int


Message = (
    FromLog
    | Marker
    | Boot
    | RunCleanup
    | Reconfigure
    | Shutdown
    | RaisedError
    | Report
    | Reconcile
    | AwaitStarted
    | RestartDue
    | RestartReset
)

__all__ = [
    "AwaitStarted",
    "Boot",
    "FromLog",
    "Marker",
    "Message",
    "RaisedError",
    "Reconcile",
    "Reconfigure",
    "RestartDue",
    "RestartReset",
    "RunCleanup",
    "Shutdown",
]
