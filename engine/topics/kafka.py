"""Topics on a Kafka-protocol broker through aiokafka.

Lessons from ``engine.configlog.kafka`` that apply here: ``acks=all`` without idempotence
(tansu rejects InitProducerId); never trust ListOffsets on tansu (this layer exposes no end
offsets); tansu holds a waiting fetch until ``fetch_max_wait_ms`` runs out even when records
arrive, so that bound is also the worst added latency on it; it rebalances in about half a
session timeout, so tests pass a short ``session_timeout_ms``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from functools import partial
from typing import Any

import structlog
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRebalanceListener
from aiokafka import TopicPartition as KafkaTopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.coordinator.assignors.range import RangePartitionAssignor
from aiokafka.errors import (
    ConsumerStoppedError,
    GroupAuthorizationFailedError,
    GroupIdNotFound,
    IllegalStateError,
    IncompatibleBrokerVersion,
    KafkaError,
    TopicAlreadyExistsError,
    UnknownTopicOrPartitionError,
    for_code,
)
from aiokafka.protocol.admin import DeleteGroupsRequest

from engine.config.kafka_clients.accounting import add_incoming, add_outgoing, fetched_size, record_size
from engine.config.kafka_clients.denials import denial, is_denial
from engine.config.kafka_clients.starting import start_client
from engine.errors import EngineNotRunning
from engine.storage.kafka_topic_admin import describe
from engine.topics import leader_epochs
from engine.topics.base import (
    NO_CALLBACK,
    BatchAck,
    ConsumedRecord,
    Headers,
    OutgoingRecord,
    RebalanceCallback,
    RecordMetadata,
    TopicPartition,
    Truncation,
    require_key_or_value,
)
from engine.topics.errors import GroupNotEmpty, NotAssigned, TopicsError, UnknownTopic
from engine.topics.leader_epochs import (
    NO_EPOCH,
    NO_OFFSET,
    commit_metadata,
    epoch_ends,
    epoch_of_metadata,
    record_epoch,
)
from engine.topics.partitioner import Partitioner

log = structlog.get_logger(component="topics")

leader_epochs.install()


_INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})


def _error(exc: KafkaError, doing: str) -> TopicsError:
    return TopicsError(f"Could not {doing}: {describe(exc)}", retriable=bool(getattr(exc, "retriable", False)))


def _refused(exc: KafkaError, doing: str, client: Any, *, operation: str, resource: str, prefix: str) -> TopicsError:
    """``_error``, naming the principal, the resource and the setting when the broker's ACLs refused it."""
    if not is_denial(exc):
        return _error(exc, doing)
    return TopicsError(f"Could not {doing}: {denial(exc, client, operation=operation, resource=resource, prefix=prefix)}")


def _named_topics(exc: KafkaError) -> str:
    """The topic(s) aiokafka puts in a ``TopicAuthorizationFailedError`` (a name, or a set of names)."""
    named = exc.args[0] if exc.args else ""
    return ",".join(sorted(map(str, named))) if isinstance(named, set | list | tuple | frozenset) else str(named)


