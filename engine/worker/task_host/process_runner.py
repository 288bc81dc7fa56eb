"""The worker's stand-in for one task that runs in a task host: the ``TaskRunner`` the actor sees.

It asks a host to start the task, forwards target changes and the final stop, and re-emits the
host's reports as its own. The deletion contract holds across the pipe: ``StopTask(deleted=True)``
is sent once, on a deletion only, and the host's ``TaskRunner`` calls ``stop(connector_deleted=True)``.
A host that dies fails the task with the signal or exit code; a task that overruns its graceful
stop is killed with its host when it is alone there.
"""

from __future__ import annotations

import structlog

from engine.observability.connect_metrics import CounterValues, TaskCounters
from engine.worker.data_plane import DataPlane
from engine.worker.report import Report, ReportSink
from engine.worker.runner import Runner
from engine.worker.task_host.pool import TaskHost, TaskHosts
from engine.worker.task_host.protocol import Abandon, Retarget, StartTask, StopTask
from states import TargetState

log = structlog.get_logger(component="worker")


class TaskProcessExited(Exception):
    """The task's host process ended while the task ran (the message names the signal or exit code)."""


class ProcessTaskRunner(Runner):
    """One task instance run by a task host; its lifecycle stays with the worker's actor."""

    def __init__(
        self,
        connector: str,
        task: int,
        task_class: str,
        config: dict[str, str],
        connector_config: dict[str, str],
        target: TargetState,
        report: ReportSink,
        *,
        hosts: TaskHosts,
        plane: DataPlane,
        incarnation: str | None,
    ) -> None:
        super().__init__(f"task:{connector}-{task}", report)
        self.connector = connector
        self.task = task
        self.task_class = task_class
        self.config = config
        self.target = target
        self._connector_config = connector_config
        self._incarnation = incarnation
        self._hosts = hosts
        self._plane = plane
        self._deleted = False
        self._host: TaskHost | None = None
        self._key = 0
        self._stopped = False  # the host's runner finished
        self._exit: str | None = None  # why the host died under the task
        self._counters: TaskCounters | None = None

    @property
    def host_pid(self) -> int | None:
        """The task's host process (tests kill it; logs name it)."""
        return None if self._host is None else self._host.pid

    def transition_to(self, target: TargetState) -> None:
        self.target = target
        self.wake()

    def request_stop_for_deletion(self) -> None:
        """Ask for the final ``stop(connector_deleted=True)`` in the host, without waiting."""
        self._deleted = True
        self.request_stop()

    async def shutdown(self, timeout: float) -> bool:
        """As ``Runner.shutdown``; a task past its graceful stop is killed: its host with it when alone."""
        if await super().shutdown(timeout):
            return True
        host = self._host
        if host is not None and not host.exited:
            if set(host.tasks) <= {self._key}:
                log.warning(
                    "task.process_killed",
                    connector=self.connector,
                    task=self.task,
                    pid=host.pid,
                    reason="the task did not stop within task.shutdown.graceful.timeout.ms",
                )
                host.kill()
            else:
                host.send(Abandon(self._key))
                host.leave(self._key)
        return False

    # ---- HostedTask: what the host tells us --------------------------------------------------

    def on_report(self, trigger: str, trace: str | None) -> None:
        if not self.abandoned:
            self._report(Report(self, trigger, trace))

    def on_stopped(self) -> None:
        self._stopped = True
        self.wake()

    def on_counters(self, values: CounterValues) -> None:
        if self._counters is None:
            self._counters = self._plane.task_started(self.connector, self.task, values[0])
        self._counters.set_values(values)

    def on_host_exit(self, cause: str) -> None:
        self._exit = cause
        self.wake()

    # ---- the body ----------------------------------------------------------------------------

    async def _body(self) -> None:
        try:
            await self._run()
        finally:
            if self._host is not None and not self._host.exited:
                self._host.leave(self._key)
            if self._counters is not None:
                self._plane.task_stopped(self.connector, self.task, self._counters)

    async def _run(self) -> None:
        if self.stopping():
            return
        self._host, self._key = await self._hosts.place(self)
        offsets = self._hosts.offsets
        self._host.send(
            StartTask(
                self._key,
                self.connector,
                self.task,
                self.task_class,
                self.config,
                self._connector_config,
                self.target.value,
                self._incarnation,
                [(p, o) for p in offsets.partitions(self.connector) if (o := offsets.get(self.connector, p))],
            )
        )
        log.info("task.placed", connector=self.connector, task=self.task, pid=self._host.pid)
        sent = self.target
        while not self.stopping() and self._exit is None:
            if self.target is not sent:
                self._host.send(Retarget(self._key, (sent := self.target).value))
            await self._wait()
        if self._exit is not None and not self.stopping():
            self._host_died()
            return
        self._host.send(StopTask(self._key, self._deleted))
        while not self._stopped and self._exit is None:
            await self._wait()
        if not self._stopped and self._exit is not None and self._deleted:
            log.warning("task.deletion_stop_lost", connector=self.connector, task=self.task, cause=self._exit)

    def _host_died(self) -> None:
        """The host ended under a running task: FAILED with the cause; nothing is left to stop."""
        assert self._exit is not None
        log.error("task.failed", connector=self.connector, task=self.task, error=self._exit)
        self.report("fail", TaskProcessExited(self._exit))
