"""Leader epochs for aiokafka consumers: what Kafka's own consumer does with them (KIP-320), which
aiokafka does not.

A partition's log can lose records it had acknowledged (an unclean leader election, a broker back
with a shorter disk) and be refilled past a consumer's position before that consumer fetches again;
a position check then sees nothing wrong and the lost range is skipped in silence. The leader epoch
of every record batch tells: a consumer remembers the epoch of the last record it read (and commits
it with the offset), and asks the partition's leader, with OffsetsForLeaderEpoch (API key 23), where
that epoch ends in its log now. An end below the position is the divergence point.

aiokafka parses neither the epoch of a record batch nor this API, so this module reads the epoch
from each batch header of a fetch response (``install``) and builds the request itself (version 3:
Kafka 4 removed 0 and 1, KIP-896; version 4 is the flexible encoding, not needed). One consumer's
bookkeeping, what it read and the checks against the leader, is an ``EpochTracker``.
"""

from __future__ import annotations

import contextlib
import struct
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

import structlog
from aiokafka.consumer import fetcher as aiokafka_fetcher
from aiokafka.errors import IllegalStateError, IncompatibleBrokerVersion, KafkaError, for_code
from aiokafka.protocol.api import Request, RequestStruct, Response
from aiokafka.protocol.types import Array, Int16, Int32, Int64, Schema, String
from aiokafka.structs import TopicPartition as KafkaTopicPartition

from engine.topics.base import TopicPartition, Truncation
from engine.topics.commit_metadata import CommitMetadata
from engine.topics.commit_metadata import decode as decode_metadata

log = structlog.get_logger(component="topics")

NO_EPOCH = -1
NO_OFFSET = -1

# A v2 record batch header: BaseOffset Int64, Length Int32, PartitionLeaderEpoch Int32, Magic Int8
_BATCH_HEAD = struct.Struct(">qiib")
_AFTER_LENGTH = 12


def batch_epochs(data: bytes | bytearray | memoryview) -> list[tuple[int, int]]:
    """``(base offset, leader epoch)`` of each record batch in a fetched record set, in order.

    Message formats before v2 carry no epoch (``NO_EPOCH``); a truncated last batch (a fetch
    cut at ``max_partition_fetch_bytes``) is read as far as its header goes."""
    spans: list[tuple[int, int]] = []
    view = memoryview(data)
    position, end = 0, len(view)
    while position + _BATCH_HEAD.size <= end:
        base_offset, length, epoch, magic = _BATCH_HEAD.unpack_from(view, position)
        spans.append((base_offset, epoch if magic >= 2 else NO_EPOCH))
        position += _AFTER_LENGTH + length
    return spans


# ---- reading the epoch of fetched records ------------------------------------------------------

_pending_spans: list[tuple[int, int]] = []  # from the MemoryRecords just built to its PartitionRecords


def _memory_records(data: Any) -> Any:
    global _pending_spans
    _pending_spans = batch_epochs(data) if data else []
    return _MemoryRecords(data)


class _EpochPartitionRecords(aiokafka_fetcher.PartitionRecords):  # type: ignore[misc]
    """aiokafka's ``PartitionRecords`` that also sets ``leader_epoch`` on each ``ConsumerRecord``.

    The fetcher builds this right after the ``MemoryRecords`` of the same response part, with no
    await between (``Fetcher._proc_fetch_request``), so the spans parsed there are this part's."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._spans = _pending_spans
        self._span = 0
        super().__init__(*args, **kwargs)

    def _consumer_record(self, tp: Any, record: Any) -> Any:
        consumer_record = super()._consumer_record(tp, record)
        spans, i = self._spans, self._span
        offset = record.offset
        while i + 1 < len(spans) and spans[i + 1][0] <= offset:
            i += 1
        self._span = i
        consumer_record.leader_epoch = spans[i][1] if spans and spans[i][0] <= offset else NO_EPOCH
        return consumer_record


_MemoryRecords = aiokafka_fetcher.MemoryRecords
_installed = False


def install() -> None:
    """Make aiokafka's fetcher record each batch's leader epoch on its records (idempotent)."""
    global _installed
    if _installed:
        return
    aiokafka_fetcher.MemoryRecords = _memory_records
    aiokafka_fetcher.PartitionRecords = _EpochPartitionRecords
    _installed = True


def record_epoch(record: Any) -> int:
    return int(getattr(record, "leader_epoch", NO_EPOCH))


# ---- the epoch in the committed offset's metadata ----------------------------------------------


def commit_metadata(epoch: int) -> str:
    """The offset commit's metadata carrying ``epoch`` alone (``engine.topics.commit_metadata``)."""
    return CommitMetadata(epoch).encode()


def epoch_of_metadata(metadata: str | None) -> int:
    return decode_metadata(metadata).epoch


# ---- OffsetsForLeaderEpoch ----------------------------------------------------------------------


