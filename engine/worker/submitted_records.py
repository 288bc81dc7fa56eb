"""Which source offsets may be committed: only those whose record, and every earlier record of the
same source partition, has been acknowledged (Connect's ``SubmittedRecords``).

Acks can arrive out of order across partitions (and, on Kafka, across topic partitions), so
committing the newest offset seen would skip records still in flight after a crash.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Hashable, Mapping
from typing import Any


class SubmittedRecord:
    __slots__ = ("acked", "offset", "partition_key")

    def __init__(self, partition_key: Hashable, offset: Mapping[str, Any]) -> None:
        self.partition_key = partition_key
        self.offset = offset
        self.acked = False

    def ack(self) -> None:
        self.acked = True


class SubmittedRecords:
    """Per source partition, the records sent and not yet committed, in submission order."""

    def __init__(self) -> None:
        self._pending: dict[Hashable, deque[SubmittedRecord]] = {}
        self._partitions: dict[Hashable, Mapping[str, Any]] = {}

    def submit(self, partition: Mapping[str, Any], offset: Mapping[str, Any]) -> SubmittedRecord:
        key = self._key(partition)
        record = SubmittedRecord(key, offset)
        queue = self._pending.get(key)
        if queue is None:
            queue = self._pending[key] = deque()
            self._partitions[key] = partition
        queue.append(record)
        return record

    def _key(self, partition: Mapping[str, Any]) -> Hashable:
        """Equal for equal partitions: their sorted items, or their JSON when a value is unhashable."""
        try:
            key: Hashable = tuple(sorted(partition.items()))
            hash(key)
        except TypeError:
            key = json.dumps(dict(partition), sort_keys=True, separators=(",", ":"), default=str)
        return key

    def committable(self) -> list[tuple[Mapping[str, Any], Mapping[str, Any]]]:
        """Take the newest offset of each partition's acknowledged prefix, forgetting that prefix."""
        result: list[tuple[Mapping[str, Any], Mapping[str, Any]]] = []
        for key, queue in list(self._pending.items()):
            newest: Mapping[str, Any] | None = None
            while queue and queue[0].acked:
                newest = queue.popleft().offset
            if newest is not None:
                result.append((self._partitions[key], newest))
            if not queue:
                del self._pending[key]
                self._partitions.pop(key, None)
        return result

    @property
    def outstanding(self) -> int:
        return sum(1 for queue in self._pending.values() for r in queue if not r.acked)
