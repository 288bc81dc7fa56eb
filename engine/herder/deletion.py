"""Deleting a connector: the deletion contract an actor runs, and ``Connector.deleted()`` itself.

``ConnectorDeletion`` is the part of a connector's actor that runs on entering DESTROYED (and the
pending cleanups a crash or a failure left): tasks ``stop(connector_deleted=True)``, the
connector's ``stop()``, ``deleted()``, then the statuses (``docs/ARCHITECTURE.md``, "Deletion
contract"). It works on its actor's state, inside the actor's coroutine: the actor stays the
single writer of the connector's lifecycles.

``run_deleted`` calls ``deleted()``: bounded, never raising, on a fresh instance when needed.
Bounded means the caller stops waiting, not that the call stops: an async ``deleted()`` is
cancelled, a sync one keeps its thread until it returns. The outcome then carries ``lingering``,
done when the call really ended, so ``Cleanups`` (``cleanups.py``) keeps the name blocked until then.

Each attempt is reported to ``Cleanups`` (``CleanupAttempts``), which retries it or gives up; the
actor is reached only through its public port (``DeletingActor``).
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

import structlog

from engine.api._invoke import invoke, left_running
from engine.api.connector import Connector, SinkConnector, SourceConnector
from engine.api.context import ConnectorContext, SinkConnectorContext, SourceConnectorContext
from engine.config.secrets import hide
from engine.configlog.records import ConfigRecord, PendingCleanupCleared, PendingCleanupRecord
from engine.errors import ConfigError, trace_of
from engine.plugins.loading import load_connector_class
from engine.storage.base import OffsetStore, StatusStore
from engine.storage.status import Status
from states import ConnectorState, TaskState

if TYPE_CHECKING:
    from engine.config.worker import WorkerConfig
    from engine.herder.auto_restart import AutoRestarts
    from engine.worker.connector_runner import ConnectorRunner
    from states import ConnectorLifecycle, TransitionRecord
    from states.lifecycle import Lifecycle

log = structlog.get_logger(component="herder")


@dataclass(frozen=True, slots=True)
class DeletionOutcome:
    """What deleting a connector came to; ``error`` holds the trace when ``deleted()`` failed.

    ``deferred`` (distributed mode): the deletion is written, and ``deleted()`` runs on the
    worker that owns the connector when it reads the tombstone; ``succeeded`` is then unknown
    (False) here. ``timed_out``: ``deleted()`` (or a flagged task ``stop``) passed its timeout.
    ``will_retry``: the cleanup stays pending and is attempted again (``GET /connector-cleanups``).
    ``incarnation``: which creation of the name this deletion cleaned up; ``attempt`` counts from 1.
    """

    connector: str
    succeeded: bool
    error: str | None = None
    fresh_instance: bool = False
    seconds: float = 0.0
    deferred: bool = False
    timed_out: bool = False
    will_retry: bool = False
    incarnation: str | None = None
    attempt: int = 1
    # done (with the late call's exception, or None) once every callback that passed its timeout returned
    lingering: asyncio.Future[BaseException | None] | None = field(default=None, repr=False, compare=False)

    def with_duration(self, seconds: float) -> DeletionOutcome:
        return replace(self, seconds=seconds)


def _closed_context(
    cls: type[Connector],
    config: dict[str, str],
    offsets: OffsetStore,
    name: str,
    incarnation: str | None,
    spark: Any,
) -> ConnectorContext:
    def refuse() -> None:
        raise RuntimeError("the connector is being deleted")

    def refuse_error(exc: BaseException) -> None:
        raise RuntimeError("the connector is being deleted") from exc

    context: ConnectorContext
    if issubclass(cls, SinkConnector):
        context = SinkConnectorContext(
            config, request_reconfiguration=refuse, raise_error=refuse_error, incarnation=incarnation
        )
    else:
        context = SourceConnectorContext(
            config,
            offset_reader=offsets.reader(name),
            incarnation=incarnation,
            request_reconfiguration=refuse,
            raise_error=refuse_error,
        )
    context.spark = spark
    return context


async def run_deleted(
    name: str,
    cls: type[Connector] | None,
    config: dict[str, str],
    instance: Connector | None,
    offsets: OffsetStore,
    *,
    timeout: float,
    incarnation: str | None = None,
    attempt: int = 1,
    spark: Any = None,
) -> DeletionOutcome:
    """Call ``deleted()`` on ``instance``, or on a fresh one (``initialize`` first) if it has none.

    A connector that never started, failed, or was abandoned still gets its cleanup: its
    context's ``configs()`` tells it what it had been configured to provision.
    """
    fresh = instance is None
    outcome = DeletionOutcome(name, False, None, fresh, incarnation=incarnation, attempt=attempt)
    if instance is None and cls is None:
        error = f"connector class {config.get('connector.class')!r} cannot be loaded"
        log.error("connector.deletion_failed", reason=error, fresh_instance=fresh, attempt=attempt)
        return replace(outcome, error=error)

    async def call() -> None:
        target = instance
        if target is None:
            assert cls is not None
            target = cls()
            await invoke(target.initialize, _closed_context(cls, config, offsets, name, incarnation, spark))
        await invoke(target.deleted)

    running = asyncio.ensure_future(call())
    try:
        done, _ = await asyncio.wait({running}, timeout=timeout)
    except asyncio.CancelledError:
        # an abort cancelled the actor: nobody else will read what the call comes to
        running.add_done_callback(functools.partial(_cut_off, fresh_instance=fresh, attempt=attempt))
        raise
    if not done:
        running.cancel()
        error = f"Connector.deleted() did not return within {timeout:g} s"
        log.error("connector.deletion_timed_out", reason=error, fresh_instance=fresh, attempt=attempt)
        return replace(outcome, error=error, timed_out=True, lingering=until_returned([running]))
    failure = running.exception()
    if failure is not None:  # user code: reported, deletion still completes
        error = hide(trace_of(failure))
        log.error(
            "connector.deletion_failed",
            reason=str(failure),
            trace=error,
            fresh_instance=fresh,
            attempt=attempt,
        )
        return replace(outcome, error=error)
    log.info("connector.deleted_ran", fresh_instance=fresh, attempt=attempt)
    return replace(outcome, succeeded=True)


def _cut_off(call: asyncio.Future[None], *, fresh_instance: bool, attempt: int) -> None:
    """A ``deleted()`` call an abort cut its caller off from has ended: say what it came to (its pending
    cleanup stays, and runs again at the next start). Reading it here also keeps asyncio from logging
    an exception nobody retrieved: an expected crash is never an error line."""
    failure = None if call.cancelled() else call.exception()
    if failure is None:
        log.info(
            "connector.deletion_cut_off",
            returned=not call.cancelled(),
            fresh_instance=fresh_instance,
            attempt=attempt,
        )
    else:
        log.warning(
            "connector.deletion_cut_off", reason=str(failure), fresh_instance=fresh_instance, attempt=attempt
        )


def until_returned(tasks: Iterable[asyncio.Future[Any]]) -> asyncio.Future[BaseException | None]:
    """Done once every task and any callback thread it was cancelled out of has really returned.

    The result is the first task's late outcome: None when its call (say ``deleted()`` in its
    thread) returned normally after all, else what it raised (a cancelled coroutine: CancelledError).
    """
    watched = list(tasks)

    async def wait() -> BaseException | None:
        outcomes: list[BaseException | None] = []
        for task in watched:
            await asyncio.wait({task})
            thread = left_running(task) if isinstance(task, asyncio.Task) else None
            if thread is not None:
                outcomes.append(await thread)
            elif task.cancelled():
                outcomes.append(asyncio.CancelledError())
            else:
                outcomes.append(task.exception())
        return outcomes[0] if outcomes else None

    return asyncio.ensure_future(wait())


def remove_offsets_if_asked(
    name: str, cls: type[Connector] | None, config: dict[str, str], offsets: OffsetStore
) -> None:
    """After a successful cleanup, however it ended (on time, on a retry, late): source offsets go
    when the config (``offsets.reset.on.delete``) or else the connector class
    (``SourceConnector.offsets_removed_on_delete``) asks for it."""
    asked = config.get("offsets.reset.on.delete", "").strip().lower()
    if asked == "true" or (
        not asked and cls is not None and issubclass(cls, SourceConnector) and cls.offsets_removed_on_delete
    ):
        removed = offsets.reset(name)
        log.info("connector.offsets_reset", connector=name, partitions=removed)


def _resolved_or_raw(worker: WorkerConfig, config: dict[str, str]) -> dict[str, str]:
    """For ``deleted()``: the resolved config if it still resolves, else the raw one."""
    try:
        return worker.transformer.resolve(config)
    except ConfigError:
        return config


class CleanupAttempts(Protocol):
    """Where a deletion reports its attempts (``Cleanups`` in ``cleanups.py``, which the herder holds)."""

    def started(self, connector: str, incarnation: str | None) -> int: ...

    def finished(self, outcome: DeletionOutcome) -> None: ...

    def assigned(self, connector: str) -> PendingCleanupRecord | None: ...


class DeletionServices(Protocol):
    """What a deletion needs from the herder that owns the actor (part of ``ActorServices``)."""

    worker: WorkerConfig
    status: StatusStore
    offsets: OffsetStore

    @property
    def generation(self) -> int: ...

    @property
    def cleanups(self) -> CleanupAttempts: ...

    async def append(self, records: list[ConfigRecord]) -> int: ...


class DeletingActor(Protocol):
    """The port a deletion works through on its actor (``ConnectorActor``): the connector's state and
    the transitions only the actor fires, called inside the actor's coroutine."""

    name: str
    config: dict[str, str]
    cls: type[Connector] | None
    incarnation: str | None
    lifecycle: ConnectorLifecycle | None
    runner: ConnectorRunner | None
    restarts: AutoRestarts
    finished: bool

    @property
    def tasks(self) -> dict[int, Any]: ...

    async def fire(
        self, lifecycle: Lifecycle[Any], trigger: str, trace: str | None = None, *, write_status: bool = True
    ) -> TransitionRecord: ...

    async def stop_tasks(self, ids: list[int], *, deleted: bool = False) -> list[asyncio.Task[None]]: ...

    def close_round(self) -> None: ...

    def incarnate(self, incarnation: str) -> None: ...

    def connector_spark(self) -> Any: ...