class KafkaTopics:
    """One admin client and one ``AIOKafkaProducer`` shared by every ``producer()``; one
    ``AIOKafkaConsumer`` per ``consumer()``.

    ``open`` starts only the admin client (the top-level and ``admin.*`` settings, as the worker's);
    the shared producer, made with connectors' ``producer.*`` settings, starts on first use
    (``open_producer``), so a producer that cannot connect fails the task that needs it, not the
    worker, as in Connect, where each task's producer is its own."""

    def __init__(self, bootstrap_servers: str, *, client_id: str = "connect-engine",
                 replication_factor: int = 1, session_timeout_ms: int = 10_000,
                 fetch_max_wait_ms: int = 100, producer_config: Mapping[str, Any] | None = None,
                 consumer_config: Mapping[str, Any] | None = None,
                 admin_config: Mapping[str, Any] | None = None) -> None:
        """``*_config``: aiokafka arguments for connectors' clients (``engine.config.kafka_clients``),
        applied over this class's defaults, as Connect applies ``producer.*`` over its own."""
        self.bootstrap_servers = bootstrap_servers
        self.client_id = client_id
        self.replication_factor = replication_factor
        self.session_timeout_ms = session_timeout_ms
        self.fetch_max_wait_ms = fetch_max_wait_ms
        self._producer_config = dict(producer_config or {})
        self._consumer_config = dict(consumer_config or {})
        self._admin_config = dict(admin_config or {})
        self._dedicated: dict[KafkaProducer, Any] = {}  # producers of their own (connector overrides)
        self._stopping: set[asyncio.Task[None]] = set()
        self._admin: Any = None
        self._producer: Any = None  # the shared aiokafka producer, once started
        self._producer_lock = asyncio.Lock()
        self._producers: set[KafkaProducer] = set()
        self._consumers: set[KafkaConsumer] = set()

    async def open(self) -> None:
        if self._admin is not None:
            return
        admin = AIOKafkaAdminClient(**{"bootstrap_servers": self.bootstrap_servers,
                                       "client_id": f"{self.client_id}-admin", **self._admin_config})
        try:
            await start_client(admin)
        except KafkaError as exc:
            await admin.close()
            raise _error(exc, f"connect to {self.bootstrap_servers}") from exc
        self._admin = admin

    async def open_producer(self) -> None:
        """Start the shared producer unless it runs; its failure is the caller's (a task's)."""
        await self._shared_client()

    async def _shared_client(self) -> Any:
        self._require(self._admin)
        async with self._producer_lock:
            if self._producer is None:
                producer = self._new_producer(self._producer_config)
                try:
                    await start_client(producer)
                except KafkaError as exc:
                    with contextlib.suppress(KafkaError):
                        await producer.stop()
                    raise _error(exc, f"connect to {self.bootstrap_servers}") from exc
                self._producer = producer
            return self._producer

    def _new_producer(self, config: Mapping[str, Any]) -> Any:
        return AIOKafkaProducer(**{"bootstrap_servers": self.bootstrap_servers, "client_id": self.client_id,
                                   "acks": "all", "enable_idempotence": False, **config})

    async def producer_with(self, client_config: Mapping[str, Any]) -> KafkaProducer:
        """A producer with its own aiokafka client (a connector's ``producer.override.*``), stopped when
        the returned producer is closed."""
        self._require(self._admin)
        client = self._new_producer(client_config)
        try:
            await start_client(client)
        except KafkaError as exc:
            with contextlib.suppress(KafkaError):
                await client.stop()
            raise _error(exc, f"connect to {client_config.get('bootstrap_servers', self.bootstrap_servers)}") from exc
        wrapper = KafkaProducer(client, self._forget_dedicated, prefix="producer.override.")
        self._dedicated[wrapper] = client
        return wrapper

    def _forget_dedicated(self, wrapper: KafkaProducer) -> None:
        client = self._dedicated.pop(wrapper, None)
        if client is not None:
            task = asyncio.get_running_loop().create_task(_stop_quietly(client), name="topics-producer-stop")
            self._stopping.add(task)
            task.add_done_callback(self._stopping.discard)

    async def close(self) -> None:
        """Flush and close producers, leave groups, stop the clients; idempotent."""
        for consumer in list(self._consumers):
            await consumer.close()
        for wrapper in [*self._producers, *self._dedicated]:
            await wrapper.close()
        if self._stopping:
            await asyncio.wait(list(self._stopping))
        admin, producer = self._admin, self._producer
        self._admin = self._producer = None
        if producer is not None:
            with contextlib.suppress(KafkaError):
                await producer.stop()
        if admin is not None:
            await admin.close()

    def _require(self, client: Any) -> Any:
        if client is None:
            raise EngineNotRunning("The topics are not open")
        return client

    async def create_topic(self, name: str, partitions: int = 1, configs: Mapping[str, str] | None = None,
                           client_config: Mapping[str, Any] | None = None, *,
                           replication_factor: int | None = None) -> bool:
        """``client_config``: a connector's admin settings (``admin.override.*``), used by an admin client
        made for this call; ``replication_factor``: None for this instance's own, -1 for the broker's."""
        admin = self._require(self._admin)
        replicas = self.replication_factor if replication_factor is None else replication_factor
        if client_config is None:
            return await self._create_topic(admin, name, partitions, configs, replicas)
        own = AIOKafkaAdminClient(**{"bootstrap_servers": self.bootstrap_servers,
                                     "client_id": f"{self.client_id}-admin", **client_config})
        try:
            await start_client(own)
            return await self._create_topic(own, name, partitions, configs, replicas)
        except KafkaError as exc:
            raise _error(exc, f"create topic '{name}'") from exc
        finally:
            await own.close()

    async def _create_topic(self, admin: Any, name: str, partitions: int, configs: Mapping[str, str] | None,
                            replicas: int) -> bool:
        # -1 means "broker default"; aiokafka accepts it only alongside an (empty) assignment
        assignments: dict[int, list[int]] | None = {} if replicas == -1 else None
        new = NewTopic(name, partitions, replicas, replica_assignments=assignments,
                       topic_configs=dict(configs or {}))
        try:
            response = await admin.create_topics([new])
        except KafkaError as exc:
            raise _error(exc, f"create topic '{name}'") from exc
        for _, code, *rest in response.topic_errors:
            if code == 0:
                log.info("topics.topic_created", topic=name, partitions=partitions, replication_factor=replicas)
                return True
            error = for_code(code)
            if error is TopicAlreadyExistsError:
                return False
            message = rest[0] if rest and rest[0] else error.__name__
            raise TopicsError(f"Could not create topic '{name}': {message}", retriable=bool(error.retriable))
        raise TopicsError(f"Could not create topic '{name}': the broker did not answer for it", retriable=True)

    async def list_topics(self) -> list[str]:
        admin = self._require(self._admin)
        try:
            names = await admin.list_topics()
        except KafkaError as exc:
            raise _error(exc, "list topics") from exc
        return sorted(n for n in names if n not in _INTERNAL_TOPICS)

    async def partitions(self, name: str) -> int:
        admin = self._require(self._admin)
        try:
            (described,) = await admin.describe_topics([name])
        except KafkaError as exc:
            raise _error(exc, f"describe topic '{name}'") from exc
        error = for_code(described["error_code"])
        if error is UnknownTopicOrPartitionError:
            raise UnknownTopic(name)
        if described["error_code"] != 0:
            raise TopicsError(f"Could not describe topic '{name}': {error.__name__}", retriable=bool(error.retriable))
        return len(described["partitions"])

    def producer(self) -> KafkaProducer:
        self._require(self._admin)
        wrapper = KafkaProducer(self._producer, self._producers.discard, start=self._shared_client)
        self._producers.add(wrapper)
        return wrapper

    async def consumer(self, group_id: str, topics: Collection[str], on_assign: RebalanceCallback = NO_CALLBACK,
                       on_revoke: RebalanceCallback = NO_CALLBACK,
                       client_config: Mapping[str, Any] | None = None) -> KafkaConsumer:
        """``client_config`` (a connector's worker-level and override settings) replaces ``consumer_config``."""
        self._require(self._admin)
        chosen = self._consumer_config if client_config is None else client_config
        session = int(chosen.get("session_timeout_ms", self.session_timeout_ms))
        client = AIOKafkaConsumer(**{
            "bootstrap_servers": self.bootstrap_servers, "client_id": f"{self.client_id}-{group_id}",
            "enable_auto_commit": False, "auto_offset_reset": "earliest", "session_timeout_ms": session,
            "heartbeat_interval_ms": max(session // 3, 100), "fetch_max_wait_ms": self.fetch_max_wait_ms,
            # Kafka's default partition.assignment.strategy starts with RangeAssignor (aiokafka's default is
            # round robin): sharing "range" lets a sink's group take over from Java consumers still in it
            "partition_assignment_strategy": (RangePartitionAssignor,),
            **chosen, "group_id": group_id})
        consumer = KafkaConsumer(client, group_id, self._consumers.discard,
                                 prefix="consumer." if client_config is None else "consumer.override.")
        try:
            await start_client(client)
            client.subscribe(topics=list(topics),
                             listener=_Listener(group_id, on_assign, on_revoke, consumer.validate_assigned))
        except KafkaError as exc:
            with contextlib.suppress(KafkaError):
                await client.stop()
            raise _error(exc, f"join group '{group_id}'") from exc
        self._consumers.add(consumer)
        return consumer

    # ---- group administration (KIP-875 sink offsets) ----------------------------------------

    async def group_offsets(self, group_id: str) -> dict[TopicPartition, int]:
        admin = self._require(self._admin)
        try:
            listed = await admin.list_consumer_group_offsets(group_id)
        except KafkaError as exc:
            raise _error(exc, f"list the offsets of group '{group_id}'") from exc
        return {TopicPartition(tp.topic, tp.partition): meta.offset for tp, meta in listed.items() if meta.offset >= 0}

    async def alter_group_offsets(self, group_id: str, offsets: Mapping[TopicPartition, int | None]) -> None:
        """aiokafka's admin client has no ``alterConsumerGroupOffsets``/``deleteConsumerGroupOffsets``: the
        offsets are committed by a consumer of the (empty) group, the fallback Kafka documents; a removed
        offset is committed as the partition's log start, which a consumer resumes from just as it
        would with no offset under ``auto.offset.reset=earliest``."""
        await self._require_empty(group_id)
        tps = [KafkaTopicPartition(tp[0], tp[1]) for tp in offsets]
        client = AIOKafkaConsumer(**{"bootstrap_servers": self.bootstrap_servers,
                                     "client_id": f"{self.client_id}-offsets-admin", **self._admin_config,
                                     "group_id": group_id, "enable_auto_commit": False})
        try:
            await start_client(client)
            client.assign(tps)
            earliest = await client.beginning_offsets([tp for tp, o in zip(tps, offsets.values(), strict=True)
                                                       if o is None])
            await client.commit({tp: (earliest[tp] if offset is None else offset)
                                 for tp, offset in zip(tps, offsets.values(), strict=True)})
        except KafkaError as exc:
            raise _error(exc, f"alter the offsets of group '{group_id}'") from exc
        finally:
            with contextlib.suppress(KafkaError):
                await client.stop()

    async def delete_group(self, group_id: str) -> None:
        """Kafka's ``Admin.deleteConsumerGroups``, as Connect resets a sink's offsets; a group that never
        existed is already gone."""
        await self._require_empty(group_id)
        admin = self._require(self._admin)
        try:
            coordinator = await admin.find_coordinator(group_id)
            response = await admin._send_request(DeleteGroupsRequest([group_id]), coordinator)
        except KafkaError as exc:
            raise _error(exc, f"delete group '{group_id}'") from exc
        for _, code in response.results:
            error = for_code(code)
            if code and error is not GroupIdNotFound:
                raise TopicsError(f"Could not delete group '{group_id}': {error.__name__}",
                                  retriable=bool(error.retriable))

    async def _require_empty(self, group_id: str) -> None:
        admin = self._require(self._admin)
        try:
            (described,) = await admin.describe_consumer_groups([group_id])
        except KafkaError as exc:
            raise _error(exc, f"describe group '{group_id}'") from exc
        if _has_members(described):
            raise GroupNotEmpty(group_id)


async def _stop_quietly(client: Any) -> None:
    with contextlib.suppress(KafkaError):
        await client.stop()


def _has_members(described: Any) -> bool:
    """Whether a DescribeGroups answer (aiokafka's raw response) shows a live group: its state
    (third field in every version) is neither ``Empty`` nor ``Dead`` (a group never seen)."""
    return any(group[2] not in ("Empty", "Dead", "") for group in getattr(described, "groups", ()))


class KafkaProducer:
    """``send`` and ``send_batch`` queue; one pump hands records to aiokafka in call order and settles
    each future on ack.

    The pump picks the partition itself (``Partitioner``), so null keys round-robin as in memory.
    A batch goes to aiokafka as whole record batches (``create_batch``/``send_batch``: one future per
    partition batch, not per record); a record too large to share a batch goes through ``send``,
    which checks it against ``max_request_size`` as aiokafka does.
    """

    def __init__(self, producer: Any, forget: Any, *, start: Callable[[], Awaitable[Any]] | None = None,
                 prefix: str = "producer.") -> None:
        """``producer`` None: ``start`` gives the (shared) aiokafka producer when the first record comes.
        ``prefix``: where this producer's settings come from, named when the broker refuses it."""
        self._producer = producer
        self._start = start
        self._prefix = prefix
        self._forget = forget
        self._partitioner = Partitioner()
        self._queue: asyncio.Queue[_Queued] = asyncio.Queue()
        self._pending: set[asyncio.Future[Any]] = set()
        self._pump: asyncio.Task[None] | None = None
        self._partition_ids: dict[str, list[int]] = {}
        self._closed = False
        self._alone_bytes = 8192
        if producer is not None:
            self._started(producer)

    def _started(self, producer: Any) -> None:
        self._producer = producer
        # a record at least this large is sent alone (aiokafka's max_batch_size, default 16 KiB)
        self._alone_bytes = int(getattr(getattr(producer, "_message_accumulator", None), "_batch_size", 16384)) // 2

    def _failed(self, exc: KafkaError, topic: str) -> TopicsError:
        return _refused(exc, f"send to topic '{topic}'", self._producer, operation="WRITE", resource=topic,
                        prefix=self._prefix)

    def _enqueue(self, item: _Queued, future: asyncio.Future[Any]) -> None:
        self._pending.add(future)
        future.add_done_callback(self._pending.discard)
        self._queue.put_nowait(item)
        if self._pump is None:
            self._pump = asyncio.create_task(self._run(), name="topics-producer")

    def send(self, topic: str, key: bytes | None, value: bytes | None, headers: Headers = (),
             partition: int | None = None) -> Awaitable[RecordMetadata]:
        if self._closed:
            raise EngineNotRunning("The producer is closed")
        future: asyncio.Future[RecordMetadata] = asyncio.get_running_loop().create_future()
        try:
            require_key_or_value(topic, key, value)
        except TopicsError as exc:
            future.set_exception(exc)
            return future
        raw_headers = [(h, None if v is None else bytes(v)) for h, v in headers]
        self._enqueue((topic, key, value, raw_headers, partition, future), future)
        return future

    def send_batch(self, records: Sequence[OutgoingRecord]) -> Awaitable[BatchAck]:
        if self._closed:
            raise EngineNotRunning("The producer is closed")
        future: asyncio.Future[BatchAck] = asyncio.get_running_loop().create_future()
        self._enqueue((list(records), future), future)
        return future

    async def _run(self) -> None:
        queue = self._queue
        if self._producer is None:
            assert self._start is not None
            try:
                self._started(await self._start())
            except TopicsError as exc:  # every record queued so far fails; the next send tries again
                self._pump = None
                while not queue.empty():
                    item = queue.get_nowait()
                    if len(item) == 2:
                        ack = BatchAck(len(item[0]))
                        for i in range(len(item[0])):
                            ack.fail(i, exc)
                        if not item[1].done():
                            item[1].set_result(ack)
                    else:
                        _settle(item[5], exc=exc)
                return
        while True:
            item = await queue.get()
            await self._dispatch(item)
            while not queue.empty():  # drain what queued meanwhile without a wake-up per record
                await self._dispatch(queue.get_nowait())

    async def _dispatch(self, item: _Queued) -> None:
        if len(item) == 2:
            await self._send_batch(*item)
        else:
            await self._send(*item)

    async def _partition(self, topic: str, key: bytes | None) -> int:
        ids = self._partition_ids.get(topic)
        if ids is None:  # remembered: a topic's partition count changes rarely, lookups cost
            ids = self._partition_ids[topic] = sorted(await self._producer.partitions_for(topic))
        return ids[self._partitioner.partition(key, len(ids))]

    async def _send(self, topic: str, key: bytes | None, value: bytes | None,
                    headers: list[tuple[str, bytes | None]], partition: int | None,
                    future: asyncio.Future[RecordMetadata]) -> None:
        try:
            if partition is None:
                partition = await self._partition(topic, key)
            ack = await self._producer.send(topic, value, key=key, partition=partition, headers=headers or None)
            add_outgoing(self._producer, record_size(key, value, headers))
        except KafkaError as exc:
            self._partition_ids.pop(topic, None)
            _settle(future, exc=self._failed(exc, topic))
            return
        except Exception as exc:  # one bad record fails its own send, never the pump
            _settle(future, exc=TopicsError(f"Could not send to topic '{topic}': {describe(exc)}"))
            return
        ack.add_done_callback(partial(_on_ack, future, topic=topic, failed=self._failed))

    async def _send_batch(self, records: list[OutgoingRecord], future: asyncio.Future[BatchAck]) -> None:
        """One aiokafka record batch per partition (several when one fills up), in record order."""
        ack = _BatchSettler(BatchAck(len(records)), future, self._failed)
        open_batches: dict[tuple[str, int], _PartitionBatch] = {}
        producer = self._producer
        for i, (topic, key, value, headers, partition) in enumerate(records):
            try:
                require_key_or_value(topic, key, value)
                if partition is None:
                    partition = await self._partition(topic, key)
                raw_headers = [(h, None if v is None else bytes(v)) for h, v in headers] if headers else []
                size = len(key or b"") + len(value or b"") + sum(len(h) + len(v or b"") for h, v in raw_headers)
                if size >= self._alone_bytes:
                    before = open_batches.pop((topic, partition), None)
                    if before is not None:  # what came before it goes first
                        await self._submit(before, ack)
                    alone = await producer.send(topic, value, key=key, partition=partition, headers=raw_headers or None)
                    add_outgoing(producer, size)
                    ack.expect(_PartitionBatch(topic, partition, None), [i], alone)
                    continue
                batch = open_batches.get((topic, partition))
                if batch is None:
                    batch = open_batches[(topic, partition)] = _PartitionBatch(topic, partition, producer.create_batch())
                if batch.append(i, key, value, raw_headers) is None:  # full: send it, start the next one
                    await self._submit(batch, ack)
                    batch = open_batches[(topic, partition)] = _PartitionBatch(topic, partition, producer.create_batch())
                    if batch.append(i, key, value, raw_headers) is None:  # never seen: under half a batch
                        ack.fail([i], TopicsError(f"The record is too large for a batch of topic '{topic}'"))
            except KafkaError as exc:
                self._partition_ids.pop(topic, None)
                ack.fail([i], self._failed(exc, topic))
            except TopicsError as exc:
                ack.fail([i], exc)
            except Exception as exc:  # one bad record fails alone, never the pump
                ack.fail([i], TopicsError(f"Could not send to topic '{topic}': {describe(exc)}"))
        for batch in open_batches.values():
            await self._submit(batch, ack)
        ack.sealed()

    async def _submit(self, batch: _PartitionBatch, ack: _BatchSettler) -> None:
        assert batch.builder is not None
        try:
            size = batch.builder.size()  # the encoded batch, before send_batch closes the builder
            sent = await self._producer.send_batch(batch.builder, batch.topic, partition=batch.partition)
            add_outgoing(self._producer, size)
        except KafkaError as exc:
            self._partition_ids.pop(batch.topic, None)
            ack.fail(batch.indices, self._failed(exc, batch.topic))
            return
        except Exception as exc:
            ack.fail(batch.indices, TopicsError(f"Could not send to topic '{batch.topic}': {describe(exc)}"))
            return
        ack.expect(batch, batch.indices, sent)

    async def flush(self) -> None:
        if self._pending:
            await asyncio.gather(*list(self._pending), return_exceptions=True)

    async def close(self) -> None:
        """Wait for what was sent, then stop the pump; idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            await self.flush()
        finally:
            if self._pump is not None:
                self._pump.cancel()
                await asyncio.wait([self._pump])
            for future in list(self._pending):
                _settle(future, exc=TopicsError("The producer closed before the record was sent"))
            self._forget(self)


_Queued = (tuple[str, bytes | None, bytes | None, list[tuple[str, bytes | None]], int | None,
                 "asyncio.Future[RecordMetadata]"]
           | tuple[list[OutgoingRecord], "asyncio.Future[BatchAck]"])


class _PartitionBatch:
    """An aiokafka ``BatchBuilder`` for one partition and the batch indices of its records."""

    __slots__ = ("builder", "indices", "partition", "timestamps", "topic")

    def __init__(self, topic: str, partition: int, builder: Any) -> None:
        self.topic = topic
        self.partition = partition
        self.builder = builder
        self.indices: list[int] = []
        self.timestamps: list[int] = []

    def append(self, index: int, key: bytes | None, value: bytes | None,
               headers: list[tuple[str, bytes | None]]) -> Any:
        meta = self.builder.append(timestamp=None, key=key, value=value, headers=headers)
        if meta is not None:
            self.indices.append(index)
            self.timestamps.append(meta.timestamp)
        return meta


class _BatchSettler:
    """Resolves a ``send_batch`` future once every partition batch of it was acknowledged or failed."""

    __slots__ = ("_ack", "_failed", "_future", "_outstanding", "_sealed")

    def __init__(self, ack: BatchAck, future: asyncio.Future[BatchAck],
                 failed: Callable[[KafkaError, str], TopicsError]) -> None:
        self._ack = ack
        self._future = future
        self._failed = failed
        self._outstanding = 0
        self._sealed = False

    def fail(self, indices: list[int], error: BaseException) -> None:
        for i in indices:
            self._ack.fail(i, error)

    def expect(self, batch: _PartitionBatch, indices: list[int], sent: asyncio.Future[Any]) -> None:
        self._outstanding += 1
        sent.add_done_callback(partial(self._done, batch, indices))

    def _done(self, batch: _PartitionBatch, indices: list[int], sent: asyncio.Future[Any]) -> None:
        self._outstanding -= 1
        if sent.cancelled():
            self.fail(indices, TopicsError(f"The send to topic '{batch.topic}' was cancelled"))
        elif (exc := sent.exception()) is not None:
            self.fail(indices, self._failed(exc, batch.topic) if isinstance(exc, KafkaError) else exc)
        else:
            meta = sent.result()
            timestamps = batch.timestamps if batch.builder is not None else [meta.timestamp]
            self._ack.add_span(batch.topic, batch.partition, meta.offset, indices, timestamps)
        self._check()

    def sealed(self) -> None:
        self._sealed = True
        self._check()

    def _check(self) -> None:
        if self._sealed and self._outstanding == 0 and not self._future.done():
            self._future.set_result(self._ack)


def _settle(future: asyncio.Future[RecordMetadata], result: RecordMetadata | None = None,
            exc: BaseException | None = None) -> None:
    if future.done():
        return  # the caller gave up on it
    if exc is not None:
        future.set_exception(exc)
    elif result is not None:
        future.set_result(result)


def _on_ack(future: asyncio.Future[RecordMetadata], done: asyncio.Future[Any], *, topic: str,
            failed: Callable[[KafkaError, str], TopicsError]) -> None:
    if done.cancelled():
        _settle(future, exc=TopicsError(f"The send to topic '{topic}' was cancelled"))
    elif (exc := done.exception()) is not None:
        _settle(future, exc=failed(exc, topic) if isinstance(exc, KafkaError) else exc)
    else:
        meta = done.result()
        _settle(future, RecordMetadata(meta.topic, meta.partition, meta.offset, meta.timestamp))


class _Listener(ConsumerRebalanceListener):  # type: ignore[misc]
    """aiokafka awaits these from its coordinator task; like it, a failing callback is only logged."""

    def __init__(self, group_id: str, on_assign: RebalanceCallback, on_revoke: RebalanceCallback,
                 validate: RebalanceCallback = NO_CALLBACK) -> None:
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
            log.error("topics.rebalance_callback_failed", group=self._group_id, callback=which, error=repr(exc))


_EPOCH_CHECK_ATTEMPTS = 20  # failed OffsetsForLeaderEpoch calls in a row before records go through unchecked
_EPOCH_SPANS_KEPT = 64
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
    seeks there, drops what it fetched past it, and reports a :class:`Truncation`."""

    def __init__(self, client: Any, group_id: str, forget: Any, *, prefix: str = "consumer.") -> None:
        self._client = client
        self._prefix = prefix  # where its settings come from, named when the broker refuses it
        self._group_id = group_id
        self._forget = forget
        self._closed = False
        self._epochs: dict[TopicPartition, list[tuple[int, int]]] = {}  # (first offset, epoch) of what was read
        self._failed_checks: dict[TopicPartition, int] = {}
        self._truncations: list[Truncation] = []
        self._epoch_checks = True  # off once the broker turns out not to know OffsetsForLeaderEpoch
        self._refreshed_at = 0.0

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

    async def getmany(self, timeout_ms: int = 0, max_records: int | None = None) -> list[ConsumedRecord]:
        self._refresh_missing_topics()
        try:
            batches = await self._client.getmany(timeout_ms=timeout_ms, max_records=max_records)
        except ConsumerStoppedError as exc:
            raise TopicsError("The consumer is closed") from exc
        except KafkaError as exc:
            resource = self._group_id if isinstance(exc, GroupAuthorizationFailedError) else _named_topics(exc)
            raise _refused(exc, f"read for group '{self._group_id}'", self._client, operation="READ",
                           resource=resource, prefix=self._prefix) from exc
        add_incoming(self._client, sum(fetched_size(records) for records in batches.values()))
        consumed: list[ConsumedRecord] = []
        for ktp, records in batches.items():
            if not records:
                continue
            tp = TopicPartition(ktp.topic, ktp.partition)
            if self._epoch_checks and await self._diverged(tp, records[0]):
                continue
            self._remember(tp, records)
            consumed.extend(ConsumedRecord(r.topic, r.partition, r.offset, r.key, r.value,
                                           tuple((h, None if v is None else bytes(v)) for h, v in r.headers or ()),
                                           r.timestamp)
                            for r in records)
        return consumed

    def truncations(self) -> list[Truncation]:
        found, self._truncations = self._truncations, []
        return found

    # ---- leader epochs (KIP-320) ------------------------------------------------------------------

    def _remember(self, tp: TopicPartition, records: Sequence[Any]) -> None:
        spans = self._epochs.setdefault(tp, [])
        for record in records:
            epoch = record_epoch(record)
            if not spans or spans[-1][1] != epoch:
                spans.append((record.offset, epoch))
        if len(spans) > _EPOCH_SPANS_KEPT:
            del spans[:-_EPOCH_SPANS_KEPT]

    def _epoch_at(self, tp: TopicPartition, offset: int) -> int:
        """The leader epoch of the record at ``offset`` as read (``NO_EPOCH`` if not known)."""
        epoch = NO_EPOCH
        for first, span_epoch in self._epochs.get(tp, ()):
            if first > offset:
                break
            epoch = span_epoch
        return epoch

    async def _diverged(self, tp: TopicPartition, first: Any) -> bool:
        """Whether the log diverged below ``first`` (the first record fetched) from what was read before
        it; if so the position is back at the divergence point and the fetched records are dropped."""
        known = self._epoch_at(tp, first.offset - 1)
        epoch = record_epoch(first)
        if known < 0 or epoch < 0 or epoch == known:
            return False  # same epoch at the position: the logs agree up to it
        return await self._check(tp, known, first.offset, retry_at=first.offset)

    async def _check(self, tp: TopicPartition, epoch: int, position: int, *, retry_at: int | None) -> bool:
        """Ask the leader where ``epoch`` ends; a truncation below ``position`` moves the position to it.

        True when the caller must drop what it fetched: a truncation, or a failed check to be retried
        from ``retry_at``."""
        if not self._epoch_checks:
            return False
        try:
            answer = (await epoch_ends(self._client._client, {tp: epoch}))[tp]
        except (IncompatibleBrokerVersion, NotImplementedError) as exc:
            self._epoch_checks = False
            log.info("topics.epoch_checks_unsupported", group=self._group_id, error=repr(exc))
            return False
        except (KafkaError, KeyError) as exc:
            failures = self._failed_checks[tp] = self._failed_checks.get(tp, 0) + 1
            if retry_at is None or failures >= _EPOCH_CHECK_ATTEMPTS:
                self._failed_checks.pop(tp, None)
                log.warning("topics.epoch_check_failed", group=self._group_id, partition=f"{tp.topic}-{tp.partition}",
                            epoch=epoch, position=position, error=repr(exc), attempts=failures)
                return False
            self._seek_quietly(tp, retry_at)
            with contextlib.suppress(KafkaError):  # a leader that moved (NOT_LEADER_OR_FOLLOWER) is found again
                await self._client._client.force_metadata_update()
            return True
        self._failed_checks.pop(tp, None)
        if answer.end_offset == NO_OFFSET or answer.epoch == NO_EPOCH:
            # the leader knows no epoch at or below it: Kafka's consumer calls this an undetectable
            # truncation and applies auto.offset.reset; the records go on from the position here
            log.warning("topics.truncation_undetectable", group=self._group_id,
                        partition=f"{tp.topic}-{tp.partition}", epoch=epoch, position=position)
            return False
        if answer.end_offset >= position:
            return False
        self._seek_quietly(tp, answer.end_offset)
        spans = self._epochs.get(tp, [])
        self._epochs[tp] = [s for s in spans if s[0] < answer.end_offset - 1]
        if answer.end_offset > 0:  # the record before the divergence point is of the epoch that ends there
            self._epochs[tp].append((answer.end_offset - 1, answer.epoch))
        self._truncations.append(Truncation(tp, position, answer.end_offset))
        return True

    def _seek_quietly(self, tp: TopicPartition, offset: int) -> None:
        with contextlib.suppress(IllegalStateError):  # revoked meanwhile: nothing to re-read
            self._client.seek(KafkaTopicPartition(*tp), offset)

    async def validate_assigned(self, tps: frozenset[TopicPartition]) -> None:
        """Check the committed offsets of newly assigned partitions against their committed epochs."""
        if not self._epoch_checks or self._client._coordinator is None:
            return
        ktps = [KafkaTopicPartition(*tp) for tp in tps]
        try:  # aiokafka retries this itself while the error is retriable
            committed = await self._client._coordinator.fetch_committed_offsets(ktps)
        except KafkaError as exc:
            log.warning("topics.epoch_check_failed", group=self._group_id, partitions=sorted(map(str, tps)),
                        error=repr(exc), reason="the committed offsets could not be read")
            return
        for ktp, meta in committed.items():
            tp = TopicPartition(ktp.topic, ktp.partition)
            if meta is None:
                continue
            epoch = epoch_of_metadata(getattr(meta, "metadata", None))
            if meta.offset < 0 or epoch < 0:
                continue
            self._epochs[tp] = [(meta.offset - 1, epoch)]
            await self._check(tp, epoch, meta.offset, retry_at=None)

    def seek(self, tp: TopicPartition, offset: int) -> None:
        try:
            self._client.seek(KafkaTopicPartition(*tp), offset)
        except IllegalStateError as exc:
            raise NotAssigned(tp[0], tp[1]) from exc

    async def position(self, tp: TopicPartition) -> int:
        try:
            return int(await self._client.position(KafkaTopicPartition(*tp)))
        except IllegalStateError as exc:
            raise NotAssigned(tp[0], tp[1]) from exc

    async def commit(self, offsets: Mapping[TopicPartition, int]) -> None:
        try:
            await self._client.commit({KafkaTopicPartition(*tp): (int(o), commit_metadata(self._epoch_at(tp, int(o) - 1)))
                                       for tp, o in offsets.items()})
        except IllegalStateError as exc:
            tp = next((tp for tp in offsets if KafkaTopicPartition(*tp) not in self._client.assignment()),
                      next(iter(offsets)))
            raise NotAssigned(tp[0], tp[1]) from exc
        except KafkaError as exc:
            raise _error(exc, f"commit offsets for group '{self._group_id}'") from exc

    async def committed(self, tp: TopicPartition) -> int | None:
        try:
            offset = await self._client.committed(KafkaTopicPartition(*tp))
        except KafkaError as exc:
            raise _error(exc, f"read committed offsets of group '{self._group_id}'") from exc
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

    def log_end(self, tp: TopicPartition) -> int | None:
        highwater = self._client.highwater(KafkaTopicPartition(tp[0], tp[1]))
        return None if highwater is None else int(highwater)

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
