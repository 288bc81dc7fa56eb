"""The embedded engine: ``async with Engine(config) as engine:`` and the calls users make on it."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import weakref
from collections.abc import Callable, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

import structlog

from engine import offsets_admin
from engine.config.worker import WorkerConfig
from engine.config.worker_keys import unknown_worker_keys
from engine.configlog.base import ConfigLog
from engine.configlog.factory import open_config_log
from engine.configlog.records import (
    ConfigRecord,
    ConnectorConfigRecord,
    ConnectorTombstone,
    PendingCleanupRecord,
    RestartRecord,
    TargetStateRecord,
    TargetStateTombstone,
    TaskCommitRecord,
    TaskRestartRecord,
)
from engine.converters.factory import check_worker_converters
from engine.distributed.mode import WorkerMode, worker_mode
from engine.errors import (
    ConfigError,
    ConnectorAlreadyExists,
    ConnectorNotFound,
    EngineNotRunning,
    Forbidden,
    TaskNotFound,
)
from engine.herder import waits
from engine.herder.connect_json import (
    StatesInfoJson,
    connector_info,
    restart_plan,
    state_info,
    states_info,
    task_state_info,
)
from engine.herder.deletion import DeletionOutcome
from engine.herder.herder import Herder
from engine.herder.runtime import Runtime
from engine.herder.timers import LoopTimers, Timers
from engine.herder.transition_feed import Subscription, TransitionFeed
from engine.observability.log_levels import LOG_LEVELS
from engine.observability.metrics import EngineMetrics
from engine.observability.request_stage import enter_stage
from engine.plugins.discovery import PluginRegistry, scan_plugin_path
from engine.plugins.loading import load_connector_class
from engine.plugins.reload import ReloadResult, connectors_using, reload_plugins
from engine.spark.metrics import prometheus_families
from engine.spark.settings import SparkSettings
from engine.spark.supervisor import SparkSupervisor
from engine.storage.base import OffsetStore, StatusStore
from engine.storage.factory import open_offset_store, open_status_store
from engine.topics.base import Topics
from engine.topics.factory import open_topics
from engine.topics.memory import MemoryTopics
from engine.validation.connector import checked_config
from engine.worker.data_plane import DataSettings
from engine.worker.sink_loop import group_id as sink_group_id
from states import TargetState

if TYPE_CHECKING:
    from engine.distributed.cluster import Cluster
    from engine.distributed.forwarding import RestClient
    from engine.distributed.member import MemberFactory

_log = structlog.get_logger(component="engine")


class Engine:
    """Runs connectors in this process; every call goes through the config log.

    With no config the log lives in memory. ``config.storage.file.filename`` makes it a durable
    file; ``bootstrap.servers`` (+ ``config.storage.topic``) makes it a Kafka topic.
    ``shutdown()`` is idempotent and safe before start: connectors and tasks get plain
    ``stop()``, never the deletion callbacks.
    """

    def __init__(
        self,
        worker_config: Mapping[str, str] | None = None,
        *,
        config_log: ConfigLog | None = None,
        offset_store: OffsetStore | None = None,
        topics: Topics | None = None,
        timers: Timers | None = None,
        status_store: StatusStore | None = None,
        membership: MemberFactory | None = None,
        rest_client: RestClient | None = None,
    ) -> None:
        """``config_log``/``offset_store``/``topics``/``status_store`` hand in stores that outlive this engine
        (tests, replays); ``timers`` is the clock auto-restart backoffs, rate-limit waits and the leader's
        rebalance delay run on (real time by default; scenarios and tests install a virtual one);
        ``membership`` and ``rest_client`` replace the broker's group and HTTP between workers (the
        scenario runner's in-process cluster)."""
        self.worker = WorkerConfig.parse(worker_config)
        for key, near in unknown_worker_keys(worker_config or {}):  # a typo starts a worker on defaults
            structlog.get_logger(component="engine").warning(
                "worker.unknown_key",
                key=key,
                did_you_mean=near,
                message=f"The configuration '{key}' was supplied but isn't a known config."
                + (f" Did you mean '{near}'?" if near else ""),
            )
        # plugin.path as the standalone worker's REST registry reads it: connectors, converters and SMTs
        # there are found by alias and dotted name however the engine is run (embedded, scenario, REST)
        scan_plugin_path(self.worker.get("plugin.path"))
        check_worker_converters(self.worker.raw)  # a typo stops the worker here, not every task later
        self._timers: Timers = timers if timers is not None else LoopTimers()
        # standalone, or (group.id) a member of a distributed cluster
        self.mode: WorkerMode = worker_mode(
            self.worker, lambda: self.herder, self._timers, membership=membership, rest_client=rest_client
        )
        self.data_settings = DataSettings.parse(self.worker.raw)
        self.topics: Topics = topics if topics is not None else open_topics(self.worker)
        if self.data_settings.task_processes > 0 and isinstance(self.topics, MemoryTopics):
            # in-process topics live in this process's memory: a task host could not reach them
            structlog.get_logger(component="engine").info(
                "engine.task_processes_ignored",
                task_processes=self.data_settings.task_processes,
                reason="task.processes needs Kafka topics (bootstrap.servers): in-process topics cannot "
                "cross processes, so tasks run in the worker's process",
            )
            self.data_settings = dataclasses.replace(self.data_settings, task_processes=0)
        # one per engine; nothing Spark-related happens until a task first runs a job
        self.spark = SparkSupervisor(SparkSettings.from_worker(self.worker.raw))
        self._log: ConfigLog = config_log if config_log is not None else open_config_log(self.worker)
        client_id = f"connect-engine-{self.worker.worker_id}"
        own = self.worker.kafka.own()  # the worker's own clients: the top-level security settings
        self._status = (
            status_store
            if status_store is not None
            else open_status_store(self.worker.raw, client_id=client_id, client_args=own)
        )
        self._offsets = (
            offset_store
            if offset_store is not None
            else open_offset_store(self.worker.raw, client_id=client_id, client_args=own)
        )
        # this engine's own: several engines count apart; a cluster member reports only its own work
        self.metrics = EngineMetrics(self._status, worker_id=self.mode.reported_worker_id)
        self.mode.report_to(self.metrics)
        self.metrics.extra.append(lambda: prometheus_families(self.spark.metrics))
        self._feed = TransitionFeed()  # here, not in the herder, so subscribers can see the boot
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()
        self._states_json = StatesInfoJson()  # GET /connectors?expand=status's parts, kept encoded
        self._runtime = Runtime(
            self.worker,
            self.mode,
            self.data_settings,
            config_log=self._log,
            status=self._status,
            offsets=self._offsets,
            topics=self.topics,
            spark=self.spark,
            metrics=self.metrics,
            feed=self._feed,
            timers=self._timers,
        )

    # ---- lifecycle of the engine itself ---------------------------------------------------

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.shutdown()

    async def start(self) -> None:
        """Open the log and stores, replay the log, and return once every connector is booted
        (distributed: once the worker got its first assignment)."""
        await self._runtime.start()

    async def run(self) -> None:
        """Run until cancelled or ``shutdown()``; for programs whose whole job is the engine."""
        await self._runtime.run()

    async def shutdown(self) -> None:
        await self._runtime.shutdown()

    async def abort(self) -> None:
        """Stop at once, as a killed process would: no ``stop()``, no status writes, nothing flushed.

        For crash tests: whatever the config log holds is all a restarted engine will know.
        """
        await self._runtime.abort()

    @property
    def startup_stage(self) -> tuple[str, int]:
        """What ``start()`` is doing, and since when (epoch ms): ``/health``'s "starting" answer names it."""
        return self._runtime.startup_stage

    @property
    def cluster(self) -> Cluster | None:
        """Distributed: the group as this worker sees it (what it owns, who leads); None standalone."""
        return self.mode.cluster

    async def settled(
        self, *, parked: Callable[[str, str], bool] = lambda connector, unit: False, timeout: float = 30.0
    ) -> None:
        """Return once every record is applied and no connector or task has work in flight.

        ``parked(connector, unit)`` (unit ``"connector"`` or ``"task-N"``) names callbacks stuck
        on purpose, such as a test's injected block, so they do not keep the engine from settling.
        Raises ``SettleTimeout`` after ``timeout``.
        """
        await waits.settled(self.herder, parked, timeout)

    @property
    def herder(self) -> Herder:
        """The running herder; ``EngineNotRunning`` before ``start()`` and after the engine stopped."""
        return self._runtime.herder

    @property
    def skipped_records(self) -> int:
        """Config-log records skipped as malformed since start."""
        return self.herder.skipped_records

    # ---- writing intent -------------------------------------------------------------------

    def _lock(self, name: str) -> asyncio.Lock:
        lock = self._locks.get(name)
        if lock is None:
            lock = asyncio.Lock()
            self._locks[name] = lock
        return lock

    async def _write(self, name: str, records: Sequence[ConfigRecord]) -> None:
        enter_stage(f"writing a config for connector {name} to the config topic")
        herder = self.herder
        offset = await herder.append(list(records))
        await herder.wait_applied(name, offset)

    def _require(self, name: str) -> dict[str, str]:
        config = self.herder.snapshot.connectors.get(name)
        if config is None:
            raise ConnectorNotFound(name)
        return config

    async def _checked_config(self, name: str, config: Mapping[str, str]) -> dict[str, str]:
        exactly_once = self.data_settings.exactly_once
        mode_check = self.mode.check_connector_config
        return await checked_config(
            name, config, self.worker, exactly_once=exactly_once, mode_check=mode_check
        )

    def _log_written(self, event: str, name: str, config: Mapping[str, str]) -> None:
        """One INFO line per connector created or updated, as Connect's herder logs each (an operator
        sees what changed, and when, among the lifecycle lines that follow)."""
        _log.info(
            event, connector=name, connector_class=config.get("connector.class"), worker=self.worker.worker_id
        )

    async def create_connector(
        self,
        name: str,
        config: Mapping[str, str],
        initial_state: str | TargetState | None = None,
        *,
        wait_started: bool = True,
        initial_offsets: Sequence[Any] | None = None,
        raise_failed_start: bool = False,
    ) -> dict[str, Any]:
        """Create a connector (RUNNING, or ``initial_state`` RUNNING/PAUSED/STOPPED); returns its info once
        it started (or failed) and its tasks are configured, so its status is there to read.
        ``wait_started=False`` returns once the config is written (scenarios settle instead).

        ``initial_offsets`` (KIP-995): KIP-875 offsets the connector starts from, checked as
        ``PATCH /offsets`` checks them before anything is written; the connector is written STOPPED,
        its offsets set, then moved to ``initial_state``. The info then has ``offsets_status``.

        ``raise_failed_start``: standalone, a start that failed raises ``ConnectorStartFailed`` (REST's
        500) instead of returning the info; the connector stays written, FAILED."""
        target = _target(initial_state)
        self.mode.check_create()
        checked = await self._checked_config(name, config)
        async with self._lock(name):
            if name in self.herder.snapshot.connectors:
                raise ConnectorAlreadyExists(name)
            await self.herder.cleanups.previous_done(name)
            initial = (
                None
                if initial_offsets is None
                else await offsets_admin.check_initial(
                    load_connector_class(checked.get("connector.class", "")), name, checked, initial_offsets
                )
            )
            records: list[ConfigRecord] = []
            if initial is not None:
                records.append(TargetStateRecord(name, TargetState.STOPPED))
            elif target is not None:
                records.append(TargetStateRecord(name, target))
            records.append(ConnectorConfigRecord(name, checked))
            await self._write(name, records)
            self._log_written("connector.created", name, checked)
            if initial is not None:
                await offsets_admin.write_initial(
                    initial, self._offsets, self.topics, name, sink_group_id(name, checked)
                )
                if target is not TargetState.STOPPED:
                    await self._write(name, [TargetStateRecord(name, target or TargetState.STARTED)])
        if wait_started:  # outside the lock: a delete may come in while it starts, as in Connect
            await self.mode.started(name, self.worker.callback_timeout)
        info = await self.connector_info(name)
        if initial is not None:
            info["offsets_status"] = initial.message
        if raise_failed_start:
            self.mode.check_started(name)
        return info

    async def put_connector_config(
        self,
        name: str,
        config: Mapping[str, str],
        *,
        wait_started: bool = True,
        raise_failed_start: bool = False,
    ) -> dict[str, Any]:
        """Create or replace a connector's config; the target state is left as it is. Returns once the
        connector (re)started and its tasks are configured, unless ``wait_started=False``;
        ``raise_failed_start`` as ``create_connector``'s."""
        _, info = await self.put_connector_config_created(
            name, config, wait_started=wait_started, raise_failed_start=raise_failed_start
        )
        return info

    async def put_connector_config_created(
        self,
        name: str,
        config: Mapping[str, str],
        *,
        wait_started: bool = True,
        raise_failed_start: bool = False,
    ) -> tuple[bool, dict[str, Any]]:
        """``put_connector_config``, also saying whether it created the connector (Connect's
        ``Herder.Created``: REST answers 201 then, 200 for an update). Whether it creates and the info
        it returns are decided under the connector's lock, as Connect's herder serialises a PUT with a
        DELETE: a DELETE that comes after cannot turn the answer into a 404."""
        self.mode.check_leader_write()
        checked = await self._checked_config(name, config)
        async with self._lock(name):
            incarnation = self.herder.snapshot.incarnations.get(name)
            created = name not in self.herder.snapshot.connectors
            if created:
                await self.herder.cleanups.previous_done(name)
                incarnation = None  # a creation: its record's offset becomes the incarnation
            await self._write(name, [ConnectorConfigRecord(name, checked, incarnation)])
            self._log_written("connector.created" if created else "connector.updated", name, checked)
            info = await self.connector_info(name)
        if wait_started:
            await self.mode.started(name, self.worker.callback_timeout)
            with contextlib.suppress(ConnectorNotFound):  # deleted meanwhile: the answer is the write's
                info = await self.connector_info(name)
        if raise_failed_start:
            self.mode.check_started(name)
        return created, info

    async def pause_connector(self, name: str) -> None:
        """Ask for PAUSED; returns once the connector's actor has applied the request (its runners are told),
        not once they are paused.

        As in Connect, where ``PUT /pause`` answers 202 Accepted: the connector and each task then pause
        on their own and report PAUSED (a task busy in ``poll`` or ``put`` first finishes that call), so
        the state follows shortly. ``await engine.wait_for_state(name, "PAUSED", tasks=n)`` waits for it.
        """
        await self._set_target(name, TargetState.PAUSED)

    async def resume_connector(self, name: str) -> None:
        """Ask for RUNNING again; returns as ``pause_connector`` does, before the tasks report RUNNING
        (``wait_for_state(name, "RUNNING", tasks=n)`` waits for that)."""
        await self._set_target(name, TargetState.STARTED)

    async def stop_connector(self, name: str) -> None:
        """STOPPED: every task is shut down and its config removed (0 tasks), as KIP-875 does."""
        self.mode.check_leader_write()
        async with self._lock(name):
            self._require(name)
            await self._write(name, [TaskCommitRecord(name, 0), TargetStateRecord(name, TargetState.STOPPED)])

    async def _set_target(self, name: str, target: TargetState) -> None:
        async with self._lock(name):
            self._require(name)
            await self._write(name, [TargetStateRecord(name, target)])

    async def restart_connector(
        self, name: str, include_tasks: bool = False, only_failed: bool = False
    ) -> dict[str, Any] | None:
        """Plain restart (both False) returns None; otherwise the KIP-745 plan (RESTARTING marks)."""
        self.mode.check_leader_write()
        async with self._lock(name):
            self._require(name)
            plan = None
            if include_tasks or only_failed:
                try:
                    plan = restart_plan(self._state_info(name), include_tasks, only_failed)
                except ConnectorNotFound:
                    raise ConnectorNotFound(name, f"Status for connector {name} not found") from None
            await self._write(name, [RestartRecord(name, include_tasks, only_failed)])
        return plan

    async def restart_task(self, name: str, task: int) -> None:
        self.mode.check_leader_write()
        async with self._lock(name):
            # Connect's two herders word these differently
            if name not in self.herder.snapshot.connectors:
                raise ConnectorNotFound(name, self.mode.unknown_connector_message(name))
            if task < 0 or task >= len(self.herder.snapshot.tasks.get(name, ())):
                error = TaskNotFound(name, task)
                error.args = (self.mode.unknown_task_message(name, task),)
                raise error
            await self._write(name, [TaskRestartRecord(name, task)])

    async def delete_connector(self, name: str) -> DeletionOutcome:
        """Delete and return once ``deleted()`` has run (or failed, or timed out: see the outcome).

        Distributed: returns once the tombstone is written and read back; the connector's owner
        runs ``deleted()`` when it reads it (the outcome says ``deferred``).
        """
        self.mode.check_delete()
        async with self._lock(name):
            config = self._require(name)
            tasks = len(self.herder.snapshot.tasks.get(name, ()))
            # The pending cleanup goes first so a crash after the tombstone still runs deleted().
            incarnation = self.herder.snapshot.incarnations.get(name)
            records: list[ConfigRecord] = [
                PendingCleanupRecord(name, config, tasks, incarnation),
                ConnectorTombstone(name),
                TargetStateTombstone(name),
            ]
            if self.mode.defers_deletion:
                enter_stage(f"writing a config for connector {name} to the config topic")
                offset = await self.herder.append(records)
                await self.herder.wait_read(offset + 1, self.worker.callback_timeout)
                _log.info("connector.deleted", connector=name, deferred=True, worker=self.worker.worker_id)
                return DeletionOutcome(name, succeeded=False, deferred=True)
            await self._write(name, records)
        outcome = self.herder.cleanups.outcome(name)
        if outcome is None:  # the unit was cut off mid-deletion (abort): the pending cleanup remains
            raise EngineNotRunning(f"The engine stopped before the deletion of {name} finished")
        _log.info(
            "connector.deleted", connector=name, succeeded=outcome.succeeded, worker=self.worker.worker_id
        )
        return outcome

    async def put_task_configs(self, name: str, configs: Sequence[Mapping[str, str]]) -> None:
        """Distributed, leader only: write task configs a connector's owner generated (the internal
        ``POST /connectors/{c}/tasks``), then their commit record."""
        await self.mode.put_task_configs(name, configs)

    async def fence_zombie_source_tasks(self, name: str) -> None:
        """Distributed, leader only: a round of zombie fencing for an exactly-once source connector
        (the internal ``PUT /connectors/{c}/fence``, Connect's ``DistributedHerder.fenceZombieSourceTasks``).

        When task configs were written after the connector's last task count record, the producers of
        that earlier generation (its recorded task count) are fenced out, then a ``tasks-fencing-<c>``
        record with the current task count is written; with no earlier record, or one task before and
        after, there is nothing to fence and only the record is written."""
        await self.mode.fence_zombie_source_tasks(name, self._lock(name))

    async def set_cluster_logger_level(self, namespace: str, level: str) -> None:
        """KIP-976 ``scope=cluster``: in a cluster, a ``logger-cluster-<namespace>`` record every worker
        applies when it reads it (this one included, before this returns); standalone, this worker."""
        LOG_LEVELS.validate(level)
        await self.mode.set_cluster_logger_level(namespace, level)

    async def append_record(self, key: str, value: Mapping[str, Any] | bytes | None) -> int:
        """Append one raw config record (tests, replays); malformed ones are skipped and counted."""
        raw = value if value is None or isinstance(value, bytes) else json.dumps(value).encode()
        return await self.herder.log.append([(key, raw)])

    # ---- reading state --------------------------------------------------------------------

    async def connectors(self) -> list[str]:
        return sorted(self.herder.snapshot.connectors)

    def connector_cleanups(self) -> list[dict[str, Any]]:
        """Deleted connectors whose cleanup has not succeeded yet (state RUNNING, LINGERING, WAITING or
        PENDING), plus those given up here (GAVE_UP): connector, incarnation, attempts, last error, next
        attempt (epoch ms)."""
        return self.herder.cleanups.listing()

    async def connector_config(self, name: str) -> dict[str, str]:
        return dict(self._require(name))

    def reload_plugins(self, registry: PluginRegistry | None = None) -> ReloadResult:
        """See plugins installed since the worker started (``engine/plugins/reload.py``); a distribution
        some connector uses keeps its loaded version. ``registry`` (the REST app's) is refreshed in place."""

        def in_use(packages: frozenset[str]) -> list[str]:
            running = {n: c for n, c in self.herder.snapshot.connectors.items() if self._runs_here(n)}
            return connectors_using(running, packages)

        result = reload_plugins(self.worker.get("plugin.path"), in_use, registry)
        if registry is not None:
            registry.refresh(result.registry)
        return result

    def _runs_here(self, name: str) -> bool:
        """Some instance of the connector (or of a task) is alive in this process: RUNNING or PAUSED."""
        me = self.worker.worker_id
        units = [self._status.connector(name), *self._status.tasks(name).values()]
        return any(
            s is not None and s.worker_id == me and s.state in ("RUNNING", "PAUSED", "RESTARTING")
            for s in units
        )

    async def connector_info(self, name: str) -> dict[str, Any]:
        """Connect's ConnectorInfo: name, config, tasks, type."""
        config = self._require(name)
        return connector_info(name, config, len(self.herder.snapshot.tasks.get(name, ())))

    async def task_configs(self, name: str) -> list[dict[str, Any]]:
        """Connect's ``GET /connectors/{c}/tasks``: each task's id and raw config."""
        self._require(name)
        return [
            {"id": {"connector": name, "task": n}, "config": dict(c)}
            for n, c in enumerate(self.herder.snapshot.tasks.get(name, ()))
        ]

    async def connector_status(self, name: str) -> dict[str, Any]:
        """Connect's ConnectorStateInfo; ConnectorNotFound until a first status exists."""
        return self._state_info(name)

    async def connectors_status(self) -> dict[str, dict[str, Any]]:
        """Every connector's ConnectorStateInfo by name, in name order (``GET /connectors?expand=status``);
        a connector with no status yet is left out."""
        return states_info(self._status, self.herder.snapshot, sorted(self.herder.snapshot.connectors))

    async def connectors_status_json(
        self, shown: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    ) -> bytes:
        """``{name: {"status": ConnectorStateInfo}}`` as JSON, in name order: the body of
        ``GET /connectors?expand=status``. Each connector's part is encoded again only when its
        statuses or config changed; ``shown`` rewrites each ConnectorStateInfo first."""
        herder = self.herder
        return self._states_json.body(self._status, herder.snapshot, herder.read_end, shown)

    async def task_status(self, name: str, task: int) -> dict[str, Any]:
        return task_state_info(self._status, self.herder.snapshot, name, task)

    async def connector_active_topics(self, name: str) -> list[str]:
        """The topics the connector's tasks produced to or consumed from (KIP-558); [] for an unknown name."""
        if not self.data_settings.topic_tracking:
            raise Forbidden("Topic tracking is disabled.")
        return self._status.topics(name)

    async def reset_connector_active_topics(self, name: str) -> None:
        """Forget the connector's active topics; no existence check, as in Connect."""
        if not self.data_settings.topic_tracking:
            raise Forbidden("Topic tracking is disabled.")
        if not self.data_settings.topic_tracking_reset:
            raise Forbidden("Topic tracking reset is disabled.")
        self._status.reset_topics(name)

    async def connector_offsets(self, name: str) -> dict[str, Any]:
        """KIP-875's ``GET /connectors/{c}/offsets``: ``{"offsets": [{"partition", "offset"}]}``; a sink's
        are its consumer group's committed offsets."""
        return await offsets_admin.connector_offsets(self.herder.snapshot, self.topics, self._offsets, name)

    async def alter_connector_offsets(self, name: str, offsets: Sequence[Any]) -> str:
        """KIP-875 ``PATCH /offsets``: only for a STOPPED connector with no tasks; returns Connect's message."""
        async with self._lock(name):
            snapshot = self.herder.snapshot
            return await offsets_admin.alter_connector_offsets(
                snapshot, self.topics, self._offsets, name, offsets
            )

    async def reset_connector_offsets(self, name: str) -> str:
        """KIP-875 ``DELETE /offsets``: every known partition's offset removed; idempotent."""
        async with self._lock(name):
            snapshot = self.herder.snapshot
            return await offsets_admin.reset_connector_offsets(snapshot, self.topics, self._offsets, name)

    def _state_info(self, name: str) -> dict[str, Any]:
        return state_info(self._status, self.herder.snapshot, name)

    # ---- waiting --------------------------------------------------------------------------

    def transitions(self) -> Subscription:
        """Every transition from now on (callable before ``start`` to see the boot too)."""
        return self._feed.subscribe()

    async def wait_for_state(
        self, name: str, state: str, tasks: int | Sequence[str] | None = None, timeout: float = 30.0
    ) -> dict[str, Any] | None:
        """Wait until the connector is in ``state`` (and its tasks match), or raise StateTimeout.

        ``tasks`` is a count (that many tasks, all in ``state``) or one state per task.
        ``state="DESTROYED"`` waits until the connector has no status at all; returns None then.
        """
        return await waits.wait_for_state(
            self.transitions(), self._status, self._state_info, name, state, tasks, timeout
        )


def _target(initial_state: str | TargetState | None) -> TargetState | None:
    if initial_state is None or isinstance(initial_state, TargetState):
        return initial_state
    try:
        return TargetState.from_initial_state(initial_state)
    except ValueError as exc:
        raise ConfigError(str(exc), errors={"initial_state": [str(exc)]}) from None
