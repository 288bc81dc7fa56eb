"""Typed forms of the config topic's records (Kafka's ``KafkaConfigBackingStore``), plus our own additions.

Connect's keys: ``connector-``, ``task-``, ``commit-``, ``target-state-``, ``restart-connector-``.
Ours, under prefixes Connect discards: ``restart-task-<c>-<n>`` (restart one task) and
``pending-cleanup-<c>`` (a deletion whose ``deleted()`` has not yet succeeded).

An *incarnation* is one creation of a connector name: its id is the log offset of the record that
created it, so every worker and every replay agrees on it. Config updates carry it in their value
(``"incarnation"``, a field Connect ignores), so it survives compaction of the creating record.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from states import TargetState


@dataclass(frozen=True, slots=True)
class ConnectorConfigRecord:
    """``connector-<c>``; ``incarnation`` is None on the record that creates the connector."""

    connector: str
    properties: dict[str, str]
    incarnation: str | None = None


@dataclass(frozen=True, slots=True)
class ConnectorTombstone:
    """``connector-<c>`` = null: the connector is deleted."""

    connector: str


@dataclass(frozen=True, slots=True)
class TaskConfigRecord:
    """Buffered until the matching commit record arrives."""

    connector: str
    task: int
    properties: dict[str, str]


@dataclass(frozen=True, slots=True)
class TaskCommitRecord:
    """``commit-<c>``: applies the buffered task configs ``0..tasks-1`` atomically."""

    connector: str
    tasks: int


@dataclass(frozen=True, slots=True)
class TargetStateRecord:
    connector: str
    state: TargetState


@dataclass(frozen=True, slots=True)
class TargetStateTombstone:
    connector: str


@dataclass(frozen=True, slots=True)
class RestartRecord:
    """KIP-745 ``restart-connector-<c>``; both flags false means a plain connector restart."""

    connector: str
    include_tasks: bool = False
    only_failed: bool = False


@dataclass(frozen=True, slots=True)
class TaskRestartRecord:
    connector: str
    task: int


@dataclass(frozen=True, slots=True)
class PendingCleanupRecord:
    """Written before a connector's tombstone; cleared once its ``deleted()`` succeeded (or gave up).

    While it stands, the name cannot be created again: an old incarnation's ``deleted()`` never
    runs beside a new incarnation's ``start()``.
    """

    connector: str
    properties: dict[str, str]
    tasks: int = 0
    incarnation: str | None = None


@dataclass(frozen=True, slots=True)
class PendingCleanupCleared:
    connector: str


@dataclass(frozen=True, slots=True)
class LoggerLevelRecord:
    """``logger-cluster-<namespace>`` = ``{"level": ...}``: a cluster-wide log level (KIP-976)."""

    namespace: str
    level: str


@dataclass(frozen=True, slots=True)
class SessionKeyRecord:
    """``session-key`` = ``{"key": base64, "algorithm": ..., "creation-timestamp": ms}``: the leader's key
    for signing inter-worker requests (KIP-507)."""

    key: bytes
    algorithm: str
    creation_timestamp: int


@dataclass(frozen=True, slots=True)
class TaskCountRecord:
    """``tasks-fencing-<c>`` = ``{"task-count": n}``: the leader fenced the producers of the connector's
    earlier task generations (KIP-618); task configs written after it need another fencing round."""

    connector: str
    task_count: int


@dataclass(frozen=True, slots=True)
class IgnoredRecord:
    """A valid Connect record this engine does not act on."""

    key: str
    value: dict[str, object] | None = field(default=None)


ConfigRecord = (
    ConnectorConfigRecord
    | ConnectorTombstone
    | TaskConfigRecord
    | TaskCommitRecord
    | TargetStateRecord
    | TargetStateTombstone
    | RestartRecord
    | TaskRestartRecord
    | PendingCleanupRecord
    | PendingCleanupCleared
    | LoggerLevelRecord
    | SessionKeyRecord
    | TaskCountRecord
    | IgnoredRecord
)
