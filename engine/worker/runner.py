"""The part every runner shares: a supervised body, a wake-up signal, a bounded shutdown."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import structlog

from engine.errors import trace_of
from engine.worker.report import Report, ReportSink

log = structlog.get_logger(component="worker")

Spawn = Callable[[Coroutine[Any, Any, None], str], "asyncio.Task[None]"]


class Runner:
    """One instance's private loop. ``shutdown`` waits a bounded time, then abandons it.

    An abandoned runner is cancelled (a sync callback still running in its thread is left to
    finish on its own) and its later reports are dropped, as Connect suppresses the status
    writes of a cancelled WorkerConnector/WorkerTask.
    """

    def __init__(self, name: str, report: ReportSink) -> None:
        self.name = name
        self._report = report
        self._woken = False
        self._waiter: asyncio.Future[None] | None = None
        self._stopping = False
        self.abandoned = False
        self._task: asyncio.Task[None] | None = None
        # told whenever the body may stop being parked (launched, woken, its wait over or cancelled),
        # so a quiet check need not ask every idle runner (``engine.herder.activity``)
        self.on_active: Callable[[Runner], None] | None = None

    @property
    def body(self) -> asyncio.Task[None] | None:
        """The body's task (still running after an abandoning ``shutdown`` until it is cancelled out)."""
        return self._task

    def stopping(self) -> bool:
        """A call, not the attribute: another coroutine sets it while this one awaits."""
        return self._stopping

    def launch(self, spawn: Spawn) -> None:
        self._task = spawn(self._supervised(), self.name)
        self._active()

    def _active(self, _: object = None) -> None:
        if self.on_active is not None:
            self.on_active(self)

    async def _supervised(self) -> None:
        try:
            await self._body()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # supervision boundary: an engine bug in one unit fails that unit only
            log.exception("runner.crashed", runner=self.name)
            self.report("fail", exc)

    async def _body(self) -> None:
        raise NotImplementedError

    def report(self, trigger: str, exc: BaseException | None = None) -> None:
        if self.abandoned:
            return
        self._report(Report(self, trigger, None if exc is None else trace_of(exc)))

    def wake(self) -> None:
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)  # consumed by the waiting body: nothing stays pending
            self._active()
        else:
            self._woken = True

    def _wait(self) -> asyncio.Future[None]:
        """Await this until the next ``wake()`` (done at once if one came since the last wait).

        A plain future rather than an ``asyncio.Event``: an Event costs an extra frame, a waiter
        deque and a future per idle runner, and thousands of connectors keep three runners idle.
        """
        waiter = asyncio.get_running_loop().create_future()
        if self._woken:
            self._woken = False
            waiter.set_result(None)
        else:
            self._waiter = waiter
            waiter.add_done_callback(self._active)  # cancelled with the body, say
        return waiter

    async def park_on(self, work: asyncio.Future[Any], timeout: float | None = None) -> str:
        """Wait for ``work``, the next ``wake()`` or ``timeout``, parked: ``Engine.settled`` counts the
        runner idle meanwhile, unless a wake is pending. Returns ``"done"``, ``"woken"`` or ``"timeout"``.

        ``work`` is never cancelled here: the caller decides what a wake means for it.
        """
        waker = self._wait()
        if waker.done():  # a wake came while the body was busy
            if work.done():
                self._woken = True
                return "done"
            return "woken"
        try:
            done, _ = await asyncio.wait((work, waker), timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if self._waiter is waker:
                self._waiter = None  # a later wake() must set _woken, not resolve a forgotten future
                self._active()
        if work in done:
            if waker in done:
                self._woken = True  # keep the wake for the body's next check
            return "done"
        return "woken" if waker in done else "timeout"

    def request_stop(self) -> None:
        """Ask the body to finish, without waiting (``shutdown`` then bounds the wait)."""
        self._stopping = True
        self.wake()

    @property
    def busy(self) -> bool:
        """Running user code or engine work: neither parked in ``_wait()`` nor finished."""
        parked = self._waiter is not None and not self._waiter.done()
        return not parked and self._task is not None and not self._task.done()

    async def shutdown(self, timeout: float) -> bool:
        """Ask the body to finish; True if it did within ``timeout``, False if abandoned."""
        self.request_stop()
        task = self._task
        if task is None or task.done():
            return True
        done, _ = await asyncio.wait({task}, timeout=timeout)
        if done:
            return True
        self.abandoned = True
        task.cancel()
        return False