class _OffsetForLeaderEpochResponse_v3(Response):  # type: ignore[misc]  # noqa: N801 - aiokafka's naming
    API_KEY = 23
    API_VERSION = 3
    SCHEMA = Schema(
        ("throttle_time_ms", Int32),
        (
            "topics",
            Array(
                ("topic", String("utf-8")),
                (
                    "partitions",
                    Array(
                        ("error_code", Int16),
                        ("partition", Int32),
                        ("leader_epoch", Int32),
                        ("end_offset", Int64),
                    ),
                ),
            ),
        ),
    )


class _OffsetForLeaderEpochRequest_v3(RequestStruct):  # type: ignore[misc]  # noqa: N801
    API_KEY = 23
    API_VERSION = 3
    RESPONSE_TYPE = _OffsetForLeaderEpochResponse_v3
    SCHEMA = Schema(
        ("replica_id", Int32),
        (
            "topics",
            Array(
                ("topic", String("utf-8")),
                (
                    "partitions",
                    Array(("partition", Int32), ("current_leader_epoch", Int32), ("leader_epoch", Int32)),
                ),
            ),
        ),
    )


class OffsetForLeaderEpochRequest(Request[_OffsetForLeaderEpochRequest_v3]):  # type: ignore[misc]
    """As a consumer sends it: replica id -1, current leader epoch unknown (-1)."""

    API_KEY = 23

    def __init__(self, epochs: Mapping[tuple[str, int], int]) -> None:
        self._epochs = dict(epochs)

    def build(
        self, request_struct_class: type[_OffsetForLeaderEpochRequest_v3]
    ) -> _OffsetForLeaderEpochRequest_v3:
        topics: dict[str, list[tuple[int, int, int]]] = {}
        for (topic, partition), epoch in self._epochs.items():
            topics.setdefault(topic, []).append((partition, NO_EPOCH, epoch))
        return request_struct_class(-1, list(topics.items()))


class EpochEnd(NamedTuple):
    """The leader's answer for one partition: the largest epoch it knows at or below the one asked
    for, and the offset where that epoch ends in its log (``NO_OFFSET`` if it knows none)."""

    epoch: int
    end_offset: int


async def epoch_ends(client: Any, epochs: Mapping[tuple[str, int], int]) -> dict[tuple[str, int], EpochEnd]:
    """Ask each partition's leader where ``epochs[tp]`` ends; ``client`` is an ``AIOKafkaClient``.

    Raises the broker's error (a ``KafkaError``) for a partition it refused, e.g. a leader that moved."""
    by_leader: dict[int, dict[tuple[str, int], int]] = {}
    for tp, epoch in epochs.items():
        leader = client.cluster.leader_for_partition(KafkaTopicPartition(*tp))
        if leader is None or leader < 0:
            await client.force_metadata_update()
            leader = client.cluster.leader_for_partition(KafkaTopicPartition(*tp))
        if leader is None or leader < 0:
            raise for_code(5)(f"no leader for {tp[0]}-{tp[1]}")  # LEADER_NOT_AVAILABLE
        by_leader.setdefault(leader, {})[tp] = epoch
    answers: dict[tuple[str, int], EpochEnd] = {}
    for leader, asked in by_leader.items():
        response = await client.send(leader, OffsetForLeaderEpochRequest(asked))
        answers.update(_read(response.topics))
    return answers


def _read(topics: Iterable[Any]) -> dict[tuple[str, int], EpochEnd]:
    answers = {}
    for topic, partitions in topics:
        for error_code, partition, epoch, end_offset in partitions:
            if error_code:
                raise for_code(error_code)(f"OffsetsForLeaderEpoch for {topic}-{partition}")
            answers[(topic, partition)] = EpochEnd(epoch, end_offset)
    return answers


# ---- what a consumer read, checked against the leader -------------------------------------------

_EPOCH_CHECK_ATTEMPTS = 20  # failed OffsetsForLeaderEpoch calls in a row before records go through unchecked
_EPOCH_SPANS_KEPT = 64