class ConnectorDeletion:
    """One connector's deletion, run by its actor: the tombstone read back, and pending cleanups."""

    def __init__(self, actor: DeletingActor, services: DeletionServices) -> None:
        self._actor = actor
        self._s = services

    async def destroy(self) -> None:
        """The tombstone was read: fire ``destroy``, which runs ``on_destroyed`` (the lifecycle's hook)."""
        actor = self._actor
        actor.restarts.clear()  # deleted: nothing scheduled may restart it
        actor.close_round()
        if actor.lifecycle is None:
            # the connector runs elsewhere (or nowhere): tasks here learn the deletion (KIP-901),
            # and deleted() is its owner's to run
            await self._destroy_tasks()
            actor.finished = True
            return
        await actor.fire(actor.lifecycle, "destroy")
        actor.finished = True

    async def on_destroyed(self) -> None:
        """The deletion contract (``docs/ARCHITECTURE.md``, "Deletion contract"), run on entering DESTROYED.

        Tasks ``stop(connector_deleted=True)`` in parallel, then the connector's ``stop()``,
        then ``deleted()``, then statuses go; every step bounded, none able to block the rest.
        """
        actor, name = self._actor, self._actor.name
        started = time.monotonic()
        attempt = self._s.cleanups.started(name, actor.incarnation)
        abandoned = await actor.stop_tasks(list(actor.tasks), deleted=True)
        task_ids = list(actor.tasks)
        for slot in actor.tasks.values():
            await actor.fire(slot.lifecycle, "destroy", write_status=False)
        actor.tasks.clear()
        runner, actor.runner = actor.runner, None
        instance: Connector | None = None
        config = runner.config if runner is not None else _resolved_or_raw(self._s.worker, actor.config)
        if runner is not None:
            finished = await runner.shutdown(self._s.worker.connector_shutdown_timeout)
            if finished and runner.initialized:
                instance = runner.instance
            elif not finished and runner.body is not None:
                abandoned.append(runner.body)
        self._stopped_for_deletion(task_ids)
        outcome = await run_deleted(
            name,
            actor.cls,
            config,
            instance,
            self._s.offsets,
            timeout=self._s.worker.deleted_timeout,
            incarnation=actor.incarnation,
            attempt=attempt,
            spark=actor.connector_spark(),
        )
        if abandoned:  # stops that passed their timeout keep the deletion open until they return
            watched: list[asyncio.Future[Any]] = [outcome.lingering] if outcome.lingering is not None else []
            outcome = replace(outcome, lingering=until_returned([*watched, *abandoned]))
        self._s.status.remove_connector(name)
        if outcome.succeeded:
            remove_offsets_if_asked(name, actor.cls, actor.config, self._s.offsets)
            await self._s.append([PendingCleanupCleared(name)])
        self._s.cleanups.finished(outcome.with_duration(time.monotonic() - started))

    def _stopped_for_deletion(self, task_ids: list[int]) -> None:
        """While ``deleted()`` runs, the stopped units read UNASSIGNED, as Connect's shut-down ones do
        (a FAILED task stays FAILED: its thread ended there); their statuses go once it has returned
        (then the status is a 404)."""
        name, status = self._actor.name, self._s.status
        stopped = Status(ConnectorState.UNASSIGNED, self._s.worker.worker_id, self._s.generation)
        if status.connector(name) is not None:
            status.put_connector(name, stopped)
        tasks = status.tasks(name)
        for task in task_ids:
            if task in tasks and tasks[task].state != TaskState.FAILED:  # a failed task's thread ended FAILED
                status.put_task(name, task, stopped)

    async def cleanup_only(self, record: PendingCleanupRecord) -> None:
        """Run a pending ``deleted()`` left by a deletion that never completed (crash, failure, retry)."""
        actor, name = self._actor, self._actor.name
        config = record.properties
        actor.incarnate(record.incarnation or "")
        attempt = self._s.cleanups.started(name, record.incarnation)
        try:
            cls: type[Connector] | None = load_connector_class(config.get("connector.class", ""))
        except ConfigError:
            cls = None
        outcome = await run_deleted(
            name,
            cls,
            _resolved_or_raw(self._s.worker, config),
            None,
            self._s.offsets,
            timeout=self._s.worker.deleted_timeout,
            incarnation=record.incarnation,
            attempt=attempt,
            spark=actor.connector_spark(),
        )
        self._s.status.remove_connector(name)  # what a crashed owner left behind
        if outcome.succeeded:
            remove_offsets_if_asked(name, cls, config, self._s.offsets)
            await self._s.append([PendingCleanupCleared(name)])
        self._s.cleanups.finished(outcome)
        actor.finished = True

    async def cleanup_assigned(self) -> None:
        """This worker was assigned the connector's slot, and no config: run the cleanup it carries, if any."""
        record = self._s.cleanups.assigned(self._actor.name)
        if record is not None:
            await self.cleanup_only(record)

    async def _destroy_tasks(self) -> None:
        actor = self._actor
        if not actor.tasks:
            return
        await actor.stop_tasks(list(actor.tasks), deleted=True)
        for slot in actor.tasks.values():
            await actor.fire(slot.lifecycle, "destroy")
        actor.tasks.clear()
