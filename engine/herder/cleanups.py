"""Deleted connectors whose cleanup has not succeeded yet: attempts, late returns, retries, giving up.

A deletion's first attempt runs on entering DESTROYED. When ``deleted()`` raises or passes its
timeout, the ``pending-cleanup-<c>`` record stays and ``Cleanups`` retries it every
``connector.deleted.retry.backoff.ms``, at most ``connector.deleted.max.retries`` times, then
gives up (the record is cleared so the name can be used again, and the failure is logged and
counted). A callback that passed its timeout is tracked until it really returns: no retry, and
no new connector of that name, starts while it may still be running.

``Cleanups`` is the one home of this bookkeeping: the herder holds it, deletions report their
attempts to it, the engine asks it (a creation waits for the name's previous cleanup,
``GET /connector-cleanups`` lists it, ``DELETE`` collects its outcome).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol

import structlog

from engine.api.connector import Connector
from engine.configlog.records import ConfigRecord, PendingCleanupCleared, PendingCleanupRecord
from engine.errors import CleanupPending, ConfigError
from engine.herder.deletion import DeletionOutcome, remove_offsets_if_asked
from engine.herder.messages import Message, RunCleanup
from engine.observability.request_stage import enter_stage
from engine.plugins.loading import load_connector_class

if TYPE_CHECKING:
    from engine.config.worker import WorkerConfig
    from engine.configlog.snapshot import ConfigSnapshot
    from engine.herder.ownership import Ownership
    from engine.observability.metrics import EngineMetrics
    from engine.storage.base import OffsetStore

log = structlog.get_logger(component="herder")


class CleanupState(StrEnum):
    RUNNING = "RUNNING"  # an attempt is in progress on this worker
    LINGERING = "LINGERING"  # an attempt passed its timeout; its callback has not returned yet
    WAITING = "WAITING"  # failed; the next attempt is scheduled
    GAVE_UP = "GAVE_UP"  # out of retries: cleared, reported, not attempted again
    PENDING = "PENDING"  # the record stands, but no attempt of it is known here (another worker, or boot)


@dataclass
class Cleanup:
    """One incarnation's cleanup, as this worker knows it."""

    connector: str
    incarnation: str | None
    state: CleanupState = CleanupState.RUNNING
    attempts: int = 0
    last_error: str | None = None
    next_attempt: float | None = None  # epoch seconds
    deleted_timed_out: bool = False  # the last attempt's deleted() passed its timeout (not a task stop)
    timer: asyncio.TimerHandle | None = None

    def to_json(self, worker_id: str | None) -> dict[str, Any]:
        """A row of ``GET /connector-cleanups``; ``worker_id`` None for a record no worker here attempted."""
        return {
            "connector": self.connector,
            "incarnation": self.incarnation,
            "state": self.state.value,
            "attempts": self.attempts,
            "last_error": self.last_error,
            "next_attempt": None if self.next_attempt is None else int(self.next_attempt * 1000),
            "worker_id": worker_id,
        }


class CleanupServices(Protocol):
    """What cleanups need from the herder that holds them (read at each use: a test may swap the ownership)."""

    worker: WorkerConfig
    offsets: OffsetStore
    metrics: EngineMetrics
    snapshot: ConfigSnapshot
    ownership: Ownership

    def spawn(self, coro: Coroutine[Any, Any, None], name: str) -> asyncio.Task[None]: ...

    def post(self, connector: str, message: Message) -> None: ...

    async def append(self, records: list[ConfigRecord]) -> int: ...

    async def wait_read(self, offset: int, timeout: float) -> None: ...


