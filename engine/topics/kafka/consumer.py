"""The Kafka consumer role: one group member's reads, positions and commits, with its leader epochs
checked (``EpochTracker``, KIP-320) and the rebalance callbacks aiokafka awaits."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Collection, Mapping
from typing import Any

import structlog
from aiokafka import ConsumerRebalanceListener
from aiokafka import TopicPartition as KafkaTopicPartition
from aiokafka.consumer.fetcher import OffsetResetStrategy
from aiokafka.errors import (
    ConsumerStoppedError,
    GroupAuthorizationFailedError,
    IllegalStateError,
    IncompatibleBrokerVersion,
    KafkaError,
)

from engine.api.identity import TopicIdentity
from engine.config.kafka_clients.accounting import add_incoming, fetched_size
from engine.topics import commit_metadata, leader_epochs
from engine.topics.base import (
    IDENTITY_MISMATCH,
    NO_CALLBACK,
    ConsumedRecord,
    OffsetReset,
    RebalanceCallback,
    TopicPartition,
    Truncation,
)
from engine.topics.errors import NotAssigned, TopicsError
from engine.topics.kafka import identity as topic_identity
from engine.topics.kafka import out_of_range
from engine.topics.kafka.failures import refused, topics_error
from engine.topics.leader_epochs import EpochTracker

log = structlog.get_logger(component="topics")

leader_epochs.install()
out_of_range.install()


def _named_topics(exc: KafkaError) -> str:
    """The topic(s) aiokafka puts in a ``TopicAuthorizationFailedError`` (a name, or a set of names)."""
    named = exc.args[0] if exc.args else ""
    return (
        ",".join(sorted(map(str, named))) if isinstance(named, set | list | tuple | frozenset) else str(named)
    )


class RebalanceListener(ConsumerRebalanceListener):  # type: ignore[misc]
    """aiokafka awaits these from its coordinator task; like it, a failing callback is only logged."""

    def __init__(
        self,
        group_id: str,
        on_assign: RebalanceCallback,
        on_revoke: RebalanceCallback,
        validate: RebalanceCallback = NO_CALLBACK,
    ) -> None:
        self._group_id = group_id
        self._on_assign = on_assign
        self._on_revoke = on_revoke
        self._validate = validate  # the committed offsets' leader epochs, checked before on_assign sees them

    async def on_partitions_revoked(self, revoked: Collection[Any]) -> None:
        if revoked:  # aiokafka reports an empty revoke before the first join; memory never does
            await self._call(self._on_revoke, revoked, "on_revoke")

    async def on_partitions_assigned(self, assigned: Collection[Any]) -> None:
        if assigned:
            await self._call(self._validate, assigned, "validate")
        await self._call(self._on_assign, assigned, "on_assign")

    async def _call(self, callback: RebalanceCallback, tps: Collection[Any], which: str) -> None:
        try:
            await callback(frozenset(TopicPartition(tp.topic, tp.partition) for tp in tps))
        except Exception as exc:
            log.error(
                "topics.rebalance_callback_failed", group=self._group_id, callback=which, error=repr(exc)
            )


# How often a consumer asks for metadata again while a topic it subscribed to is missing from it
# (Java's consumer re-requests it after retry.backoff.ms, up to retry.backoff.max.ms: 1 s).
MISSING_TOPIC_REFRESH_S = 1.0


class KafkaConsumer:
    """An aiokafka consumer that detects a log truncated under it, as Kafka's consumer does (KIP-320).

    It remembers the leader epoch of the records it reads and commits the epoch of the last record
    below each committed offset in the commit's metadata. After an assignment (from the committed
    epoch) and whenever fetched records carry another leader epoch than the last ones read (what
    follows every leader change, and so every fetch error that moved the leader), it asks the
    leader where that epoch ends; an end below the position is the divergence point: the consumer
    seeks there, drops what it fetched past it, and reports a :class:`Truncation`. The bookkeeping is
    its :class:`EpochTracker` (``engine.topics.leader_epochs``).

    A fetch the broker answers OFFSET_OUT_OF_RANGE is reset by aiokafka per ``auto.offset.reset``;
    this consumer logs it and reports an :class:`OffsetReset` (``engine.topics.kafka.out_of_range``).
    Nothing else moves its position: not a high watermark that lags a leader change.

    Each commit also carries the identity of the partition's log (cluster id, topic id: KIP-516,
    ``engine.topics.commit_metadata``). On an assignment the consumer asks the cluster for the topics'
    identities (``engine.topics.kafka.identity``); a committed offset stored with another identity (the
    group's offsets moved from another cluster, a topic deleted and created again) is not applied: the
    partition is reset by ``auto.offset.reset`` and an :class:`OffsetReset` with both identities is
    reported. Until a new partition's committed offset is checked, nothing fetched for it is delivered."""

    def __init__(self, client: Any, group_id: str, forget: Any, *, prefix: str = "consumer.") -> None:
        self._client = client
        self._prefix = prefix  # where its settings come from, named when the broker refuses it
        self._group_id = group_id
        self._forget = forget
        self._closed = False
        self.epochs = EpochTracker(client, group_id)
        self._refreshed_at = 0.0
        self._resets: list[OffsetReset] = []
        self._identities: dict[str, TopicIdentity] = {}
        self._identities_known = True  # off once the broker turns out to give no topic ids
        # partitions whose committed offsets are being checked: aiokafka fetches from the committed
        # offset while the check runs (its rebalance listener is awaited after fetching may start),
        # so what it returns for them meanwhile is put back, as Java's consumer holds fetches in its
        # AWAIT_VALIDATION state
        self._validating: set[TopicPartition] = set()

    def _refresh_missing_topics(self) -> None:
        """A subscribed topic that did not exist when the group was joined (a sink started before its
        topic) appears only once metadata is fetched again: aiokafka waits ``metadata_max_age_ms``
        (5 minutes) for that, Java's consumer retries within a second; so ask again, as Java does."""
        now = asyncio.get_running_loop().time()
        if now - self._refreshed_at < MISSING_TOPIC_REFRESH_S:
            return
        cluster = self._client._client.cluster
        known = cluster.topics()
        if any(topic not in known for topic in self._client.subscription()):
            self._refreshed_at = now
            self._client._client.force_metadata_update()

    def _partition_states(self) -> list[tuple[Any, Any]]:
        assignment = self._client._subscription.subscription
        assignment = None if assignment is None else assignment.assignment
        return [] if assignment is None else [(tp, assignment.state_value(tp)) for tp in assignment.tps]

    def _collect_resets(self) -> None:
        for ktp, state in self._partition_states():
            found = out_of_range.resolved(state)
            if found is None:
                continue
            tp = TopicPartition(ktp.topic, ktp.partition)
            log.warning(
                "topics.offset_out_of_range",
                group=self._group_id,
                topic=tp.topic,
                partition=tp.partition,
                offset=found.position,
                auto_offset_reset=found.reset,
                reset_to=found.reset_to,
            )
            self._resets.append(OffsetReset(tp, found.position, found.reset, found.reset_to))

    async def identity(self, topic: str) -> TopicIdentity | None:
        if topic not in self._identities:
            await self._refresh_identities({topic})
        return self._identities.get(topic)

    async def validate_assigned(self, tps: frozenset[TopicPartition]) -> None:
        """Newly assigned partitions: the committed offsets, read once and checked, first against the
        identity they were committed with, then their leader epochs. The topics' identities are asked
        again (a topic may have been deleted and created since), before ``on_assign`` only when a
        committed offset names one; else at the first use (``identity``, a commit)."""
        for topic in {tp.topic for tp in tps}:
            self._identities.pop(topic, None)
        if self._client._coordinator is None:
            return
        self._validating |= tps
        try:
            await self._validate(tps)
        finally:
            self._validating -= tps

    async def _validate(self, tps: frozenset[TopicPartition]) -> None:
        ktps = [KafkaTopicPartition(*tp) for tp in tps]
        try:  # aiokafka retries this itself while the error is retriable
            committed = await self._client._coordinator.fetch_committed_offsets(ktps)
        except KafkaError as exc:
            log.warning(
                "topics.committed_offsets_unchecked",
                group=self._group_id,
                partitions=sorted(map(str, tps)),
                error=repr(exc),
                reason="the committed offsets could not be read",
            )
            return
        stored_with = {
            ktp.topic: decoded
            for ktp, meta in committed.items()
            if meta is not None and (decoded := commit_metadata.decode(getattr(meta, "metadata", None)))
        }
        named = {topic for topic, decoded in stored_with.items() if decoded.identity is not None}
        if named:
            await self._refresh_identities(named)
        epochs: dict[TopicPartition, tuple[int, int]] = {}
        for ktp, meta in committed.items():
            if meta is None or meta.offset < 0:
                continue
            tp = TopicPartition(ktp.topic, ktp.partition)
            stored = commit_metadata.decode(getattr(meta, "metadata", None))
            live = self._identities.get(tp.topic)
            if stored.identity is not None and live is not None and stored.identity != live:
                self._reset_mismatched(ktp, int(meta.offset), stored.identity, live)
                continue
            epochs[tp] = (int(meta.offset), stored.epoch)
        await self.epochs.validate_committed(epochs)

    async def _refresh_identities(self, topics: set[str]) -> None:
        if not self._identities_known or not topics:
            return
        try:
            self._identities.update(await topic_identity.identities(self._client._client, topics))
        except (IncompatibleBrokerVersion, NotImplementedError) as exc:
            self._identities_known = False
            log.info("topics.topic_ids_unsupported", group=self._group_id, error=repr(exc))
        except (KafkaError, OSError, ValueError) as exc:
            for topic in topics:  # never compare with an identity that may be stale
                self._identities.pop(topic, None)
            log.warning(
                "topics.topic_ids_unknown", group=self._group_id, topics=sorted(topics), error=repr(exc)
            )

    def _reset_mismatched(self, ktp: Any, position: int, stored: TopicIdentity, live: TopicIdentity) -> None:
        """Reset the partition by ``auto.offset.reset`` (the assignment is being set up: its committed
        offset is not fetched yet, and a reset request replaces it) and report why."""
        reset = str(self._client._auto_offset_reset).lower()
        tp = TopicPartition(ktp.topic, ktp.partition)
        log.info(  # the task's warning names it (task.offsets_identity_mismatch)
            "topics.offset_identity_mismatch",
            group=self._group_id,
            topic=tp.topic,
            partition=tp.partition,
            offset=position,
            stored_cluster_id=stored.cluster_id,
            stored_topic_id=stored.topic_id,
            cluster_id=live.cluster_id,
            topic_id=live.topic_id,
            auto_offset_reset=reset,
        )
        strategy = OffsetResetStrategy.from_str(reset)
        if strategy != OffsetResetStrategy.NONE:
            self._client._subscription.subscription.assignment.state_value(ktp).await_reset(strategy)
        self._resets.append(OffsetReset(tp, position, reset, -1, IDENTITY_MISMATCH, stored, live))

    def offset_resets(self) -> list[OffsetReset]:
        self._collect_resets()
        resets, self._resets = self._resets, []
        return resets

    async def getmany(self, timeout_ms: int = 0, max_records: int | None = None) -> list[ConsumedRecord]:
        self._refresh_missing_topics()
        self._collect_resets()
        try:
            batches = await self._client.getmany(timeout_ms=timeout_ms, max_records=max_records)
        except ConsumerStoppedError as exc:
            raise TopicsError("The consumer is closed") from exc
        except KafkaError as exc:
            resource = (
                self._group_id if isinstance(exc, GroupAuthorizationFailedError) else _named_topics(exc)
            )
            raise refused(
                exc,
                f"read for group '{self._group_id}'",
                self._client,
                operation="READ",
                resource=resource,
                prefix=self._prefix,
            ) from exc
        add_incoming(self._client, sum(fetched_size(records) for records in batches.values()))
        held = {ktp for ktp, records in batches.items() if records and ktp in self._validating}
        for ktp in held:  # put back before any await, so that the check's own seek comes after this
            self.epochs.seek_quietly(TopicPartition(ktp.topic, ktp.partition), batches[ktp][0].offset)
        consumed: list[ConsumedRecord] = []
        for ktp, records in batches.items():
            if not records or ktp in held:
                continue
            tp = TopicPartition(ktp.topic, ktp.partition)
            if await self.epochs.diverged(tp, records[0]):
                continue
            self.epochs.remember(tp, records)
            consumed.extend(
                ConsumedRecord(
                    r.topic,
                    r.partition,
                    r.offset,
                    r.key,
                    r.value,
                    tuple((h, None if v is None else bytes(v)) for h, v in r.headers or ()),
                    r.timestamp,
                )
                for r in records
            )
        return consumed

    def truncations(self) -> list[Truncation]:
        return self.epochs.truncations()

    def seek(self, tp: TopicPartition, offset: int) -> None:
        ktp = KafkaTopicPartition(*tp)
        try:
            self._client.seek(ktp, offset)
        except IllegalStateError as exc:
            raise NotAssigned(tp[0], tp[1]) from exc
        out_of_range.forget(self._client._subscription.subscription.assignment.state_value(ktp))

    async def position(self, tp: TopicPartition) -> int:
        try:
            return int(await self._client.position(KafkaTopicPartition(*tp)))
        except IllegalStateError as exc:
            raise NotAssigned(tp[0], tp[1]) from exc

    async def commit(self, offsets: Mapping[TopicPartition, int]) -> None:
        unknown = {tp[0] for tp in offsets if tp[0] not in self._identities}
        if unknown:  # once per assignment: each commit says which log its offsets count in
            await self._refresh_identities(unknown)
        try:
            await self._client.commit(
                {
                    KafkaTopicPartition(*tp): (
                        int(o),
                        commit_metadata.CommitMetadata(
                            self.epochs.epoch_at(tp, int(o) - 1), self._identities.get(tp.topic)
                        ).encode(),
                    )
                    for tp, o in offsets.items()
                }
            )
        except IllegalStateError as exc:
            tp = next(
                (tp for tp in offsets if KafkaTopicPartition(*tp) not in self._client.assignment()),
                next(iter(offsets)),
            )
            raise NotAssigned(tp[0], tp[1]) from exc
        except KafkaError as exc:
            raise topics_error(exc, f"commit offsets for group '{self._group_id}'") from exc

    async def committed(self, tp: TopicPartition) -> int | None:
        try:
            offset = await self._client.committed(KafkaTopicPartition(*tp))
        except KafkaError as exc:
            raise topics_error(exc, f"read committed offsets of group '{self._group_id}'") from exc
        return None if offset is None else int(offset)

    def pause(self, tps: Collection[TopicPartition]) -> None:
        assigned = self._client.assignment()
        for tp in tps:
            if KafkaTopicPartition(*tp) not in assigned:
                raise NotAssigned(tp[0], tp[1])
        self._client.pause(*(KafkaTopicPartition(*tp) for tp in tps))

    def resume(self, tps: Collection[TopicPartition]) -> None:
        assigned = self._client.assignment()
        self._client.resume(*(KafkaTopicPartition(*tp) for tp in tps if KafkaTopicPartition(*tp) in assigned))

    def assignment(self) -> frozenset[TopicPartition]:
        return frozenset(TopicPartition(tp.topic, tp.partition) for tp in self._client.assignment())

    async def close(self) -> None:
        """Leave the group without ``on_revoke`` (aiokafka's ``stop``); idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            with contextlib.suppress(KafkaError):
                await self._client.stop()
        finally:
            self._forget(self)
