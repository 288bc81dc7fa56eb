"""Which config log records compaction keeps: Kafka's log compaction, made exact for the snapshot.

Kafka keeps the last record of each key. Replaying only those would lose what ``ConfigSnapshot``
derives from order: a connector's incarnation (the offset of the record that created it), the
connector config its tasks were committed under (``applied``), the task configs of the last
applied commit, a later inconsistent commit, and task configs not committed yet. So this keeps:

- of each live connector: the record that created it (its offset is the incarnation, and it keeps
  the connectors' order), the last one carrying an ``incarnation`` field, the last one, and the
  config in force at each kept commit;
- its last applied commit with the task configs it applied, and the last inconsistent commit after
  that; the task configs read since the last commit;
- the last target state, pending cleanup and Connect record we ignore (session key...) of each key,
  unless it is a tombstone; a record we cannot read when it is the last of its key;
- the last record of the log, so that the end offset survives.

Nothing else (deleted connectors, restart requests, superseded records) is needed by a replay. Kept
records keep their offsets. The result is checked: if replaying it does not give the same snapshot
as the whole log, nothing is dropped and an error is logged, so a case these rules miss costs
space, never state.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import structlog

from engine.configlog.codec import decode
from engine.configlog.records import (
    ConfigRecord,
    ConnectorConfigRecord,
    ConnectorTombstone,
    IgnoredRecord,
    LoggerLevelRecord,
    PendingCleanupCleared,
    PendingCleanupRecord,
    SessionKeyRecord,
    TargetStateRecord,
    TargetStateTombstone,
    TaskCommitRecord,
    TaskConfigRecord,
    TaskCountRecord,
)
from engine.configlog.snapshot import ConfigSnapshot
from engine.errors import CorruptRecord
from engine.journal.file import Entry
from states import TargetState

log = structlog.get_logger(component="configlog")


@dataclass(slots=True)
class _Connector:
    """What one connector name needs kept, by index into the entries, as the log is read."""

    config: int | None = None  # the config record in force; None while the connector does not exist
    creator: int = 0
    named: int | None = None  # this incarnation's last record with an "incarnation" field
    target: TargetState = TargetState.STARTED
    deferred: dict[int, int] = field(default_factory=dict)  # task number -> its config since the last commit
    committed: tuple[int, ...] = ()  # last applied commit: the config in force, its task configs, the commit
    failed: tuple[int, ...] = ()  # an inconsistent commit after that: the config in force, the commit

    def apply(self, index: int, record: ConfigRecord) -> None:
        """``ConfigSnapshot.apply``, tracking which records made the state."""
        match record:
            case ConnectorConfigRecord(incarnation=incarnation):
                if self.config is None:
                    self.creator, self.named = index, None
                if incarnation is not None:
                    self.named = index
                self.config = index
            case ConnectorTombstone() if self.config is not None:
                self.config = self.named = None
                self.deferred, self.committed, self.failed = {}, (), ()
            case TargetStateRecord(state=state):
                self.target = state
            case TargetStateTombstone():
                self.target = TargetState.STARTED
            case TaskConfigRecord(task=task):
                self.deferred[task] = index
            case TaskCommitRecord(tasks=count):
                self._commit(index, count)

    def _commit(self, index: int, count: int) -> None:
        deferred, self.deferred = self.deferred, {}
        if self.config is None or (count and self.target is TargetState.STOPPED):
            return  # refused, as the snapshot refuses it
        if any(n not in deferred for n in range(count)):
            self.failed = (self.config, index)
        else:
            self.committed = (self.config, *(deferred[n] for n in range(count)), index)
            self.failed = ()

    def needed(self) -> set[int]:
        kept = set(self.deferred.values())
        if self.config is not None:
            kept |= {self.creator, self.config, *self.committed, *self.failed}
            if self.named is not None:
                kept.add(self.named)
        return kept


_LATEST_PER_KEY = (TargetStateRecord, TargetStateTombstone, PendingCleanupRecord, PendingCleanupCleared, IgnoredRecord,
                   LoggerLevelRecord, SessionKeyRecord, TaskCountRecord)
_NOT_PER_CONNECTOR = (IgnoredRecord, LoggerLevelRecord, SessionKeyRecord, TaskCountRecord)
_TOMBSTONES = (TargetStateTombstone, PendingCleanupCleared)


def _decoded(entry: Entry) -> ConfigRecord | None:
    try:
        return decode(entry[1], entry[2])
    except CorruptRecord:
        return None


def retained(entries: Sequence[Entry]) -> list[Entry]:
    """The entries a replay needs to reach the same ``ConfigSnapshot`` as from all of ``entries``."""
    records = [_decoded(entry) for entry in entries]
    keep = {len(entries) - 1} if entries else set()
    last: dict[str, int] = {}  # key -> its last entry, readable or not
    latest: dict[str, int] = {}  # key -> its last readable record, for the kinds kept per key
    connectors: dict[str, _Connector] = {}
    for index, record in enumerate(records):
        last[entries[index][1]] = index
        if isinstance(record, _LATEST_PER_KEY):
            latest[entries[index][1]] = index
        if record is not None and not isinstance(record, _NOT_PER_CONNECTOR):
            connectors.setdefault(record.connector, _Connector()).apply(index, record)
    keep.update(index for index in last.values() if records[index] is None)
    keep.update(index for index in latest.values() if not _tombstone(records[index]))
    for connector in connectors.values():
        keep |= connector.needed()
    kept = sorted(keep)
    full, compacted = _replay(entries, records, range(len(entries))), _replay(entries, records, kept)
    if full != compacted or list(full.connectors) != list(compacted.connectors):
        log.error("configlog.compaction_refused", reason="the kept records replay to another snapshot",
                  records=len(entries), kept=len(kept))
        return list(entries)
    return [entries[index] for index in kept]


def _tombstone(record: ConfigRecord | None) -> bool:
    return isinstance(record, _TOMBSTONES) or (isinstance(record, IgnoredRecord) and record.value is None)


def _replay(entries: Sequence[Entry], records: Sequence[ConfigRecord | None], indexes: Sequence[int]) -> ConfigSnapshot:
    snapshot = ConfigSnapshot()
    for index in indexes:
        if (record := records[index]) is not None:
            snapshot.apply(record, entries[index][0])
    return snapshot
