"""Runs one task instance (Connect's ``WorkerTask``): start, pause/resume, stop."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import structlog

from engine.api._invoke import accepts_keyword, invoke
from engine.api.context import TaskContext
from engine.api.task import Task
from engine.converters.base import AWAITING_CALLER
from engine.worker.report import ReportSink
from engine.worker.runner import Runner
from engine.worker.task_loop import TaskControl, TaskLoop
from states import TargetState

MakeLoop = Callable[[Task, TaskContext, TaskControl], TaskLoop]

log = structlog.get_logger(component="worker")


class TaskRunner(Runner):
    """Owns one ``Task`` object from assignment to stop.

    Assigned while paused, it makes no callbacks until resumed. A task whose ``start`` raised
    gets ``stop()`` at once and reports FAILED. Its final ``stop`` carries
    ``connector_deleted=True`` only when the runner is shut down for a deletion; a FAILED
    instance already stopped gets that one more call, so deletion always reaches every task.
    """

    def __init__(
        self,
        connector: str,
        task: int,
        cls: type[Task],
        config: dict[str, str],
        target: TargetState,
        make_context: Callable[[dict[str, str]], TaskContext],
        report: ReportSink,
        make_loop: MakeLoop | None = None,
        on_interrupt: Callable[[], None] | None = None,
    ) -> None:
        super().__init__(f"task:{connector}-{task}", report)
        self.connector = connector
        self.task = task
        self.cls = cls
        self.config = config
        self.target = target
        self.instance: Task | None = None
        self._make_context = make_context
        self._make_loop = make_loop
        self._on_interrupt = on_interrupt  # cancels the task's Spark jobs before it pauses or stops
        self.loop: TaskLoop | None = None
        self._deleted = False
        self._stopped = False
        self._paused = False

    def transition_to(self, target: TargetState) -> None:
        self.target = target
        if target is not TargetState.STARTED and self._on_interrupt is not None:
            self._on_interrupt()
        self.wake()

    def request_stop(self) -> None:
        if self._on_interrupt is not None and not self.stopping():
            self._on_interrupt()
        super().request_stop()

    def request_stop_for_deletion(self) -> None:
        """Ask for the final ``stop(connector_deleted=True)``, without waiting."""
        self._deleted = True
        self.request_stop()

    async def _supervised(self) -> None:
        try:
            await super()._supervised()
        finally:
            if self.loop is not None:  # a failed task keeps its metrics until it is stopped
                self.loop.retire()

    async def _body(self) -> None:
        reported = ""
        while self.target is not TargetState.STARTED and not self.stopping():
            if reported != "pause":
                self.report(reported := "pause")
            await self._wait()
        if self.stopping():
            return
        if not await self._start():
            while not self.stopping():
                await self._wait()
            if self._deleted:
                await self._stop()
            return
        self.report("resume" if reported == "pause" else "start")
        if self.loop is None:
            while not self.stopping():
                self.set_paused(self.target is not TargetState.STARTED)
                await self._wait()
            await self._stop()
            return
        await self._run_loop(self.loop)

    async def _run_loop(self, loop: TaskLoop) -> None:
        """Connect's execute-then-close: a failure stops the task, reports FAILED, and waits for its stop."""
        failure: Exception | None = None
        AWAITING_CALLER.set(True)  # the loops await a converter's registry fetches (ConversionPending)
        try:
            await loop.open()
            await loop.execute()
        except Exception as exc:  # user code or data errors: the task fails alone
            failure = exc
        try:
            await loop.close(failed=failure is not None)
        except Exception as exc:
            failure = failure or exc
        if failure is not None and self.stopping():
            log.warning(
                "task.failed_while_stopping", connector=self.connector, task=self.task, error=repr(failure)
            )
            failure = None
        await self._stop()
        loop.release()
        if failure is None:
            return
        self._log_failure(failure)
        self._stopped = False  # a deletion still owes it stop(connector_deleted=True)
        self.report("fail", failure)
        while not self.stopping():
            await self._wait()
        if self._deleted:
            await self._stop()

    # ---- TaskControl: what the loop sees of its runner ---------------------------------------

    def park(self) -> asyncio.Future[None]:
        return self._wait()

    def set_paused(self, paused: bool) -> None:
        if paused != self._paused:
            self._paused = paused
            self.report("pause" if paused else "resume")

    def _log_failure(self, failure: Exception) -> None:
        """ERROR, as Connect logs a task's failure, in ``start`` as in its loop: alerts watch error lines."""
        log.error(
            "task.failed",
            connector=self.connector,
            task=self.task,
            error=repr(failure),
            reason="Task threw an uncaught and unrecoverable exception. Task is being killed and will not "
            "recover until manually restarted",
        )

    async def _start(self) -> bool:
        try:
            self.instance = self.cls()
            await invoke(self.instance.version)
            context = self._make_context(self.config)
            if self._make_loop is not None:
                self.loop = self._make_loop(self.instance, context, self)
            initialize = getattr(self.instance, "initialize", None)
            if initialize is not None:
                await invoke(initialize, context)
            await invoke(self.instance.start, dict(self.config))
        except Exception as exc:  # user code: the task fails alone
            self._log_failure(exc)
            if self.instance is not None:
                await self._stop()
                self._stopped = False  # a deletion still owes it stop(connector_deleted=True)
            self.report("fail", exc)
            return False
        return True

    async def _stop(self) -> None:
        if self.instance is None or self._stopped:
            return
        self._stopped = True
        stop = self.instance.stop
        try:
            if accepts_keyword(type(self.instance).stop, "connector_deleted"):
                await invoke(stop, connector_deleted=self._deleted)
            else:
                await invoke(stop)
        except Exception as exc:  # user code: logged, the stop still completes
            log.warning("task.stop_failed", connector=self.connector, task=self.task, error=repr(exc))
