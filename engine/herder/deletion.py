"""Running ``Connector.deleted()``: bounded, never raising, on a fresh instance when needed.

Bounded means the caller stops waiting, not that the call stops: an async ``deleted()`` is
cancelled, a sync one keeps its thread until it returns. The outcome then carries ``lingering``,
done when the call really ended, so the herder keeps the name blocked until then.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

import structlog

from engine.api._invoke import invoke, left_running
from engine.api.connector import Connector, SinkConnector, SourceConnector
from engine.api.context import ConnectorContext, SinkConnectorContext, SourceConnectorContext
from engine.errors import trace_of
from engine.storage.base import OffsetStore

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


def _closed_context(cls: type[Connector], config: dict[str, str], offsets: OffsetStore,
                    name: str, incarnation: str | None, spark: Any) -> ConnectorContext:
    def refuse() -> None:
        raise RuntimeError("the connector is being deleted")

    def refuse_error(exc: BaseException) -> None:
        raise RuntimeError("the connector is being deleted") from exc

    context: ConnectorContext
    if issubclass(cls, SinkConnector):
        context = SinkConnectorContext(config, request_reconfiguration=refuse, raise_error=refuse_error,
                                       incarnation=incarnation)
    else:
        context = SourceConnectorContext(config, offset_reader=offsets.reader(name), incarnation=incarnation,
                                         request_reconfiguration=refuse, raise_error=refuse_error)
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
    done, _ = await asyncio.wait({running}, timeout=timeout)
    if not done:
        running.cancel()
        error = f"Connector.deleted() did not return within {timeout:g} s"
        log.error("connector.deletion_timed_out", reason=error, fresh_instance=fresh, attempt=attempt)
        return replace(outcome, error=error, timed_out=True, lingering=until_returned([running]))
    failure = running.exception()
    if failure is not None:  # user code: reported, deletion still completes
        error = trace_of(failure)
        log.error("connector.deletion_failed", reason=str(failure), trace=error, fresh_instance=fresh,
                  attempt=attempt)
        return replace(outcome, error=error)
    log.info("connector.deleted_ran", fresh_instance=fresh, attempt=attempt)
    return replace(outcome, succeeded=True)


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


def remove_offsets_if_asked(name: str, cls: type[Connector] | None, config: dict[str, str],
                            offsets: OffsetStore) -> None:
    """After a successful cleanup, however it ended (on time, on a retry, late): source offsets go
    when the config (``offsets.reset.on.delete``) or else the connector class
    (``SourceConnector.offsets_removed_on_delete``) asks for it."""
    asked = config.get("offsets.reset.on.delete", "").strip().lower()
    if asked == "true" or (not asked and cls is not None and issubclass(cls, SourceConnector)
                           and cls.offsets_removed_on_delete):
        removed = offsets.reset(name)
        log.info("connector.offsets_reset", connector=name, partitions=removed)
