"""What the source and sink loops share: the control seam to their runner, and per-task plumbing
(converters, transformation chain, error handling) built from the connector's config."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

import structlog

from engine.api.context import TaskContext
from engine.api.errors import ConfigException
from engine.api.metrics import PluginMetrics, attach
from engine.api.task import Task
from engine.observability.connect_metrics import Kind
from engine.plugins.classes import qualified_name
from engine.plugins.discovery import plugin_version
from engine.plugins.versions import PLUGIN_VERSION, require
from engine.tolerance import ErrorPolicy, LogReporter, ToleranceOperator
from engine.transforms.chain import TransformationChain
from engine.worker.data_plane import DataPlane
from engine.worker.rate_limit import pacer_for
from engine.worker.task_converters import TaskConverters
from states import TargetState

log = structlog.get_logger(component="worker")

_WITHHELD_CHECK_S = 0.5  # a cut-off task checks this often whether its worker is in the group again


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

    def __init__(
        self,
        connector: str,
        task_id: int,
        task: Task,
        context: TaskContext,
        connector_config: Mapping[str, str],
        plane: DataPlane,
        control: TaskControl,
    ) -> None:
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
        self._require_versions()
        self._metrics_handles: list[PluginMetrics] = []  # KIP-877: closed with the task's plugins
        self._attach_metrics()
        self.policy = ErrorPolicy.from_config(connector_config)
        self.counters = plane.task_started(connector, task_id, self.kind)  # Connect's per-task metrics
        self._operator: ToleranceOperator | None = None  # made when a record first fails: most never do
        self.pacer = pacer_for(connector_config, self.counters, plane.timers)  # None: no rate limit

    @property
    def operator(self) -> ToleranceOperator:
        """The task's error handler (``errors.*``), with its reporters."""
        if self._operator is None:
            self._operator = ToleranceOperator(
                self.policy,
                connector=self.connector,
                task=self.task_id,
                reporters=self._reporters(),
                stopping=self.control.stopping,
                metrics=self.counters.errors,
            )
        return self._operator

    @property
    def converters(self) -> TaskConverters:
        if self._converters is None:
            converters = TaskConverters.build(self.config, self.plane.worker)
            for role, converter in (
                ("key", converters.key),
                ("value", converters.value),
                ("header", converters.header),
            ):
                try:
                    require(
                        qualified_name(type(converter)),
                        plugin_version(type(converter)),
                        self.config.get(f"{role}.converter.plugin.version"),
                    )
                except ValueError as exc:  # KIP-891
                    converters.close()
                    raise ConfigException(str(exc)) from None
            self._converters = converters
            for role, converter in (
                ("key", self._converters.key),
                ("value", self._converters.value),
                ("header", self._converters.header),
            ):
                self._attach(converter, converter=role)
        return self._converters

    def _require_versions(self) -> None:
        """KIP-891: each transformation and predicate is the version its ``plugin.version`` asks for."""
        try:
            for stage in self.chain.stages:
                for kind, plugin, alias in (
                    ("transforms", stage.transformation, stage.alias),
                    ("predicates", stage.predicate, stage.predicate_alias),
                ):
                    if plugin is not None and alias is not None:
                        cls = type(plugin)
                        require(
                            qualified_name(cls),
                            plugin_version(cls),
                            self.config.get(f"{kind}.{alias}.{PLUGIN_VERSION}"),
                        )
        except ValueError as exc:
            self.chain.close()
            raise ConfigException(str(exc)) from None

    def _attach(self, plugin: object, **tags: str) -> None:
        """Give a monitorable plugin its ``PluginMetrics`` with Connect's tags (KIP-877)."""
        registry = self.plane.metrics.plugins if self.plane.metrics is not None else None
        handle = attach(plugin, registry, {"connector": self.connector, "task": str(self.task_id), **tags})
        if handle is not None:
            self._metrics_handles.append(handle)

    def _attach_metrics(self) -> None:
        """The task (before ``initialize``/``start``), then its transformations and predicates (after
        ``configure``, as Connect wraps them); a predicate shared by several stages is attached once."""
        try:
            self._attach(self.task)
            seen: set[int] = set()
            for stage in self.chain.stages:
                self._attach(stage.transformation, transformation=stage.alias or "")
                if stage.predicate is not None and id(stage.predicate) not in seen:
                    seen.add(id(stage.predicate))
                    self._attach(stage.predicate, predicate=stage.predicate_alias or "")
        except BaseException:
            self._close_metrics()
            raise

    def _close_metrics(self) -> None:
        handles, self._metrics_handles = self._metrics_handles, []
        for handle in handles:
            handle.close()

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

    def runs_here(self) -> bool:
        """Whether this worker still runs this task (``DataPlane.runs_task``)."""
        return self.plane.runs_task(self.connector, self.task_id)

    async def withheld(self) -> bool:
        """True when this worker no longer runs the task: cut off from its group (KAFKA-9184), or
        the task was revoked. Nothing more is written; this returns once the herder stops the task (or
        the group answers again before the cut-off took effect). A worker resuming after a long pause
        (SIGSTOP) asks this before handing what it had read to ``put`` or the producer: the group has
        given the work to another."""
        runs_here, control = self.runs_here, self.control
        if runs_here():
            return False
        log.info(  # a revoked task meets it too, on its way to the stop
            "task.writes_withheld",
            connector=self.connector,
            task=self.task_id,
            reason="this worker no longer runs the task (cut off from its group, or the task moved): "
            "it writes nothing more",
        )
        never: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        try:
            while not control.stopping() and not runs_here():
                await control.park_on(never, _WITHHELD_CHECK_S)
        finally:
            never.cancel()
        return not runs_here()

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
        self._close_metrics()

    def release(self) -> None:
        """Close converters and transformations after the task stopped (Connect's ``doClose``)."""
        self._close_metrics()
        closers = [self.chain.close] + ([self._converters.close] if self._converters is not None else [])
        for closer in closers:
            try:
                closer()
            except Exception as exc:  # plugin code: logged, the task still closes
                log.warning("task.close_plugin_failed", task=self.task_id, error=repr(exc))
