"""What the runtime hands connectors and tasks so they can talk back to it (Kafka's
``ConnectorContext``, ``SourceTaskContext``, ``SinkTaskContext`` and their kin).

Contexts are safe to call from any thread: a sync connector runs in a worker thread, and its
calls are passed to the event loop rather than touching engine state directly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

from engine.api.errors import ConnectException, IllegalWorkerStateException
from engine.api.exactly_once import TransactionContext
from engine.api.identity import TopicIdentity
from engine.api.records import TopicPartition


class OffsetStorageReader(Protocol):
    """Reads the source offsets the runtime has committed for this connector."""

    def offset(self, partition: Mapping[str, Any]) -> dict[str, Any] | None: ...

    def offsets(self, partitions: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any] | None]: ...


class ConnectorContext:
    """Lets a connector ask for task reconfiguration or declare itself failed."""

    def __init__(
        self,
        config: Mapping[str, str],
        *,
        request_reconfiguration: Callable[[], None],
        raise_error: Callable[[BaseException], None],
        incarnation: str | None = None,
    ) -> None:
        self._config = dict(config)
        self._request_reconfiguration = request_reconfiguration
        self._raise_error = raise_error
        self._incarnation = incarnation
        self._closed = False
        self.spark: Any = None
        """As ``TaskContext.spark``, for the connector's own Spark work (say, cleaning up in ``deleted()``);
        its jobs belong to the connector (task ``-1``). None when the worker has no Spark supervisor."""

    def configs(self) -> dict[str, str]:
        """The connector's raw configuration, available even before ``start`` (e.g. in ``deleted``)."""
        return dict(self._config)

    def incarnation(self) -> str:
        """Which creation of this connector name this is: stable across restarts, rebalances and
        workers, new each time the name is deleted and created again. Name what you provision by it,
        so one incarnation's ``deleted()`` can never touch the next one's resources."""
        if self._incarnation is None:
            raise ConnectException(
                "This context has no incarnation (the connector was not created through a log)"
            )
        return self._incarnation

    def request_task_reconfiguration(self) -> None:
        if self._closed:
            raise ConnectException("Cannot request task reconfiguration: the connector has been shut down")
        self._request_reconfiguration()

    def raise_error(self, exc: BaseException) -> None:
        """Mark the connector FAILED with ``exc`` as its trace; the runtime does not stop it."""
        if self._closed:
            raise ConnectException("Cannot raise an error: the connector has been shut down") from exc
        self._raise_error(exc)

    def close(self) -> None:
        self._closed = True


class SourceConnectorContext(ConnectorContext):
    def __init__(
        self, config: Mapping[str, str], *, offset_reader: OffsetStorageReader, **kwargs: Any
    ) -> None:
        super().__init__(config, **kwargs)
        self._offset_reader = offset_reader

    def offset_storage_reader(self) -> OffsetStorageReader:
        return self._offset_reader


class SinkConnectorContext(ConnectorContext):
    pass


class TaskContext:
    def __init__(self, config: Mapping[str, str], *, incarnation: str | None = None) -> None:
        self._config = dict(config)
        self._incarnation = incarnation
        self.spark: Any = None
        """``await context.spark.run(fn, *args)`` runs ``fn(spark_session, *args)`` as a Spark job tied to
        this task (``engine.spark.TaskSpark``): cancelled on pause, stop, restart and delete."""

    def configs(self) -> dict[str, str]:
        return dict(self._config)

    def incarnation(self) -> str:
        """The incarnation of the connector this task belongs to (``ConnectorContext.incarnation``)."""
        if self._incarnation is None:
            raise ConnectException(
                "This context has no incarnation (the connector was not created through a log)"
            )
        return self._incarnation


class SourceTaskContext(TaskContext):
    def __init__(
        self, config: Mapping[str, str], *, offset_reader: OffsetStorageReader, incarnation: str | None = None
    ) -> None:
        super().__init__(config, incarnation=incarnation)
        self._offset_reader = offset_reader
        self.transactions: TransactionContext | None = (
            None  # set by an exactly-once loop (connector boundary)
        )

    def offset_storage_reader(self) -> OffsetStorageReader:
        return self._offset_reader

    def transaction_context(self) -> TransactionContext | None:
        """With ``transaction.boundary=connector`` under exactly-once support, the task's transaction
        control; None otherwise (as in Connect)."""
        return self.transactions


