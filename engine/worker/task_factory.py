"""What a task gets when it (re)starts: its runner, context, data loop and Spark handle.

Kafka's ``Worker.startTask`` makes this choice (``WorkerSinkTask``, ``WorkerSourceTask`` or
``ExactlyOnceWorkerSourceTask``); here the connector's actor asks one ``TaskFactory`` per connector.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Mapping
from functools import partial
from typing import Any

import structlog

from engine.api.context import SinkTaskContext, SourceTaskContext, TaskContext
from engine.api.task import SinkTask, SourceTask, Task
from engine.config.worker import WorkerConfig
from engine.errors import ConfigError
from engine.plugins.classes import ClassNotFound, import_class, qualified_name
from engine.plugins.loading import task_twin
from engine.spark import JobOwner, TaskSpark
from engine.spark.supervisor import SparkSupervisor
from engine.storage.base import OffsetStore
from engine.tolerance.config import ERROR_DEFAULTS, RETRY_DELAY_MAX, RETRY_TIMEOUT
from engine.worker.data_plane import DataPlane
from engine.worker.exactly_once_loop import ExactlyOnceSourceLoop
from engine.worker.report import ReportSink
from engine.worker.sink_loop import SinkLoop
from engine.worker.source_loop import SourceLoop
from engine.worker.task_host.process_runner import ProcessTaskRunner
from engine.worker.task_loop import TaskControl, TaskLoop
from engine.worker.task_runner import MakeLoop, TaskRunner
from states import TargetState

Spawn = Callable[[Coroutine[Any, Any, None], str], asyncio.Task[None]]

# the built-in Spark sink's tasks stay in the worker's process: they share its SparkSession
_SPARK_TASKS = "engine.connectors.spark_sink."

log = structlog.get_logger(component="worker")


def _int_or(raw: str | None, default: int) -> int:
    try:
        return int(raw) if raw is not None and raw.strip() else default
    except ValueError:
        return default


def load_task_class(name: str) -> type[Task]:
    """The class a task config's ``task.class`` names; a ``ConfigError`` (task FAILED) otherwise."""
    try:
        cls = import_class(name, strict=True)
    except ClassNotFound as exc:
        twin = task_twin(name)  # a Java task class (configs Java Connect wrote) with a Python twin
        if twin is not None:
            return twin
        raise ConfigError(
            f"Couldn't instantiate task class {name}: {exc.error if exc.error is not None else exc}"
        ) from exc
    if not issubclass(cls, Task):
        raise ConfigError(f"Couldn't instantiate task class {name}: it is not a Task subclass")
    return cls


