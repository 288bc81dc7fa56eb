"""One connector's actor: applies its events one at a time and owns its lifecycle state.

Every change to a connector (config-log records, runner reports, context requests) arrives in
its mailbox, so the connector's lifecycles are only ever moved by this one coroutine
(``docs/ARCHITECTURE.md``, "Single writer"). Different connectors' actors run concurrently.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

import structlog

from engine.api._invoke import invoke
from engine.api.connector import Connector, SinkConnector
from engine.api.context import (
    ConnectorContext,
    SinkConnectorContext,
    SourceConnectorContext,
)
from engine.api.errors import ConnectException
from engine.api.task import Task
from engine.config.providers import reverse_transform
from engine.config.secrets import hide
from engine.configlog.snapshot import (
    ConnectorConfigured,
    ConnectorRemoved,
    RestartRequested,
    TargetStateChanged,
    TaskRestartRequested,
    TasksCommitted,
)
from engine.errors import ConfigError, EngineError, ForwardingFailed, IllegalTransition, trace_of
from engine.herder.activity import Activity
from engine.herder.actor_mailbox import Mailbox
from engine.herder.auto_restart import AutoRestarts, Unit
from engine.herder.deletion import ConnectorDeletion, DeletionServices
from engine.herder.messages import (
    AwaitStarted,
    Boot,
    FromLog,
    Marker,
    Message,
    RaisedError,
    Reconcile,
    Reconfigure,
    RestartDue,
    RestartReset,
    RunCleanup,
    Shutdown,
)
from engine.herder.restart_policy import NEVER_RESTART, RestartPolicy
from engine.plugins.classes import qualified_name
from engine.plugins.discovery import UNDEFINED_VERSION, plugin_version
from engine.plugins.loading import connector_type, load_connector_class
from engine.plugins.versions import require
from engine.spark.supervisor import JobOwner
from engine.spark.task_spark import TaskSpark
from engine.storage.status import Status
from engine.worker.connector_runner import ConnectorRunner, InstanceState
from engine.worker.report import Report
from engine.worker.runner import Runner
from engine.worker.task_factory import TaskFactory, load_task_class
from engine.worker.task_host.process_runner import ProcessTaskRunner
from engine.worker.task_runner import TaskRunner
from states import ConnectorLifecycle, ConnectorState, TargetState, TaskLifecycle, TransitionRecord
from states import IllegalTransition as StatesIllegalTransition

if TYPE_CHECKING:
    from engine.herder.timers import Timers
    from engine.observability.metrics import EngineMetrics
    from engine.worker.data_plane import DataPlane
    from states.lifecycle import Lifecycle

log = structlog.get_logger(component="herder")


_FORWARD_BACKOFF_S = 0.25
_FORWARD_BACKOFF_MAX_S = 60.0


class ActorServices(DeletionServices, Protocol):
    """What an actor needs from the herder that owns it."""

    data: DataPlane | None
    timers: Timers
    metrics: EngineMetrics
    activity: Activity

    def spawn(self, coro: Coroutine[Any, Any, None], name: str) -> asyncio.Task[None]: ...

    def wake(self, actor: ConnectorActor) -> None:
        """A message is being posted to ``actor``: make sure a coroutine runs it."""

    async def submit_task_configs(self, connector: str, configs: list[dict[str, str]]) -> None: ...

    @property
    def distributed(self) -> bool: ...

    def owns_connector(self, connector: str) -> bool: ...

    def owns_task(self, connector: str, task: int) -> bool: ...

    def post(self, connector: str, message: Message) -> None: ...

    def post_threadsafe(self, connector: str, message: Message) -> None: ...

    def published(self, record: TransitionRecord, trace: str | None) -> None: ...

    def applied(self, connector: str, offset: int) -> None: ...


@dataclass
class TaskSlot:
    lifecycle: TaskLifecycle
    runner: TaskRunner | ProcessTaskRunner | None = None


class ConnectorActor:
    """The single writer of one connector's observed state.

    Its public methods (``fire``, ``stop_tasks``, ``close_round``, ``incarnate``, ``connector_spark``)
    are the port its deletion (``ConnectorDeletion``) works through, always inside this actor's coroutine.
    """

    def __init__(self, name: str, services: ActorServices) -> None:
        self.name = name
        self._s = services
        self.mailbox = Mailbox(on_put=partial(services.wake, self))
        self.finished = False
        self.config: dict[str, str] = {}
        self.target = TargetState.STARTED
        self.cls: type[Connector] | None = None
        self.lifecycle: ConnectorLifecycle | None = None
        self.runner: ConnectorRunner | None = None
        self.task_configs: tuple[dict[str, str], ...] = ()
        self.applied_config: dict[str, str] | None = None
        self.incarnation: str | None = None  # which creation of the name this actor runs (from the log)
        # callers waiting until the connector started and its tasks are configured (Kafka's standalone
        # herder answers a create only then); None while no such round is open
        self._round: list[asyncio.Future[None]] | None = None
        self._round_tasks: set[int] = set()  # tasks the open round waits to hear from (their first report)
        self.tasks: dict[int, TaskSlot] = {}
        # restart.policy=on-failure: FAILED units restarted after a backoff (timers post to this mailbox)
        self.policy: RestartPolicy = NEVER_RESTART
        self.restarts = AutoRestarts(name, services.timers, self.mailbox.put)
        self._forward_backoff_s = 0.0  # task configs the leader did not take: the next try's wait
        self.running = False  # a coroutine applies this actor's messages now (``ActorServices.wake``)
        self._task_factory = TaskFactory(
            name, worker=services.worker, offsets=services.offsets, data=services.data, spawn=services.spawn
        )
        self._report_sink = self._report  # one bound method shared by every runner of this actor
        self._deletion = ConnectorDeletion(self, services)

    # ---- the loop -------------------------------------------------------------------------

    async def run(self) -> None:
        """Apply messages until the mailbox is empty, the connector is destroyed or the worker shuts
        down. An idle actor keeps no coroutine: the next message posted starts one (``wake``), so a
        worker holding thousands of connectors keeps no asyncio task per quiet one."""
        with structlog.contextvars.bound_contextvars(connector=self.name):
            while not self.finished:
                message = self.mailbox.take()
                if message is None:
                    self.running = False  # nothing awaited from here on: the next post starts a new run
                    return
                try:
                    await self._handle(message)
                except EngineError as exc:
                    log.warning("herder.event_rejected", message=type(message).__name__, error=str(exc))
                finally:
                    if isinstance(message, (FromLog, Marker)):
                        self._s.applied(self.name, message.offset)

    def abandon_runners(self) -> None:
        self.restarts.clear()
        for runner in [self.runner, *(slot.runner for slot in self.tasks.values())]:
            if runner is not None:
                runner.abandoned = True

    @property
    def idle(self) -> bool:
        """No message to apply and none being applied."""
        return not self.running and not len(self.mailbox)

    def unit_runner(self, unit: str) -> Runner | None:
        """The current runner of ``unit`` (``connector`` or ``task-<n>``)."""
        if unit == "connector":
            return self.runner
        slot = self.tasks.get(int(unit.removeprefix("task-")))
        return None if slot is None else slot.runner

    def _launch(self, unit: str, runner: Runner) -> None:
        runner.on_active = partial(self._s.activity.runner_active, actor=self, unit=unit)
        runner.launch(self._s.spawn)

    async def _handle(self, message: Message) -> None:
        match message:
            case FromLog(event=ConnectorConfigured(config=config, target=target, incarnation=incarnation)):
                self.incarnate(incarnation)
                await self._configure(config, target)
            case FromLog(event=TargetStateChanged(target=target)):
                self._retarget(target)
            case FromLog(event=TasksCommitted(configs=configs)):
                await self._apply_task_configs(configs)
            case FromLog(event=RestartRequested(include_tasks=tasks, only_failed=failed)):
                await self._restart(tasks, failed)
            case FromLog(event=TaskRestartRequested(task=n)):
                await self._restart_task(n)
            case FromLog(event=ConnectorRemoved()):
                await self._deletion.destroy()
            case Report():
                await self._on_report(message)
            case Reconfigure(runner=runner) if runner is self.runner:
                await self._reconfigure()
            case RaisedError(runner=runner, error=error) if runner is self.runner and self.runner is not None:
                self.runner.fail(error)
            case Boot():
                await self._boot(message)
            case RunCleanup(record=record):
                await self._deletion.cleanup_only(record)
            case Shutdown():
                await self._shutdown()
            case Reconcile(done=done):
                try:
                    await self._reconcile()
                finally:
                    if not done.done():
                        done.set_result(None)
            case RestartDue(task=unit, token=token):
                await self._auto_restart(unit, token)
            case RestartReset(task=unit, token=token):
                if self.restarts.reset(unit, token):
                    self._rewrite_status(unit)
            case AwaitStarted(done=done):
                if self._round is None:
                    done.set_result(None)
                else:
                    self._round.append(done)

    # ---- transitions ----------------------------------------------------------------------

    async def fire(
        self, lifecycle: Lifecycle[Any], trigger: str, trace: str | None = None, *, write_status: bool = True
    ) -> TransitionRecord:
        """Take ``trigger`` on one of this connector's lifecycles: the only place its states change."""
        try:
            record = await lifecycle.fire(trigger)
        except StatesIllegalTransition as exc:
            raise IllegalTransition.from_states(exc) from None
        if self.policy.on_failure:
            self._restart_bookkeeping(record)
        if trace is not None:  # a status's trace never carries a provider-resolved value
            trace = hide(trace)
        if write_status:
            self._write_status(record, trace)
        self._s.published(record, trace)
        return record

    def _write_status(self, record: TransitionRecord, trace: str | None) -> None:
        status = self._s.status
        if record.to_state == ConnectorState.DESTROYED:
            if record.task is None:
                status.remove_connector(self.name)
            else:
                status.remove_task(self.name, record.task)
            return
        attempts, next_ms = self.restarts.fields(record.task) if self.policy.on_failure else (None, None)
        value = Status(
            record.to_state, self._s.worker.worker_id, self._s.generation, trace, attempts, next_ms
        )
        # UNASSIGNED is written safely (Connect's putSafe): a worker that let go of a unit must
        # not overwrite what its new owner already reported; so is any state of a unit it no longer
        # owns (a task failing as a worker cut off from its group stops it: KAFKA-9184)
        owned = (
            self._s.owns_connector(self.name)
            if record.task is None
            else self._s.owns_task(self.name, record.task)
        )
        safe = record.to_state == ConnectorState.UNASSIGNED or not owned
        if record.task is None:
            if safe:
                status.put_connector_safe(self.name, value)
            else:
                status.put_connector(self.name, value)
        elif safe:
            status.put_task_safe(self.name, record.task, value)
        else:
            status.put_task(self.name, record.task, value)

    async def _fire_if(self, lifecycle: Lifecycle[Any], trigger: str, *, unless: str) -> None:
        if lifecycle.state != unless:
            await self.fire(lifecycle, trigger)

    # ---- connector instance ---------------------------------------------------------------

    def incarnate(self, incarnation: str) -> None:
        """Every log line of this actor and of the runners it starts names the incarnation."""
        if incarnation and incarnation != self.incarnation:
            self.incarnation = incarnation
            structlog.contextvars.bind_contextvars(incarnation=incarnation)

    async def _configure(self, config: dict[str, str], target: TargetState) -> None:
        self.target = target
        self.restarts.clear()  # a new config (often the fix for a failure) starts the counts afresh
        if self.lifecycle is not None:
            await self._stop_connector()
        self.config = config
        self.policy = RestartPolicy.from_config(config)
        if self._s.owns_connector(self.name):
            self._round = self._round or []
            self._ensure_lifecycle()
            await self._start_connector()

    def close_round(self) -> None:
        """The connector started (or failed, or settled paused/stopped) and its tasks are configured."""
        self._round_tasks.clear()
        waiters, self._round = self._round, None
        for done in waiters or ():
            if not done.done():
                done.set_result(None)

    def _ensure_lifecycle(self) -> None:
        if self.lifecycle is None:
            # the state machine calls on_destroyed on entering DESTROYED: the deletion contract
            # runs as part of the destroy transition, never beside it
            self.lifecycle = ConnectorLifecycle(self.name, self._deletion.on_destroyed)

    async def _start_connector(self) -> None:
        assert self.lifecycle is not None
        try:
            self.cls = load_connector_class(self.config.get("connector.class", ""))
        except ConfigError as exc:
            # e.g. the class was uninstalled since the config was written: FAILED, no instance
            self.cls = None
            await self.fire(self.lifecycle, "fail", trace_of(exc))
            self.close_round()
            return
        try:
            require(
                qualified_name(self.cls),
                plugin_version(self.cls),
                self.config.get("connector.plugin.version"),
            )
        except ValueError as exc:  # KIP-891: the installed version is not the one asked for
            await self.fire(self.lifecycle, "fail", trace_of(ConfigError(str(exc))))
            self.close_round()
            return
        try:
            resolved = self._s.worker.transformer.resolve(self.config)  # re-read at every (re)start
        except ConfigError as exc:
            await self.fire(self.lifecycle, "fail", trace_of(exc))
            self.close_round()
            return
        self.runner = ConnectorRunner(
            self.name,
            self.cls,
            resolved,
            self.target,
            self._connector_context,
            self._report_sink,
            raw_config=self.config,
            plugin_metrics=self._s.metrics.connect.plugins,
        )
        self._s.metrics.connect.connector_started(
            self.name,
            qualified_name(self.cls),
            plugin_version(self.cls) or UNDEFINED_VERSION,
            connector_type(self.cls),
        )
        self._launch("connector", self.runner)

    def _connector_context(self, runner: ConnectorRunner) -> ConnectorContext:
        def reconfigure() -> None:
            self._s.post_threadsafe(self.name, Reconfigure(runner))

        def raise_error(exc: BaseException) -> None:
            self._s.post_threadsafe(self.name, RaisedError(runner, exc))

        context: ConnectorContext
        if issubclass(runner.cls, SinkConnector):
            context = SinkConnectorContext(
                runner.config,
                request_reconfiguration=reconfigure,
                raise_error=raise_error,
                incarnation=self.incarnation,
            )
        else:
            context = SourceConnectorContext(
                runner.config,
                offset_reader=self._s.offsets.reader(self.name),
                request_reconfiguration=reconfigure,
                raise_error=raise_error,
                incarnation=self.incarnation,
            )
        context.spark = self.connector_spark()
        return context

    def connector_spark(self) -> TaskSpark | None:
        """The connector's own handle on the worker's Spark (its jobs are task ``-1``'s)."""
        data = self._s.data
        if data is None or data.spark is None:
            return None
        return TaskSpark(data.spark, JobOwner(self.name, -1, 0))

    def _report(self, report: Report) -> None:
        self._s.post(self.name, report)

    async def _stop_connector(self) -> None:
        """Plain stop of the current instance (never deletion); the lifecycle goes UNASSIGNED."""
        runner, self.runner = self.runner, None
        if runner is not None and not await runner.shutdown(self._s.worker.connector_shutdown_timeout):
            log.error(
                "connector.shutdown_timed_out",
                reason=f"Connector '{self.name}' failed to properly shut down, has become unresponsive, "
                "and may be consuming external resources.",
            )
        if self.lifecycle is not None:
            await self._fire_if(self.lifecycle, "unassign", unless=ConnectorState.UNASSIGNED)

    def _retarget(self, target: TargetState) -> None:
        self.target = target
        if self.runner is not None:
            self.runner.transition_to(target)
        for slot in self.tasks.values():
            if slot.runner is not None:
                slot.runner.transition_to(target)
        if self.policy.on_failure:
            self._reschedule_failed()

    async def _on_report(self, report: Report) -> None:
        if report.runner is self.runner and self.lifecycle is not None:
            await self.fire(self.lifecycle, report.trigger, report.trace)
            if report.trigger in ("start", "resume"):
                if not await self._reconfigure():
                    self.close_round()  # nothing new to write: the tasks it has are its tasks
            elif report.trigger in ("fail", "pause", "stop"):
                self.close_round()
            return
        for n, slot in self.tasks.items():
            if slot.runner is report.runner:
                await self.fire(slot.lifecycle, report.trigger, report.trace)
                self._task_reported(n)
                return
        # a report from a runner that was replaced or abandoned: its news is stale

    # ---- task configs ---------------------------------------------------------------------

    async def _reconfigure(self) -> bool:
        """Ask the running connector for task configs; write them if anything changed
        (Kafka's ``AbstractHerder.taskConfigsChanged``). True when new task configs were written."""
        runner = self.runner
        if (
            runner is None
            or runner.state is not InstanceState.STARTED
            or self.target is not TargetState.STARTED
        ):
            return False
        assert runner.instance is not None
        try:
            max_tasks = int(runner.config.get("tasks.max", "1"))
            async with asyncio.timeout(self._s.worker.callback_timeout):
                task_class = await invoke(runner.instance.task_class)
                configs = await invoke(runner.instance.task_configs, max_tasks)
            configs = _check_task_configs(configs)
        except Exception as exc:  # user code: the connector fails
            runner.fail(exc)
            return False
        if len(configs) > max_tasks:
            message = (
                f"The connector {self.name} has generated {len(configs)} tasks, which is greater than "
                f"{max_tasks}, the maximum number of tasks it is configured to create. "
            )
            if self.config.get("tasks.max.enforce", "true").strip().lower() != "false":
                runner.fail(
                    ConnectException(
                        message + "This behaviour should be considered a bug and is "
                        "disallowed. If necessary, it can be permitted by reconfiguring "
                        "the connector with 'tasks.max.enforce' set to false; however, "
                        "this option will be removed in a future release of Kafka Connect."
                    )
                )
                return False
            log.warning("connector.too_many_tasks", reason=message)
        # written raw: values of keys whose raw connector value is a ${...} reference are put back
        augmented = reverse_transform(self.config, [self._augment(c, task_class) for c in configs])
        if augmented == list(self.task_configs) and self.applied_config == self.config:
            return False
        try:
            await self._s.submit_task_configs(self.name, augmented)
        except ForwardingFailed as exc:
            self._retry_reconfigure(runner, exc)
            return True  # its round ends when they are written, or when the connector stops
        self._forward_backoff_s = 0.0
        return True

    def _retry_reconfigure(self, runner: ConnectorRunner, exc: ForwardingFailed) -> None:
        """The leader did not take this follower's task configs (busy, away, a rebalance): ask the
        connector again after a backoff, 0.25 s doubling to 60 s, for as long as it runs here
        (Connect's ``reconfigureConnectorTasksWithExponentialBackoffRetries``)."""
        first = self._forward_backoff_s == 0.0
        self._forward_backoff_s = min(
            _FORWARD_BACKOFF_MAX_S, max(_FORWARD_BACKOFF_S, 2 * self._forward_backoff_s)
        )
        # a leader busy with thousands of them is no fault: an info line when a streak starts, a
        # warning once it has lasted minutes (each try at the longest wait), debug in between
        if self._forward_backoff_s == _FORWARD_BACKOFF_MAX_S:
            say = log.warning
        else:
            say = log.info if first else log.debug
        say(
            "connector.task_configs_retry",
            connector=self.name,
            in_s=self._forward_backoff_s,
            reason=str(exc),
        )
        self._s.timers.call_later(self._forward_backoff_s, lambda: self.mailbox.put(Reconfigure(runner)))

    def _augment(self, config: dict[str, str], task_class: type[Task]) -> dict[str, str]:
        # a twin of a Java task names the Java class, so its configs read the same to Java Connect and to us
        augmented = {
            **config,
            "task.class": getattr(task_class, "java_class", None) or qualified_name(task_class),
        }
        for key in ("topics", "topics.regex"):
            if self.cls is not None and issubclass(self.cls, SinkConnector) and key in self.config:
                augmented[key] = self.config[key]
        return augmented

    async def _apply_task_configs(self, configs: tuple[dict[str, str], ...]) -> None:
        """Standalone semantics: stop every task, drop removed ids, start every new config."""
        if configs and self.target is TargetState.STOPPED:
            # a reconfiguration that raced with stop: Connect refuses non-empty sets for STOPPED
            log.warning(
                "connector.task_configs_ignored",
                reason=f"Cannot submit non-empty set of task configs for stopped connector {self.name}",
            )
            self.close_round()
            return
        self.task_configs = configs
        self.applied_config = dict(self.config)
        await self.stop_tasks(list(self.tasks))
        for n in [n for n in self.tasks if n >= len(configs)]:
            slot = self.tasks.pop(n)
            await self.fire(slot.lifecycle, "destroy")
        started = [n for n in range(len(configs)) if self._s.owns_task(self.name, n)]
        if self._round is not None:
            self._round_tasks = set(started)
        for n in started:
            await self._start_task(n)
        if not self._round_tasks:
            self.close_round()

    def _task_reported(self, n: int) -> None:
        """A task's first news (running, paused or failed) after the round started it."""
        if n in self._round_tasks:
            self._round_tasks.discard(n)
            if not self._round_tasks:
                self.close_round()

    async def _start_task(self, n: int) -> None:
        slot = self.tasks.get(n)
        if slot is None:
            slot = self.tasks[n] = TaskSlot(TaskLifecycle(self.name, n))
        try:
            config = self._s.worker.transformer.resolve(self.task_configs[n])  # re-read at every (re)start
            task_cls = load_task_class(config.get("task.class", ""))
        except ConfigError as exc:
            slot.runner = None
            await self.fire(slot.lifecycle, "fail", trace_of(exc))
            self._task_reported(n)
            return
        slot.runner = self._task_factory.runner(
            n, task_cls, config, self.config, self.target, self._report_sink, incarnation=self.incarnation
        )
        self._launch(f"task-{n}", slot.runner)

    async def stop_tasks(self, ids: list[int], *, deleted: bool = False) -> list[asyncio.Task[None]]:
        """Stop tasks in parallel within one shared graceful window; abandon the stragglers.

        Returns the abandoned runners' tasks: a deletion tracks them until their ``stop`` returns.
        """
        runners = [(n, self.tasks[n].runner) for n in ids if n in self.tasks]
        live = [(n, r) for n, r in runners if r is not None]
        # Signal every task first, so they all stop concurrently, then wait for each against
        # one deadline: the parallel stop a gather gives, without a task per runner.
        for _, r in live:
            if deleted:
                r.request_stop_for_deletion()
            else:
                r.request_stop()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._s.worker.task_shutdown_timeout
        abandoned: list[asyncio.Task[None]] = []
        for n, r in live:
            if not await r.shutdown(max(0.0, deadline - loop.time())):
                log.error(
                    "task.shutdown_timed_out",
                    task=n,
                    reason="Graceful stop of task failed: the task is abandoned",
                )
                if r.body is not None:
                    abandoned.append(r.body)
        for n, _ in runners:
            slot = self.tasks[n]
            slot.runner = None
            if not deleted:
                await self._fire_if(slot.lifecycle, "unassign", unless=ConnectorState.UNASSIGNED)
        return abandoned

    # ---- restarts -------------------------------------------------------------------------

    async def _restart(self, include_tasks: bool, only_failed: bool) -> None:
        """Restart what runs here (in a cluster every worker reads the request and restarts its own)."""
        if self.lifecycle is None and not self.tasks:
            return
        if not include_tasks and not only_failed:
            if self.lifecycle is not None:
                await self._stop_connector()
                await self._start_connector()
            return
        restart_connector = self.lifecycle is not None and (
            not only_failed or self.lifecycle.state == ConnectorState.FAILED
        )
        task_ids = [
            n
            for n, s in self.tasks.items()
            if include_tasks and (not only_failed or s.lifecycle.state == "FAILED")
        ]
        await self._restart_units(restart_connector, task_ids)

    async def _restart_units(self, restart_connector: bool, task_ids: list[int]) -> None:
        """KIP-745's restart of the selected units here: each goes RESTARTING, then starts afresh.

        The path of ``POST /connectors/<c>/restart?includeTasks=...&onlyFailed=...`` and of the
        automatic restarts of ``restart.policy=on-failure``.
        """
        if restart_connector:
            assert self.lifecycle is not None
            runner, self.runner = self.runner, None
            if runner is not None:
                await runner.shutdown(self._s.worker.connector_shutdown_timeout)
            await self.fire(self.lifecycle, "restart")
        for n in task_ids:
            await self._stop_tasks_quietly(n)
            await self.fire(self.tasks[n].lifecycle, "restart")
        if restart_connector:
            await self._start_connector()
        for n in task_ids:
            await self._start_task(n)

    async def _stop_tasks_quietly(self, n: int) -> None:
        runner = self.tasks[n].runner
        self.tasks[n].runner = None
        if runner is not None:
            await runner.shutdown(self._s.worker.task_shutdown_timeout)

    async def _restart_task(self, n: int) -> None:
        if self._s.distributed and not self._s.owns_task(self.name, n):
            return  # the task's owner restarts it
        if n not in self.tasks or n >= len(self.task_configs):
            raise ConfigError(f"Unknown task: {self.name}-{n}")
        await self.stop_tasks([n])
        await self._start_task(n)

    # ---- automatic restarts (restart.policy=on-failure) -----------------------------------

    def _wanted_here(self, unit: Unit) -> bool:
        """Whether this worker may restart the unit by itself: the user wants it running, and it is ours."""
        if self.finished or self.target is not TargetState.STARTED:
            return False
        return self._s.owns_connector(self.name) if unit is None else self._s.owns_task(self.name, unit)

    def _restart_bookkeeping(self, record: TransitionRecord) -> None:
        """Every transition of a unit, before its status is written: schedule, arm a reset, or cancel."""
        unit = record.task
        if record.to_state == ConnectorState.FAILED:
            if self._wanted_here(unit):
                self.restarts.failed(unit, self.policy)
            else:
                self.restarts.left(unit)
        elif record.to_state == ConnectorState.RUNNING:
            self.restarts.running(unit, self.policy)
        elif record.to_state == ConnectorState.DESTROYED:
            self.restarts.forget(unit)
        else:
            self.restarts.left(unit)

    def _unit_lifecycle(self, unit: Unit) -> Lifecycle[Any] | None:
        if unit is None:
            return self.lifecycle
        slot = self.tasks.get(unit)
        return None if slot is None else slot.lifecycle

    def _reschedule_failed(self) -> None:
        """The target changed: FAILED units get a restart scheduled (STARTED) or lose theirs (paused, stopped)."""
        for unit in [None, *self.tasks]:
            lifecycle = self._unit_lifecycle(unit)
            if lifecycle is None or lifecycle.state != ConnectorState.FAILED:
                continue
            before = self.restarts.fields(unit)
            if self._wanted_here(unit):
                if before[1] is None:
                    self.restarts.failed(unit, self.policy)
            else:
                self.restarts.left(unit)
            if self.restarts.fields(unit) != before:
                self._rewrite_status(unit)

    def _rewrite_status(self, unit: Unit) -> None:
        """The unit's status again, same state and trace, with its restart fields as they are now."""
        lifecycle = self._unit_lifecycle(unit)
        status = self._s.status
        current = status.connector(self.name) if unit is None else status.tasks(self.name).get(unit)
        if lifecycle is None or current is None or current.state != lifecycle.state:
            return
        attempts, next_ms = self.restarts.fields(unit)
        value = replace(
            current,
            worker_id=self._s.worker.worker_id,
            generation=self._s.generation,
            restart_attempts=attempts,
            next_restart_ms=next_ms,
        )
        if unit is None:
            status.put_connector(self.name, value)
        else:
            status.put_task(self.name, unit, value)

    async def _auto_restart(self, unit: Unit, token: int) -> None:
        """A backoff passed: restart the unit if it is still FAILED, wanted and ours, as a REST restart would."""
        if not self.restarts.take_due(unit, token):
            return  # the unit moved on (restarted, paused, deleted, reconfigured) since it was scheduled
        lifecycle = self._unit_lifecycle(unit)
        if (
            not self.policy.on_failure
            or lifecycle is None
            or lifecycle.state != ConnectorState.FAILED
            or not self._wanted_here(unit)
            or (unit is not None and unit >= len(self.task_configs))
        ):
            return
        attempt = self.restarts.attempted(unit)
        kind = "connector" if unit is None else "task"
        self._s.metrics.auto_restarts.inc((kind,))
        log.info("connector.auto_restarting", task=unit, attempt=attempt)
        if unit is None:
            await self._restart_units(True, [])
        else:
            await self._restart_units(False, [unit])

    # ---- boot, shutdown, deletion ---------------------------------------------------------

    async def _boot(self, boot: Boot) -> None:
        self.config, self.target = boot.config, boot.target
        self.policy = RestartPolicy.from_config(boot.config)
        self.incarnate(boot.incarnation)
        self.task_configs = boot.tasks if boot.target is not TargetState.STOPPED else ()
        self.applied_config = boot.applied
        if self._s.owns_connector(self.name):
            self._ensure_lifecycle()
            await self._start_connector()
        for n in range(len(self.task_configs)):
            if self._s.owns_task(self.name, n):
                await self._start_task(n)

    async def _shutdown(self) -> None:
        self.restarts.clear()
        self.close_round()
        await self.stop_tasks(list(self.tasks))
        await self._stop_connector()
        self.finished = True

    # ---- distributed: ownership changed -----------------------------------------------------

    async def _reconcile(self) -> None:
        """Match what runs here to what the group assigned: plain stops for lost work, never deletion."""
        owns = self._s.owns_connector(self.name)
        if not self.config:  # no such connector (any more): its slot may carry a pending cleanup
            if owns:
                await self._deletion.cleanup_assigned()
            self.finished = not self.tasks and self.lifecycle is None
            return
        if not owns and self.lifecycle is not None:
            await self._stop_connector()
            self.lifecycle = None
            self.restarts.forget(None)  # its new owner restarts it, with its own count
        elif owns and self.lifecycle is None:
            self._ensure_lifecycle()
            await self._start_connector()
        lost = [n for n in self.tasks if not self._s.owns_task(self.name, n)]
        if lost:
            await self.stop_tasks(lost)
            for n in lost:
                del self.tasks[n]
                self.restarts.forget(n)
        for n in range(len(self.task_configs)):
            if n not in self.tasks and self._s.owns_task(self.name, n):
                await self._start_task(n)


def _check_task_configs(configs: object) -> list[dict[str, str]]:
    if not isinstance(configs, list) or not all(isinstance(c, dict) for c in configs):
        raise ConnectException("task_configs() must return a list of dicts")
    return [{str(k): str(v) for k, v in c.items()} for c in configs]
