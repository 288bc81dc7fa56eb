"""Source offsets keyed ``["<connector>", {partition}]`` as on ``offset.storage.topic``, in memory or a
journal file (Kafka's ``MemoryOffsetBackingStore`` / ``FileOffsetBackingStore``)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from typing import Any

from engine.api.errors import DataException
from engine.journal.compaction import DEFAULT_FLOOR
from engine.storage.keyed_journal import KeyedJournal

_PRIMITIVES = (str, int, float, bool, type(None))


def offset_key(connector: str, partition: Mapping[str, Any]) -> str:
    """The serialized key; sorted so the same partition always maps to the same key."""
    return json.dumps([connector, dict(partition)], separators=(",", ":"), sort_keys=True)


def _check(kind: str, mapping: Mapping[str, Any]) -> None:
    for k, v in mapping.items():
        if not isinstance(k, str):
            raise DataException(f"{kind}s may only use String keys")
        if not isinstance(v, _PRIMITIVES):
            raise DataException(f"{kind}s may only contain primitive types as values, but field {k} contains {type(v).__name__}")


class MemoryOffsetStore:
    """Committed source offsets per connector; a None offset is a reset (tombstone)."""

    def __init__(self) -> None:
        self._offsets: dict[str, dict[str, Any]] = {}

    async def open(self) -> None:
        return None

    async def close(self) -> None:
        return None

    def put(self, connector: str, offsets: Mapping[str, Any]) -> None:
        """Write ``{serialized partition key or partition json: offset or None}`` for a connector."""
        records: list[tuple[str, bytes | None]] = []
        for partition_json, offset in offsets.items():
            partition = json.loads(partition_json)
            _check("Offset", partition)
            key = offset_key(connector, partition)
            if offset is None:
                self._offsets.pop(key, None)
                records.append((key, None))
            else:
                _check("Offset", offset)
                self._offsets[key] = dict(offset)
                records.append((key, json.dumps(offset).encode()))
        self._persist(records)

    def write(self, connector: str, offsets: Iterable[tuple[Mapping[str, Any], Mapping[str, Any] | None]]) -> None:
        self.put(connector, {json.dumps(dict(p), sort_keys=True): o for p, o in offsets})

    def get(self, connector: str, partition: Mapping[str, Any]) -> dict[str, Any] | None:
        found = self._offsets.get(offset_key(connector, partition))
        return None if found is None else dict(found)

    def partitions(self, connector: str) -> list[dict[str, Any]]:
        result = []
        for key in self._offsets:
            name, partition = json.loads(key)
            if name == connector:
                result.append(partition)
        return result

    def reset(self, connector: str) -> int:
        """Tombstone every partition of the connector; returns how many were removed."""
        partitions = self.partitions(connector)
        self.write(connector, ((p, None) for p in partitions))
        return len(partitions)

    def apply_committed(self, connector: str,
                        offsets: list[tuple[Mapping[str, Any], Mapping[str, Any]]]) -> None:
        """Offsets written elsewhere (an exactly-once task's transaction): kept, not written again."""
        for partition, offset in offsets:
            self._offsets[offset_key(connector, partition)] = dict(offset)

    async def flush(self) -> None:
        """Wait until written offsets are durable (the Kafka store's sends acknowledged)."""
        return

    def reader(self, connector: str) -> ConnectorOffsetReader:
        return ConnectorOffsetReader(self, connector)

    def _persist(self, records: list[tuple[str, bytes | None]]) -> None:
        return None


class ConnectorOffsetReader:
    """The ``OffsetStorageReader`` one connector and its tasks see."""

    def __init__(self, store: MemoryOffsetStore, connector: str) -> None:
        self._store = store
        self._connector = connector

    def offset(self, partition: Mapping[str, Any]) -> dict[str, Any] | None:
        return self._store.get(self._connector, partition)

    def offsets(self, partitions: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any] | None]:
        return {json.dumps(dict(p), sort_keys=True): self.offset(p) for p in partitions}


class FileOffsetStore(MemoryOffsetStore):
    """``offset.storage.file.filename``: offsets journaled to a file and reloaded on open; the file is
    compacted to one record per live partition (``engine.journal.compaction``)."""

    def __init__(self, path: str | os.PathLike[str], *, fsync: bool = True, floor: int = DEFAULT_FLOOR) -> None:
        super().__init__()
        self.file = KeyedJournal(path, self._live, fsync=fsync, floor=floor)

    async def open(self) -> None:
        await self.file.open(self._apply)

    async def close(self) -> None:
        await self.file.close()

    def _apply(self, key: str, value: bytes | None) -> None:
        if value is None:
            self._offsets.pop(key, None)
        else:
            self._offsets[key] = json.loads(value)

    def apply_committed(self, connector: str,
                        offsets: list[tuple[Mapping[str, Any], Mapping[str, Any]]]) -> None:
        """Journaled too: compaction writes what the store holds, so the file must hold it as well
        (unreachable in practice, exactly-once needs offsets on Kafka)."""
        super().apply_committed(connector, offsets)
        self._persist([(offset_key(connector, p), json.dumps(o).encode()) for p, o in offsets])

    def _live(self) -> list[tuple[str, bytes]]:
        return [(key, json.dumps(offset).encode()) for key, offset in self._offsets.items()]

    def _persist(self, records: list[tuple[str, bytes | None]]) -> None:
        if records:
            self.file.append(records)
