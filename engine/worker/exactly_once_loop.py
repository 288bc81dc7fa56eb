"""The source loop under exactly-once support: records and their offsets in one Kafka transaction.

Each task has its own transactional producer (``transactional.id = <group.id>-<connector>-<task>``,
Connect's ``Worker.taskTransactionalId``); starting it fences the previous generation of the same
task. A transaction covers one ``poll()`` batch (``transaction.boundary=poll``), every batch of
``transaction.boundary.interval.ms`` (``interval``), or what the task decides through
``context.transaction_context()`` (``connector``). Its source offsets are written to the offsets
topic inside it, so a crash leaves either both or neither. Departure from Connect:
``commit_record`` is called once a record is acknowledged, before its transaction commits.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import structlog
from aiokafka import AIOKafkaProducer
from aiokafka.errors import KafkaConnectionError, KafkaError, SaslAuthenticationFailed

from engine.api._invoke import invoke_task_call
from engine.api.context import SourceTaskContext
from engine.api.errors import ConnectException
from engine.api.exactly_once import TransactionContext
from engine.config.kafka_clients.denials import denial, is_denial
from engine.config.kafka_clients.starting import start_client
from engine.storage.offsets import offset_key
from engine.topics.kafka.producer import KafkaProducer
from engine.worker.exactly_once import WORKER_KEY, TransactionSettings, transactional_id
from engine.worker.source_loop import SourceLoop
from engine.worker.submitted_records import SubmittedRecords

log = structlog.get_logger(component="exactly-once")

_INIT_GATE_S = 0.5  # how often a cut-off worker's task start checks whether it may fence (InitProducerId)


class ExactlyOnceSourceLoop(SourceLoop):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._txn = TransactionSettings.parse(self.config, self.plane.worker)
        # the worker's offsets topic: its KafkaOffsetStore's, or, in a task host, the one the worker named
        offsets_log = getattr(self.plane.offsets, "log", None)
        topic = getattr(offsets_log, "topic", None) or getattr(self.plane.offsets, "offsets_topic", None)
        if not isinstance(topic, str):
            raise ConnectException(f"{WORKER_KEY}=enabled needs the source offsets on Kafka")
        self._offsets_topic: str = topic
        self._transactional_id = transactional_id(self.plane.worker, self.connector, self.task_id)
        # Connect's baseProducerConfigs (producer.*, then producer.override.*) under its transactional settings
        settings = self.plane.connector_clients("producer", self.config) or self.plane.clients.worker_level(
            "producer"
        )
        settings.pop("enable_idempotence", None)  # a transactional producer is idempotent
        self._client = AIOKafkaProducer(
            **{
                "bootstrap_servers": self.plane.worker["bootstrap.servers"],
                **settings,
                "client_id": f"connect-engine-{self._transactional_id}",
                "transactional_id": self._transactional_id,
                "acks": "all",
            }
        )
        self._transactional = KafkaProducer(self._client, forget=lambda _: None)
        self._producer = self._transactional
        self._open = False  # a transaction has begun and not ended
        self._started = False
        self._deadline = time.monotonic() + self._txn.interval_s
        if self._txn.boundary == "interval":  # the loop's timed commit is the transaction's end
            self._interval = self._txn.interval_s
            self._next_commit = self._deadline
        self._control: TransactionContext | None = None
        if self._txn.boundary == "connector" and isinstance(self.task_context, SourceTaskContext):
            self._control = self.task_context.transactions = TransactionContext()

    async def open(self) -> None:
        """Start the transactional producer: InitProducerId fences the previous generation of this task."""
        self._gate_init_producer_id()
        try:
            await start_client(self._client)
        except (KafkaConnectionError, SaslAuthenticationFailed) as exc:
            # the broker was never reached or refused the login: say that, not "no transactions"
            advice = self.plane.clients.missing_security("producer", self.config)
            raise ConnectException(
                f"The transactional producer of task {self.connector}-{self.task_id} could not connect: {exc}"
                + ("" if advice is None else f". {advice}")
            ) from exc
        except KafkaError as exc:
            if is_denial(exc):  # an ACL, not a broker without transactions
                prefix = (
                    "producer.override."
                    if self.plane.connector_clients("producer", self.config)
                    else "producer."
                )
                raise ConnectException(
                    f"The transactional producer of task {self.connector}-{self.task_id} was refused: "
                    f"{denial(exc, self._client, operation='WRITE', resource=self._transactional_id, prefix=prefix)}"
                ) from exc
            raise ConnectException(
                f"The broker does not support transactions ({type(exc).__name__}: {exc}), which "
                f"{WORKER_KEY}=enabled needs for task {self.connector}-{self.task_id}; use a broker with "
                f"transactions or set {WORKER_KEY}=disabled"
            ) from exc
        self._started = True
        await self.open_dead_letter_queue()
        log.info(
            "task.transactional_producer_started", task=self.task_id, transactional_id=self._transactional_id
        )

    def _gate_init_producer_id(self) -> None:
        """InitProducerId fences every other producer of this task's transactional id: a worker cut
        off from its group (KAFKA-9184) that resumes in the middle of starting the task must not fence
        the task's new owner. Its request waits until the worker is in the group again (or the stop
        that the cut-off brings cancels it). aiokafka's sender sends it from ``_do_init_pid``."""
        sender = getattr(self._client, "_sender", None)
        init = getattr(sender, "_do_init_pid", None)
        if sender is None or init is None:
            return
        runs_here = self.runs_here

        async def gated(node_id: int) -> Any:
            while not runs_here():  # noqa: ASYNC110 - a clock decides (membership), no event tells it
                await asyncio.sleep(_INIT_GATE_S)
            return await init(node_id)

        sender._do_init_pid = gated

    async def _send(self, records: list[Any]) -> None:
        if not self._open:
            await self._client.begin_transaction()
            self._open = True
        await super()._send(records)
        action = self._boundary_action()
        if action == "commit":
            await self._commit_transaction()
        elif action == "abort":
            await self._abort_transaction()

    def _boundary_action(self) -> str | None:
        if self._txn.boundary == "poll":
            return "commit"
        if self._txn.boundary == "interval":
            return "commit" if time.monotonic() >= self._deadline else None
        return self._control.take() if self._control is not None else None

    async def commit_offsets(self) -> None:
        """The periodic, pause and close commit: the open transaction (interval boundary) ends here."""
        self._next_commit = time.monotonic() + self._interval
        if self._open and self._txn.boundary == "interval":
            await self._commit_transaction()
        await self._process_acks()
        try:
            await invoke_task_call(self.task.commit)
        except Exception as exc:  # user code: logged and ignored, as in Connect
            log.warning("task.commit_failed", task=self.task_id, error=repr(exc))

    async def _commit_transaction(self) -> None:
        """Every record of the transaction acknowledged, then its offsets, then commit: all or nothing."""
        started = time.monotonic()
        await self._producer.flush()
        await self._process_acks()
        self._check_send_error()
        pairs = self._submitted.committable()
        try:
            for partition, offset in pairs:
                await self._client.send(
                    self._offsets_topic,
                    json.dumps(offset).encode(),
                    key=offset_key(self.connector, partition).encode(),
                )
            await self._client.commit_transaction()
        except KafkaError as exc:
            self.counters.commit(False, time.monotonic() - started)
            raise ConnectException(
                f"Could not commit the transaction of task {self.connector}-{self.task_id} "
                f"({type(exc).__name__}): another instance may have fenced it"
            ) from exc
        finally:
            self._open = False
            self._deadline = time.monotonic() + self._txn.interval_s
        self.plane.offsets.apply_committed(self.connector, pairs)
        self.counters.commit(True, time.monotonic() - started)
        log.info("task.transaction_committed", task=self.task_id, offsets=len(pairs))

    async def _abort_transaction(self) -> None:
        """The open transaction's records vanish for read_committed readers; its offsets are never written."""
        await self._producer.flush()
        await self._process_acks()
        await self._client.abort_transaction()
        self._open = False
        self._submitted = SubmittedRecords()
        log.info("task.transaction_aborted", task=self.task_id)

    async def close(self, failed: bool) -> None:
        try:
            if self._open and self._started:
                if failed:  # Connect skips the final commit of a failed task
                    await self._abort_transaction()
                else:
                    await self._commit_transaction()
            await self._process_acks()
        finally:
            await self._transactional.close()
            await self._client.stop()