class Cleanups:
    """What this worker knows of deletions and their unfinished cleanups, and the retries it runs."""

    def __init__(self, services: CleanupServices) -> None:
        self._s = services
        worker = services.worker
        self._backoff = worker.deleted_retry_backoff
        self._max_retries = worker.deleted_max_retries
        self._metrics = services.metrics
        self.deleting: set[str] = set()  # connectors whose deletion callbacks run here right now
        self._cleaned: set[str] = set()  # deleted() succeeded here; the clear record is not read back yet
        self._outcomes: dict[str, DeletionOutcome] = {}  # each name's last deletion, until DELETE takes it
        self._by_name: dict[str, Cleanup] = {}
        self._clearing: set[asyncio.Task[None]] = set()  # pending-cleanup clears not read back yet
        self._closing = False
        services.metrics.pending_cleanups = lambda: len(services.snapshot.pending_cleanups)

    # ---- what deletions report ------------------------------------------------------------

    def started(self, connector: str, incarnation: str | None) -> int:
        """An attempt at the connector's cleanup begins here; returns its number (1 = the deletion)."""
        self.deleting.add(connector)
        cleanup = self._by_name.get(connector)
        if cleanup is None or cleanup.incarnation != incarnation or cleanup.state is CleanupState.GAVE_UP:
            cleanup = self._by_name[connector] = Cleanup(connector, incarnation)
        if cleanup.timer is not None:
            cleanup.timer.cancel()
        cleanup.state, cleanup.timer, cleanup.next_attempt = CleanupState.RUNNING, None, None
        cleanup.attempts += 1
        return cleanup.attempts

    def finished(self, outcome: DeletionOutcome) -> None:
        """An attempt ended (or stopped being waited for): retry or give up, keep the outcome for DELETE."""
        outcome = self._attempt_ended(outcome)
        name = outcome.connector
        lingering = outcome.lingering
        if lingering is not None and not lingering.done():
            # a callback passed its timeout: the name stays taken until it has really returned
            lingering.add_done_callback(lambda _: self.deleting.discard(name))
        else:
            self.deleting.discard(name)
        if outcome.succeeded:
            self._cleaned.add(name)
        self._metrics.deletion(outcome.succeeded)
        self._outcomes[name] = outcome

    def assigned(self, connector: str) -> PendingCleanupRecord | None:
        """The cleanup an assignment hands this worker to run, if any. None while a ``deleted()`` of
        the connector still runs here (lingering past its timeout): a rebalance must not start a
        second one beside it; it is cleared or retried once it returns."""
        if connector in self._cleaned or connector in self.deleting:
            return None
        return self._s.snapshot.pending_cleanups.get(connector)

    def read_back(self, record: PendingCleanupRecord | PendingCleanupCleared) -> None:
        """A pending-cleanup record (or its clear) was read from the log and applied to the snapshot."""
        if self._s.ownership.distributed:
            self._cleaned.discard(record.connector)
        if isinstance(record, PendingCleanupCleared):
            self._forget(record.connector)

    # ---- what the engine asks -------------------------------------------------------------

    def outcome(self, connector: str) -> DeletionOutcome | None:
        """The outcome of the connector's last deletion, handed over once (then forgotten)."""
        return self._outcomes.pop(connector, None)

    def pending(self, connector: str) -> bool:
        """A previous incarnation's cleanup is unfinished: its record stands, or a callback still runs here."""
        return connector in self._s.snapshot.pending_cleanups or connector in self.deleting

    async def previous_done(self, connector: str) -> None:
        """Creating a name whose previous incarnation is still being cleaned up waits for that cleanup,
        at most ``connector.deleted.timeout.ms``, then fails with ``CleanupPending`` (409): an old
        ``deleted()`` must never run beside a new ``start()``."""
        if not self.pending(connector):
            return
        enter_stage(f"waiting for the cleanup of a previous connector named {connector}")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._s.worker.deleted_timeout
        while self.pending(connector):
            if loop.time() >= deadline:
                known = self._by_name.get(connector)
                record = self._s.snapshot.pending_cleanups.get(connector)
                incarnation = (
                    known.incarnation if known is not None else record.incarnation if record else None
                )
                detail = f"incarnation {incarnation}"
                if known is not None:
                    detail += f", {known.state.value.lower()} after {known.attempts} attempt(s)"
                raise CleanupPending(connector, detail)
            await asyncio.sleep(0.05)

    def listing(self) -> list[dict[str, Any]]:
        """``GET /connector-cleanups``: every unfinished cleanup, and the ones given up on this worker."""
        listed = [cleanup.to_json(self._s.worker.worker_id) for cleanup in self._by_name.values()]
        for name, record in self._s.snapshot.pending_cleanups.items():
            if name not in self._by_name:
                listed.append(Cleanup(name, record.incarnation, CleanupState.PENDING).to_json(None))
        return sorted(listed, key=lambda entry: entry["connector"])

    def busy(self, parked: Callable[[str, str], bool]) -> int:
        """Late callbacks not parked on purpose, and clears not read back yet (a retry waiting for its
        backoff is a timer, like a poll interval: not in flight)."""
        lingering = sum(
            1
            for c in self._by_name.values()
            if c.state is CleanupState.LINGERING and not parked(c.connector, "connector")
        )
        return lingering + len(self._clearing)

    def close(self) -> None:
        """The worker stops (or crashes): no retry is scheduled or posted any more."""
        self._closing = True
        for cleanup in self._by_name.values():
            if cleanup.timer is not None:
                cleanup.timer.cancel()

    # ---- attempts, retries, giving up -----------------------------------------------------

    def _attempt_ended(self, outcome: DeletionOutcome) -> DeletionOutcome:
        """Count the attempt; returns the outcome with ``will_retry``."""
        cleanup = self._by_name.get(outcome.connector)
        if cleanup is None:
            return outcome
        if outcome.succeeded:
            self._metrics.cleanup_attempt("succeeded")
            del self._by_name[outcome.connector]
            return outcome
        cleanup.last_error = outcome.error
        cleanup.deleted_timed_out = outcome.timed_out
        self._metrics.cleanup_attempt("timed_out" if outcome.timed_out else "failed")
        if outcome.lingering is not None and not outcome.lingering.done():
            cleanup.state = CleanupState.LINGERING
            outcome.lingering.add_done_callback(lambda done: self._returned(cleanup, done))
            return replace(outcome, will_retry=self._retries_left(cleanup))
        return replace(outcome, will_retry=self._after_failure(cleanup))

    def _forget(self, connector: str) -> None:
        """The pending record was cleared (read back): nothing more to do for it here."""
        cleanup = self._by_name.get(connector)
        if cleanup is not None and cleanup.state in (CleanupState.WAITING, CleanupState.PENDING):
            if cleanup.timer is not None:
                cleanup.timer.cancel()
            del self._by_name[connector]

    def _retries_left(self, cleanup: Cleanup) -> bool:
        return cleanup.attempts <= self._max_retries

    def _returned(self, cleanup: Cleanup, done: asyncio.Future[BaseException | None]) -> None:
        """A callback that passed its timeout has really returned now."""
        if self._by_name.get(cleanup.connector) is not cleanup or self._closing:
            return
        late_error = None if done.cancelled() else done.result()
        if late_error is None and cleanup.deleted_timed_out:  # deleted() did finish, only late
            log.info(
                "connector.cleanup_returned_late",
                connector=cleanup.connector,
                incarnation=cleanup.incarnation,
                attempt=cleanup.attempts,
            )
            self._metrics.cleanup_attempt("succeeded_late")
            del self._by_name[cleanup.connector]
            self._clear(cleanup.connector, True)
            return
        log.warning(
            "connector.cleanup_returned_late",
            connector=cleanup.connector,
            incarnation=cleanup.incarnation,
            attempt=cleanup.attempts,
            error=repr(late_error),
        )
        self._after_failure(cleanup)

    def _after_failure(self, cleanup: Cleanup) -> bool:
        """Schedule the next attempt, or give up; True when another attempt will come."""
        if not self._retries_left(cleanup):
            cleanup.state, cleanup.next_attempt = CleanupState.GAVE_UP, None
            log.error(
                "connector.cleanup_gave_up",
                connector=cleanup.connector,
                incarnation=cleanup.incarnation,
                attempts=cleanup.attempts,
                last_error=cleanup.last_error,
            )
            self._metrics.cleanups_given_up.inc(())
            self._clear(cleanup.connector, False)
            return False
        cleanup.state = CleanupState.WAITING
        cleanup.next_attempt = time.time() + self._backoff
        if not self._closing:
            loop = asyncio.get_running_loop()
            cleanup.timer = loop.call_later(self._backoff, self._due, cleanup)
        log.warning(
            "connector.cleanup_retry_scheduled",
            connector=cleanup.connector,
            incarnation=cleanup.incarnation,
            attempt=cleanup.attempts + 1,
            in_s=self._backoff,
        )
        return True

    def _due(self, cleanup: Cleanup) -> None:
        """The backoff passed: post the next attempt to the connector's actor, if it is still ours to run."""
        cleanup.timer = None
        if self._by_name.get(cleanup.connector) is not cleanup or cleanup.state is not CleanupState.WAITING:
            return
        connector, incarnation = cleanup.connector, cleanup.incarnation
        record = self._s.snapshot.pending_cleanups.get(connector)
        if record is None or record.incarnation != incarnation or self._closing:
            self._forget(connector)
            return
        if not self._s.ownership.owns_connector(connector):
            return  # the group moved it: its new owner runs it
        log.info(
            "connector.cleanup_retrying",
            connector=connector,
            incarnation=incarnation,
            attempt=cleanup.attempts + 1,
        )
        self._s.post(connector, RunCleanup(record))

    def _clear(self, connector: str, succeeded: bool) -> None:
        """End a pending cleanup in the log (it succeeded late, or was given up); one that succeeded
        late removes the offsets its connector asks to, as one that succeeded on time does."""
        pending = self._s.snapshot.pending_cleanups.get(connector)
        if succeeded and pending is not None:
            config = pending.properties  # the deleted connector's, not the worker's
            try:
                cls: type[Connector] | None = load_connector_class(config.get("connector.class", ""))
            except ConfigError:
                cls = None
            remove_offsets_if_asked(connector, cls, config, self._s.offsets)
        if not self._closing:
            task = self._s.spawn(self._append_clear(connector), f"cleanup-clear:{connector}")
            self._clearing.add(task)
            task.add_done_callback(self._clearing.discard)

    async def _append_clear(self, connector: str) -> None:
        offset = await self._s.append([PendingCleanupCleared(connector)])
        await self._s.wait_read(offset + 1, self._s.worker.callback_timeout)