class TaskFactory:
    """Builds one connector's task runners; every Spark handle it gives out is a new generation."""

    def __init__(
        self,
        connector: str,
        *,
        worker: WorkerConfig,
        offsets: OffsetStore,
        data: DataPlane | None,
        spawn: Spawn,
    ) -> None:
        self.connector = connector
        self._worker = worker
        self._offsets = offsets
        self._data = data
        self._spawn = spawn
        self._spark_generation = 0

    def runner(
        self,
        n: int,
        task_cls: type[Task],
        config: dict[str, str],
        connector_config: Mapping[str, str],
        target: TargetState,
        report: ReportSink,
        *,
        incarnation: str | None = None,
    ) -> TaskRunner | ProcessTaskRunner:
        plane = self._data
        if plane is not None and plane.hosts is not None and self._in_a_process(task_cls, plane):
            return ProcessTaskRunner(
                self.connector,
                n,
                qualified_name(task_cls),
                config,
                dict(connector_config),
                target,
                report,
                hosts=plane.hosts,
                plane=plane,
                incarnation=incarnation,
            )
        # partials of bound methods rather than closures: a worker holds one set per task for the
        # task's lifetime, and a closure costs a function, a cell per free variable and their tuple
        return TaskRunner(
            self.connector,
            n,
            task_cls,
            config,
            target,
            partial(self._context, task_cls, n, connector_config, incarnation),
            report,
            self._loop(n, task_cls, connector_config),
            self._spark_canceller(n),
        )

    @staticmethod
    def _in_a_process(task_cls: type[Task], plane: DataPlane) -> bool:
        """Whether a task runs in a task host (``task.processes`` > 0). Not: tasks of the Spark sink (they
        share the worker's one SparkSession), and tasks with no data loop."""
        if issubclass(task_cls, SinkTask):
            return not task_cls.__module__.startswith(_SPARK_TASKS)
        return issubclass(task_cls, SourceTask)

    def _context(
        self,
        task_cls: type[Task],
        n: int,
        connector_config: Mapping[str, str],
        incarnation: str | None,
        config: dict[str, str],
    ) -> TaskContext:
        context: TaskContext
        if issubclass(task_cls, SinkTask):
            context = SinkTaskContext(config, incarnation=incarnation)
        else:
            context = SourceTaskContext(
                config, offset_reader=self._offsets.reader(self.connector), incarnation=incarnation
            )
        context.spark = self._task_spark(n, connector_config)
        return context

    def _task_spark(self, n: int, connector_config: Mapping[str, str]) -> TaskSpark | None:
        """This task generation's handle on the worker's Spark (``context.spark``); None without a data plane."""
        plane = self._data
        if plane is None or plane.spark is None:
            return None
        self._spark_generation += 1
        return TaskSpark(
            plane.spark,
            JobOwner(self.connector, n, self._spark_generation),
            retry_timeout_ms=_int_or(connector_config.get(RETRY_TIMEOUT), ERROR_DEFAULTS[RETRY_TIMEOUT]),
            retry_delay_max_ms=_int_or(
                connector_config.get(RETRY_DELAY_MAX), ERROR_DEFAULTS[RETRY_DELAY_MAX]
            ),
        )

    def _spark_canceller(self, n: int) -> Callable[[], None] | None:
        """Cancel the task's running Spark jobs (all generations) at once, off the caller's path.

        Only jobs already started (or waiting for the session) are cancelled: the task's own
        stop-time commit, which starts a job after this, runs to completion. While Spark is still
        starting, the task's later jobs are refused instead, so a stop never waits out the start-up.
        """
        plane = self._data
        if plane is None or plane.spark is None:
            return None
        return partial(self._interrupt_spark, plane.spark, n)

    def _interrupt_spark(self, supervisor: SparkSupervisor, n: int) -> None:
        if supervisor.running(self.connector) or supervisor.starting:
            self._spawn(self._cancel_spark(supervisor, n), f"spark-cancel:{self.connector}-{n}")

    async def _cancel_spark(self, supervisor: SparkSupervisor, n: int) -> None:
        try:
            await supervisor.cancel((self.connector, n))
        except Exception as exc:  # best effort: the task's stop still proceeds
            log.warning("task.spark_cancel_failed", task=n, error=repr(exc))

    def _loop(self, n: int, task_cls: type[Task], connector_config: Mapping[str, str]) -> MakeLoop | None:
        """The data loop for a task, or None in an engine without a data plane (lifecycle only)."""
        plane = self._data
        if plane is None:
            return None
        loop_cls: type[TaskLoop]
        if issubclass(task_cls, SinkTask):
            loop_cls = SinkLoop
        elif issubclass(task_cls, SourceTask):
            loop_cls = ExactlyOnceSourceLoop if plane.settings.exactly_once else SourceLoop
        else:
            return None
        return partial(self._make_loop, loop_cls, n, plane, connector_config)

    def _make_loop(
        self,
        loop_cls: type[TaskLoop],
        n: int,
        plane: DataPlane,
        connector_config: Mapping[str, str],
        task: Task,
        context: TaskContext,
        control: TaskControl,
    ) -> TaskLoop:
        """Built when the task has started (``TaskRunner._start``), with the config's providers resolved then."""
        return loop_cls(
            self.connector,
            n,
            task,
            context,
            self._worker.transformer.resolve(dict(connector_config)),
            plane,
            control,
        )