class SinkTaskContext(TaskContext):
    """Rewinds, pauses and commit requests a sink task makes; the sink loop applies them."""

    def __init__(self, config: Mapping[str, str], *, incarnation: str | None = None) -> None:
        super().__init__(config, incarnation=incarnation)
        self.assigned: set[TopicPartition] = set()
        self.paused: set[TopicPartition] = set()
        self.rewinds: dict[TopicPartition, int] = {}
        self.timeout_ms: int | None = None
        self.commit_requested = False
        self._errant_reporter: Any = None
        self.identities: dict[TopicPartition, TopicIdentity] = {}  # of assigned partitions, set by the loop
        self.resets: dict[TopicPartition, int] = {}  # refused positions' new ones, set by the loop
        self._on_mismatch: Callable[[TopicPartition, int, TopicIdentity, TopicIdentity], None] | None = None

    def offset(
        self, offsets: Mapping[TopicPartition, int] | TopicPartition, offset: int | None = None
    ) -> None:
        if isinstance(offsets, TopicPartition):
            if offset is None:
                raise TypeError("offset(tp, offset) needs an offset")
            self.rewinds[offsets] = offset
        else:
            self.rewinds.update(offsets)

    def timeout(self, timeout_ms: int) -> None:
        self.timeout_ms = timeout_ms

    def identity(self, tp: TopicPartition) -> TopicIdentity | None:
        """The identity (cluster id, topic id) of an assigned partition's log, to keep beside a position
        the task stores itself; None when the log names none (a broker older than Kafka 2.8)."""
        return self.identities.get(tp)

    def identity_mismatch(self, tp: TopicPartition, offset: int, stored: TopicIdentity) -> None:
        """Report a position the task kept itself for another log than ``tp``'s (``identity(tp)``): the
        engine logs one warning naming both identities, and raises ``ConnectException`` when the
        connector's ``offsets.identity.mismatch`` is ``fail``. The task then does not rewind to it."""
        live = self.identities.get(tp)
        if self._on_mismatch is not None and live is not None:
            self._on_mismatch(tp, offset, stored, live)

    def reset_position(self, tp: TopicPartition) -> int | None:
        """Where the consumer moved ``tp`` because the position it was to read from could not be applied
        (out of range, or stored for another log) since the last call; None if it did not. A task that
        skips records below a position it keeps starts over from here."""
        return self.resets.pop(tp, None)

    def set_identity_mismatch_handler(
        self, handler: Callable[[TopicPartition, int, TopicIdentity, TopicIdentity], None]
    ) -> None:
        """Called by the sink loop; not for tasks."""
        self._on_mismatch = handler

    def assignment(self) -> set[TopicPartition]:
        return set(self.assigned)

    def pause(self, *partitions: TopicPartition) -> None:
        self._check_assigned(partitions)
        self.paused.update(partitions)

    def resume(self, *partitions: TopicPartition) -> None:
        self._check_assigned(partitions)
        self.paused.difference_update(partitions)

    def request_commit(self) -> None:
        self.commit_requested = True

    def errant_record_reporter(self) -> Any:
        """``report(record, error)`` for records ``put`` cannot handle; None unless the connector has a
        dead letter queue or ``errors.log.enable=true`` (``engine.tolerance.ErrantRecordReporter``)."""
        return self._errant_reporter

    def set_errant_record_reporter(self, reporter: Any) -> None:
        """Called by the sink loop before ``initialize``; not for tasks."""
        self._errant_reporter = reporter

    def _check_assigned(self, partitions: Iterable[TopicPartition]) -> None:
        unknown = [tp for tp in partitions if tp not in self.assigned]
        if unknown:
            raise IllegalWorkerStateException(
                f"SinkTaskContext cannot pause/resume unassigned partitions {unknown}"
            )
