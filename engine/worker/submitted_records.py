"""Which source offsets may be committed: only those whose record, and every earlier record of the
same source partition, has been acknowledged (Connect's ``SubmittedRecords``).

Acks can arrive out of order across partitions (and, on Kafka, across topic partitions), so
committing the newest offset seen would skip records still in flight after a crash.

A ``poll()`` batch is submitted whole (``submit_batch``): per source partition its records form one
run, acknowledged together when the producer acknowledges the batch, so the bookkeeping costs a
few objects per batch, not one per record. A run with failed records keeps a flag per record, and
only its acknowledged prefix becomes committable.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Collection, Hashable, Mapping, Sequence
from typing import Any, Protocol


class _FromSource(Protocol):
    @property
    def source_partition(self) -> Mapping[str, Any]: ...

    @property
    def source_offset(self) -> Mapping[str, Any]: ...


class SubmittedRecord:
    __slots__ = ("acked", "offset", "partition_key")

    def __init__(self, partition_key: Hashable, offset: Mapping[str, Any]) -> None:
        self.partition_key = partition_key
        self.offset = offset
        self.acked = False

    def ack(self) -> None:
        self.acked = True

    def take(self) -> tuple[Mapping[str, Any] | None, bool]:
        """The newest committable offset here, and whether all of it is (so it can be forgotten)."""
        return (self.offset, True) if self.acked else (None, False)

    @property
    def unacked(self) -> int:
        return 0 if self.acked else 1


class _Run:
    """The records of one source partition within one batch, in submission order."""

    __slots__ = ("acked", "offsets", "taken")

    def __init__(self) -> None:
        self.offsets: list[Mapping[str, Any]] = []
        self.acked: bool | list[bool] = False  # True: every record; a list: per record (some failed)
        self.taken = 0  # records already committed off the front (positions shift by this)

    def take(self) -> tuple[Mapping[str, Any] | None, bool]:
        acked = self.acked
        if acked is True:
            return self.offsets[-1], True
        if acked is False:
            return None, False
        prefix = 0
        for flag in acked:
            if not flag:
                break
            prefix += 1
        if prefix == len(acked):
            return self.offsets[-1], True
        if prefix == 0:
            return None, False
        newest = self.offsets[prefix - 1]
        del self.offsets[:prefix], acked[:prefix]
        self.taken += prefix
        return newest, False

    @property
    def unacked(self) -> int:
        acked = self.acked
        if acked is True:
            return 0
        if acked is False:
            return len(self.offsets)
        return acked.count(False)


class SubmittedBatch:
    """One submitted batch: acknowledge it whole (``ack``), less the records that failed, which
    ``ack_one`` acknowledges later (a tolerated failure, once reported)."""

    __slots__ = ("_where", "runs")

    def __init__(self, runs: list[tuple[_Run, list[int]]]) -> None:
        self.runs = runs  # each run and the batch indices of its records
        self._where: dict[int, tuple[_Run, int]] | None = None

    def ack(self, failed: Collection[int] = ()) -> None:
        for run, indices in self.runs:
            run.acked = True if not failed else [i not in failed for i in indices]

    def ack_one(self, index: int) -> None:
        if self._where is None:
            self._where = {i: (run, k) for run, indices in self.runs for k, i in enumerate(indices)}
        run, k = self._where[index]
        k -= run.taken
        if k < 0:
            return  # committed already
        if isinstance(run.acked, list):
            run.acked[k] = True
        elif run.acked is False:
            run.acked = [j == k for j in range(len(run.offsets))]


class SubmittedRecords:
    """Per source partition, the records sent and not yet committed, in submission order."""

    def __init__(self) -> None:
        self._pending: dict[Hashable, deque[SubmittedRecord | _Run]] = {}
        self._partitions: dict[Hashable, Mapping[str, Any]] = {}

    def submit(self, partition: Mapping[str, Any], offset: Mapping[str, Any]) -> SubmittedRecord:
        key = self._key(partition)
        record = SubmittedRecord(key, offset)
        self._queue(key, partition).append(record)
        return record

    def submit_batch(self, records: Sequence[_FromSource]) -> SubmittedBatch:
        """Submit every record of a batch, in order; records sharing a partition share a run."""
        runs: dict[Hashable, tuple[_Run, list[int]]] = {}
        keys: dict[int, Hashable] = {}  # by the partition object's id: a batch usually shares one
        for i, record in enumerate(records):
            partition = record.source_partition
            key = keys.get(id(partition))
            if key is None:
                key = keys[id(partition)] = self._key(partition)
            entry = runs.get(key)
            if entry is None:
                entry = runs[key] = (_Run(), [])
                self._queue(key, partition).append(entry[0])
            entry[0].offsets.append(record.source_offset)
            entry[1].append(i)
        return SubmittedBatch(list(runs.values()))

    def _queue(self, key: Hashable, partition: Mapping[str, Any]) -> deque[SubmittedRecord | _Run]:
        queue = self._pending.get(key)
        if queue is None:
            queue = self._pending[key] = deque()
            self._partitions[key] = partition
        return queue

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
            while queue:
                offset, finished = queue[0].take()
                if offset is not None:
                    newest = offset
                if not finished:
                    break
                queue.popleft()
            if newest is not None:
                result.append((self._partitions[key], newest))
            if not queue:
                del self._pending[key]
                self._partitions.pop(key, None)
        return result

    @property
    def outstanding(self) -> int:
        return sum(entry.unacked for queue in self._pending.values() for entry in queue)
