"""Deleted connectors whose cleanup has not succeeded yet: attempts, late returns, retries, giving up.

A deletion's first attempt runs on entering DESTROYED. When ``deleted()`` raises or passes its
timeout, the ``pending-cleanup-<c>`` record stays and this tracker retries it every
``connector.deleted.retry.backoff.ms``, at most ``connector.deleted.max.retries`` times, then
gives up (the record is cleared so the name can be used again, and the failure is logged and
counted). A callback that passed its timeout is tracked until it really returns: no retry, and
no new connector of that name, starts while it may still be running.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

import structlog

from engine.herder.deletion import DeletionOutcome
from engine.observability.metrics import EngineMetrics

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

    def to_json(self, worker_id: str) -> dict[str, Any]:
        return {
            "connector": self.connector,
            "incarnation": self.incarnation,
            "state": self.state.value,
            "attempts": self.attempts,
            "last_error": self.last_error,
            "next_attempt": None if self.next_attempt is None else int(self.next_attempt * 1000),
            "worker_id": worker_id,
        }


class CleanupTracker:
    """What this worker knows of unfinished cleanups; the herder wires in how to retry and clear."""

    def __init__(
        self,
        *,
        backoff: float,
        max_retries: int,
        metrics: EngineMetrics,
        retry: Callable[[str, str | None, int], None],
        clear: Callable[[str, bool], None],
    ) -> None:
        self._backoff = backoff
        self._max_retries = max_retries
        self._metrics = metrics
        self._retry = retry  # post the next attempt (connector, incarnation, attempt number)
        self._clear = (
            clear  # end the pending cleanup (connector, succeeded): offsets as asked, then the record
        )
        self._by_name: dict[str, Cleanup] = {}
        self._closing = False

    def known(self) -> list[Cleanup]:
        return sorted(self._by_name.values(), key=lambda c: c.connector)

    def get(self, connector: str) -> Cleanup | None:
        return self._by_name.get(connector)

    def started(self, connector: str, incarnation: str | None) -> int:
        """An attempt begins; returns its number (1 for the deletion itself)."""
        cleanup = self._by_name.get(connector)
        if cleanup is None or cleanup.incarnation != incarnation or cleanup.state is CleanupState.GAVE_UP:
            cleanup = self._by_name[connector] = Cleanup(connector, incarnation)
        if cleanup.timer is not None:
            cleanup.timer.cancel()
        cleanup.state, cleanup.timer, cleanup.next_attempt = CleanupState.RUNNING, None, None
        cleanup.attempts += 1
        return cleanup.attempts

    def finished(self, outcome: DeletionOutcome) -> DeletionOutcome:
        """An attempt ended (or stopped being waited for); returns the outcome with ``will_retry``."""
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

    def forget(self, connector: str) -> None:
        """The pending record was cleared (read back): nothing more to do for it here."""
        cleanup = self._by_name.get(connector)
        if cleanup is not None and cleanup.state in (CleanupState.WAITING, CleanupState.PENDING):
            if cleanup.timer is not None:
                cleanup.timer.cancel()
            del self._by_name[connector]

    def close(self) -> None:
        self._closing = True
        for cleanup in self._by_name.values():
            if cleanup.timer is not None:
                cleanup.timer.cancel()

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
        cleanup.timer = None
        if self._by_name.get(cleanup.connector) is cleanup and cleanup.state is CleanupState.WAITING:
            self._retry(cleanup.connector, cleanup.incarnation, cleanup.attempts + 1)
