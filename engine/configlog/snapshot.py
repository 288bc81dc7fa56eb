"""What the config log says right now, and the change each new record makes (Kafka's
``KafkaConfigBackingStore`` and ``ClusterConfigState``).

Task configs are buffered per connector until their ``commit-<c>`` record, so a reader never
sees a partial set; a commit missing some of ``task-<c>-0..n-1`` marks the connector
inconsistent. ``apply`` returns the herder event a record causes, or None.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.configlog.records import (
    ConfigRecord,
    ConnectorConfigRecord,
    ConnectorTombstone,
    IgnoredRecord,
    LoggerLevelRecord,
    PendingCleanupCleared,
    PendingCleanupRecord,
    RestartRecord,
    SessionKeyRecord,
    TargetStateRecord,
    TargetStateTombstone,
    TaskCommitRecord,
    TaskConfigRecord,
    TaskCountRecord,
    TaskRestartRecord,
)
from states import TargetState


@dataclass(frozen=True, slots=True)
class ConnectorConfigured:
    connector: str
    config: dict[str, str]
    target: TargetState
    incarnation: str = ""


@dataclass(frozen=True, slots=True)
class ConnectorRemoved:
    connector: str


@dataclass(frozen=True, slots=True)
class TargetStateChanged:
    connector: str
    target: TargetState


@dataclass(frozen=True, slots=True)
class TasksCommitted:
    connector: str
    configs: tuple[dict[str, str], ...]


@dataclass(frozen=True, slots=True)
class RestartRequested:
    connector: str
    include_tasks: bool
    only_failed: bool


@dataclass(frozen=True, slots=True)
class TaskRestartRequested:
    connector: str
    task: int


LogEvent = (
    ConnectorConfigured
    | ConnectorRemoved
    | TargetStateChanged
    | TasksCommitted
    | RestartRequested
    | TaskRestartRequested
)


@dataclass
class ConfigSnapshot:
    """Connectors, target states, committed task configs and pending cleanups, as read so far."""

    connectors: dict[str, dict[str, str]] = field(default_factory=dict)
    targets: dict[str, TargetState] = field(default_factory=dict)
    tasks: dict[str, tuple[dict[str, str], ...]] = field(default_factory=dict)
    inconsistent: set[str] = field(default_factory=set)
    pending_cleanups: dict[str, PendingCleanupRecord] = field(default_factory=dict)
    # each live connector's incarnation: the offset of the record that created it
    incarnations: dict[str, str] = field(default_factory=dict)
    # connector config at the time its task configs were committed (Connect's KAFKA-9228 rule)
    applied: dict[str, dict[str, str]] = field(default_factory=dict)
    # the latest cluster-wide log level per namespace (KIP-976), for a worker that joins later
    logger_levels: dict[str, str] = field(default_factory=dict)
    # the leader's latest key for signing inter-worker requests (KIP-507)
    session_key: SessionKeyRecord | None = None
    # KIP-618: each connector's latest task count record, and the connectors whose task configs came after it
    task_count_records: dict[str, int] = field(default_factory=dict)
    pending_fencing: set[str] = field(default_factory=set)
    _deferred: dict[str, dict[int, dict[str, str]]] = field(default_factory=dict)

    def uncommitted(self) -> dict[str, int]:
        """Task configs read but not yet committed, per connector (a writer died mid-set, or still writing)."""
        return {c: len(configs) for c, configs in self._deferred.items() if configs}

    def target(self, connector: str) -> TargetState:
        return self.targets.get(connector, TargetState.STARTED)

    def apply(self, record: ConfigRecord, offset: int = 0) -> LogEvent | None:
        """Apply a record read at ``offset`` (the offset names the incarnation a creating record starts)."""
        match record:
            case ConnectorConfigRecord(c, props, incarnation):
                if incarnation is not None:
                    self.incarnations[c] = incarnation
                elif c not in self.connectors or c not in self.incarnations:
                    self.incarnations[c] = str(offset)
                self.connectors[c] = props
                return ConnectorConfigured(c, props, self.target(c), self.incarnations[c])
            case ConnectorTombstone(c):
                if self.connectors.pop(c, None) is None:
                    return None
                self.incarnations.pop(c, None)
                self.tasks.pop(c, None)
                self.applied.pop(c, None)
                self._deferred.pop(c, None)
                self.inconsistent.discard(c)
                self.task_count_records.pop(c, None)
                self.pending_fencing.discard(c)
                return ConnectorRemoved(c)
            case TargetStateRecord(c, state):
                self.targets[c] = state
                # initial_state is written before the connector record: nothing to notify yet
                return TargetStateChanged(c, state) if c in self.connectors else None
            case TargetStateTombstone(c):
                self.targets.pop(c, None)
                return None
            case TaskConfigRecord(c, n, props):
                self._deferred.setdefault(c, {})[n] = props
                return None
            case TaskCommitRecord(c, n):
                return self._commit(c, n)
            case RestartRecord(c, include_tasks, only_failed):
                return RestartRequested(c, include_tasks, only_failed) if c in self.connectors else None
            case TaskRestartRecord(c, n):
                return TaskRestartRequested(c, n) if c in self.connectors else None
            case PendingCleanupRecord(c):
                self.pending_cleanups[c] = record
                return None
            case PendingCleanupCleared(c):
                self.pending_cleanups.pop(c, None)
                return None
            case LoggerLevelRecord(namespace, level):
                self.logger_levels[namespace] = level
                return None
            case SessionKeyRecord():
                self.session_key = record
                return None
            case TaskCountRecord(c, n):
                self.task_count_records[c] = n
                self.pending_fencing.discard(c)
                return None
            case IgnoredRecord():
                return None

    def _commit(self, connector: str, count: int) -> LogEvent | None:
        deferred = self._deferred.pop(connector, {})
        if connector not in self.connectors:
            # a commit for a deleted (and compacted) connector is a removal, not a resurrection
            return None
        if count and self.target(connector) is TargetState.STOPPED:
            # a reconfiguration that raced with stop: Connect refuses "non-empty set of task configs
            # for stopped connector", so a STOPPED connector keeps zero tasks here too
            return None
        if any(n not in deferred for n in range(count)):
            self.inconsistent.add(connector)
            return None
        self.inconsistent.discard(connector)
        configs = tuple(deferred[n] for n in range(count))
        self.tasks[connector] = configs
        self.applied[connector] = dict(self.connectors[connector])
        self.pending_fencing.add(connector)
        return TasksCommitted(connector, configs)