class EpochTracker:
    """One consumer's leader epochs: what it read, and the checks that find its log truncated under it.

    It remembers the leader epoch of the records read (``remember``), gives the epoch to commit with an
    offset (``epoch_at``), and asks the leader where an epoch ends when fetched records carry another
    epoch than the last ones read (``diverged``) or a partition is assigned (``validate_committed``,
    from the committed epoch). An end below the position is the divergence point: the consumer's
    position goes back there and a :class:`Truncation` is kept for ``truncations``."""

    def __init__(self, client: Any, group_id: str) -> None:
        """``client``: the group's ``AIOKafkaConsumer``, whose position a truncation moves."""
        self._client = client
        self._group_id = group_id
        self._spans: dict[
            TopicPartition, list[tuple[int, int]]
        ] = {}  # (first offset, epoch) of what was read
        self._failed_checks: dict[TopicPartition, int] = {}
        self._truncations: list[Truncation] = []
        self._reported: dict[TopicPartition, Truncation] = {}
        self.enabled = True  # off once the broker turns out not to know OffsetsForLeaderEpoch

    def truncations(self) -> list[Truncation]:
        """The truncations found since the last call."""
        found, self._truncations = self._truncations, []
        return found

    def remember(self, tp: TopicPartition, records: Sequence[Any]) -> None:
        spans = self._spans.setdefault(tp, [])
        for record in records:
            epoch = record_epoch(record)
            if not spans or spans[-1][1] != epoch:
                spans.append((record.offset, epoch))
        if len(spans) > _EPOCH_SPANS_KEPT:
            del spans[:-_EPOCH_SPANS_KEPT]

    def epoch_at(self, tp: TopicPartition, offset: int) -> int:
        """The leader epoch of the record at ``offset`` as read (``NO_EPOCH`` if not known)."""
        epoch = NO_EPOCH
        for first, span_epoch in self._spans.get(tp, ()):
            if first > offset:
                break
            epoch = span_epoch
        return epoch

    async def diverged(self, tp: TopicPartition, first: Any) -> bool:
        """Whether the log diverged below ``first`` (the first record fetched) from what was read before
        it; if so the position is back at the divergence point and the fetched records are dropped."""
        if not self.enabled:
            return False
        known = self.epoch_at(tp, first.offset - 1)
        epoch = record_epoch(first)
        if known < 0 or epoch < 0 or epoch == known:
            return False  # same epoch at the position: the logs agree up to it
        return await self.check(tp, known, first.offset, retry_at=first.offset)

    async def check(self, tp: TopicPartition, epoch: int, position: int, *, retry_at: int | None) -> bool:
        """Ask the leader where ``epoch`` ends; a truncation below ``position`` moves the position to it.

        True when the caller must drop what it fetched: a truncation, or a failed check to be retried
        from ``retry_at``."""
        if not self.enabled:
            return False
        try:
            answer = (await epoch_ends(self._client._client, {tp: epoch}))[tp]
        except (IncompatibleBrokerVersion, NotImplementedError) as exc:
            self.enabled = False
            log.info("topics.epoch_checks_unsupported", group=self._group_id, error=repr(exc))
            return False
        except (KafkaError, KeyError) as exc:
            failures = self._failed_checks[tp] = self._failed_checks.get(tp, 0) + 1
            if retry_at is None or failures >= _EPOCH_CHECK_ATTEMPTS:
                self._failed_checks.pop(tp, None)
                log.warning(
                    "topics.epoch_check_failed",
                    group=self._group_id,
                    partition=f"{tp.topic}-{tp.partition}",
                    epoch=epoch,
                    position=position,
                    error=repr(exc),
                    attempts=failures,
                )
                return False
            self.seek_quietly(tp, retry_at)
            # a leader that moved (NOT_LEADER_OR_FOLLOWER) is found again
            with contextlib.suppress(KafkaError):
                await self._client._client.force_metadata_update()
            return True
        self._failed_checks.pop(tp, None)
        if answer.end_offset == NO_OFFSET or answer.epoch == NO_EPOCH:
            # the leader knows no epoch at or below it: Kafka's consumer calls this an undetectable
            # truncation and applies auto.offset.reset; the records go on from the position here
            log.warning(
                "topics.truncation_undetectable",
                group=self._group_id,
                partition=f"{tp.topic}-{tp.partition}",
                epoch=epoch,
                position=position,
            )
            return False
        if answer.end_offset >= position:
            return False
        self.seek_quietly(tp, answer.end_offset)
        spans = self._spans.get(tp, [])
        self._spans[tp] = [s for s in spans if s[0] < answer.end_offset - 1]
        if answer.end_offset > 0:  # the record before the divergence point is of the epoch that ends there
            self._spans[tp].append((answer.end_offset - 1, answer.epoch))
        found = Truncation(tp, position, answer.end_offset)
        # records fetched from the old position before the seek took effect find the same truncation
        # again: one truncation is reported (and counted) once
        if self._reported.get(tp) != found:
            self._reported[tp] = found
            self._truncations.append(found)
        return True

    def seek_quietly(self, tp: TopicPartition, offset: int) -> None:
        """Move the position, unless the partition was revoked meanwhile (nothing to re-read then)."""
        with contextlib.suppress(IllegalStateError):  # revoked meanwhile: nothing to re-read
            self._client.seek(KafkaTopicPartition(*tp), offset)

    async def validate_committed(self, committed: Mapping[TopicPartition, tuple[int, int]]) -> None:
        """Check newly assigned partitions' committed offsets against their committed epochs
        (``committed``: each partition's offset and epoch, read once by the consumer)."""
        if not self.enabled:
            return
        for tp, (offset, epoch) in committed.items():
            if offset < 0 or epoch < 0:
                continue
            self._spans[tp] = [(offset - 1, epoch)]
            await self.check(tp, epoch, offset, retry_at=None)
