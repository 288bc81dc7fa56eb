"""What the source and sink loops share: the control seam to their runner, and per-task plumbing
(converters, transformation chain, error handling) built from the connector's config."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

import structlog

from engine.api.context import TaskContext
from engine.api.task import Task
from engine.observability.connect_metrics import Kind
from engine.tolerance import ErrorPolicy, LogReporter, ToleranceOperator
from engine.transforms.chain import TransformationChain
from engine.worker.data_plane import DataPlane
from engine.worker.rate_limit import pacer_for
from engine.worker.task_converters import TaskConverters
from states import TargetState

log = structlog.get_logger(component="worker")


class TaskControl(Protocol):
    """The runner as its loop sees it: target, stop flag, parking, and pause/resume reports."""

    target: TargetState

    def stopping(self) -> bool: ...

    async def park_on(self, work: asyncio.Future[Any], timeout: float | None = None) -> str: ...

    def park(self) -> asyncio.Future[None]: ...

    def wake(self) -> None: ...

    def set_paused(self, paused: bool) -> None: ...


class TaskLoop:
    """One running task's data work; ``open`` after ``Task.start``, ``close`` before ``Task.stop``."""

    kind: Kind = "source"

    def __init__(self, connector: str, task_id: int, task: Task, context: TaskContext,
                 connector_config: Mapping[str, str], plane: DataPlane, control: TaskControl) -> None:
        self.connector = connector
        self.task_context = context
        self.task_id = task_id
        self.task = task
        self.config = connector_config
        self.plane = plane
        self.control = control
        TaskConverters.check(connector_config, plane.worker)
        self._converters: TaskConverters | None = None  # configured on first use: a task may never see data
        self.chain = TransformationChain.from_config(connector_config)
        self.policy = ErrorPolicy.from_config(connector_config)
        self.counters = plane.task_started(connector, task_id, self.kind)  # Connect's per-task metrics
        self._operator: ToleranceOperator | None = None  # made when a record first fails: most never do
        self.pacer = pacer_for(connector_config, self.counters, plane.timers)  # None: no rate limit

    @property
    def operator(self) -> ToleranceOperator:
        """The task's error handler (``errors.*``), with its reporters."""
        if self._operator is None:
            self._operator = ToleranceOperator(self.policy, connector=self.connector, task=self.task_id,
                                               reporters=self._reporters(), stopping=self.control.stopping,
                                               metrics=self.counters.errors)
        return self._operator

    @property
    def converters(self) -> TaskConverters:
        if self._converters is None:
            self._converters = TaskConverters.build(self.config, self.plane.worker)
        return self._converters

    def _reporters(self) -> list[Any]:
        """Error reporters for the operator; the sink loop adds its dead letter queue."""
        if self.policy.log_enable:
            return [LogReporter(self.policy, connector=self.connector, task=self.task_id)]
        return []

    async def pace(self, commit_due: Callable[[], float], commit: Callable[[], Awaitable[None]]) -> None:
        """Wait, parked, until the rate limits let the next batch go; the offset commit still runs on
        time (``commit_due``: seconds until it is due), and a stop or pause ends the wait."""
        pacer = self.pacer
        if pacer is None or (delay := pacer.delay()) <= 0:
            return
        control = self.control
        started = pacer.timers.time()
        waiter = pacer.sleep(delay)
        try:
            while not waiter.done():
                outcome = await control.park_on(waiter, max(0.0, commit_due()))
                if outcome == "timeout":
                    await commit()
                elif outcome == "woken" and (control.stopping() or control.target is not TargetState.STARTED):
                    break
        finally:
            waiter.cancel()
            pacer.throttled(pacer.timers.time() - started)

    async def open(self) -> None:
        return None

    async def execute(self) -> None:
        raise NotImplementedError

    async def close(self, failed: bool) -> None:
        """Release what the loop holds (commit what can be committed); called once, even after a failure."""
        return

    def retire(self) -> None:
        """The task instance is gone for good (its runner finished): its metrics go with it."""
        self.plane.task_stopped(self.connector, self.task_id, self.counters)

    def release(self) -> None:
        """Close converters and transformations after the task stopped (Connect's ``doClose``)."""
        closers = [self.chain.close] + ([self._converters.close] if self._converters is not None else [])
        for closer in closers:
            try:
                closer()
            except Exception as exc:  # plugin code: logged, the task still closes
                log.warning("task.close_plugin_failed", task=self.task_id, error=repr(exc))
