"""A worker as a member of a distributed cluster (Connect's ``DistributedHerder``): the mode of an
engine whose worker config has ``group.id``.

Around the group's ``Cluster``: joining before the engine serves, the leader-only write check, the
coordinator metrics, and the verbs only a cluster has: task configs a follower hands the leader,
zombie fencing for exactly-once sources, and a log level every worker applies.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet

from engine.config.worker import WorkerConfig
from engine.configlog.records import LoggerLevelRecord, TaskCountRecord
from engine.distributed.cluster import Cluster
from engine.distributed.forwarding import RestClient
from engine.distributed.member import MemberFactory
from engine.distributed.request_signing import Refusal
from engine.distributed.settings import ClusterSettings
from engine.distributed.sink_group import check_sink_group
from engine.errors import ConnectorNotFound, FencingConflict, InvalidRequest, NotLeader, RebalanceNeeded
from engine.herder.connect_json import type_of
from engine.herder.herder import Herder
from engine.herder.ownership import Ownership
from engine.herder.timers import Timers
from engine.observability.connect_metrics import CoordinatorView
from engine.observability.metrics import EngineMetrics
from engine.observability.request_stage import enter_stage

_READ_BACK_TIMEOUT_S = 60.0  # a cluster-wide log level read back from the config topic


class ClusterMode:
    """The engine's mode in a cluster; ``cluster`` is the group's view (what this worker owns, who leads)."""

    distributed = True
    defers_deletion = True  # the connector's owner runs deleted() when it reads the tombstone

    def __init__(
        self,
        worker: WorkerConfig,
        herder: Callable[[], Herder],
        timers: Timers,
        *,
        membership: MemberFactory | None = None,
        rest_client: RestClient | None = None,
    ) -> None:
        """``herder`` is the engine's running herder (``EngineNotRunning`` when it is not)."""
        self._worker = worker
        self._herder = herder
        self.cluster = Cluster(
            ClusterSettings.from_worker(worker),
            rest_client if rest_client is not None else RestClient(worker),
            member_factory=membership,
            timers=timers,
        )

    @property
    def ownership(self) -> Ownership:
        return self.cluster

    @property
    def rest_client(self) -> RestClient:
        return self.cluster.rest_client

    @property
    def reported_worker_id(self) -> str:
        """A cluster member reports only its own work, and says which worker it is."""
        return self._worker.worker_id

    def report_to(self, metrics: EngineMetrics) -> None:
        cluster = self.cluster
        metrics.connect.rebalances = lambda: (cluster.rebalances_applied, cluster.generation)
        metrics.connect.coordinator = lambda: CoordinatorView(
            f"connect-engine-{cluster.worker_id}-group",
            len(cluster.owned.connectors),
            len(cluster.owned.tasks),
            cluster.rebalancing,
            cluster.leader or "",
            cluster.rebalances_applied,
            cluster.generation,
        )

    # ---- running ----------------------------------------------------------------------------

    async def join(self, running: asyncio.Task[None], set_stage: Callable[[str], None]) -> str | None:
        """Return once the group has given this worker its first assignment."""
        cluster = self.cluster
        set_stage("ensuring membership in the cluster")
        # a broker may take a rebalance timeout or two (a dead member still listed) before a real plan
        joined = asyncio.ensure_future(
            cluster.joined(max(60.0, 2 * cluster.settings.rebalance_timeout_ms / 1000))
        )
        done, _ = await asyncio.wait({joined, running}, return_when=asyncio.FIRST_COMPLETED)
        if joined not in done:
            joined.cancel()
            await running
        try:
            joined.result()
        except TimeoutError:
            return f"Worker {self._worker.worker_id} did not join group {cluster.settings.group_id} in time"
        return None

    async def run(self, herder: Herder, booted: asyncio.Future[None]) -> None:
        await asyncio.shield(booted)  # join with the whole config log read: the leader plans from it
        await self.cluster.run(herder)

    async def leave(self) -> None:
        await self.cluster.leave()

    def runs_task(self, connector: str, task: int) -> bool:
        return self.cluster.runs_task(connector, task)

    def tasks_run(self) -> AbstractSet[tuple[str, int]] | None:
        return self.cluster.tasks_run()

    # ---- what a write asks --------------------------------------------------------------------

    def check_leader_write(self) -> None:
        """Leader-only writes fail fast on a follower or while a rebalance is due (Kafka's
        ``DistributedHerder``: ``NotLeaderException``, ``RebalanceNeededException``)."""
        if self.cluster.needs_rebalance:
            raise RebalanceNeeded
        if not self.cluster.is_leader:
            raise NotLeader(self.cluster.leader_url)

    def check_create(self) -> None:
        """A new connector is written even while a rebalance is due: the round being waited for
        covers it too, so a burst of creates costs one round, not one each (Connect queues such a
        request until the round ends; a 409 here made clients retry once per connector)."""
        if not self.cluster.is_leader:
            raise NotLeader(self.cluster.leader_url)

    def check_delete(self) -> None:
        """A deletion is written even while a rebalance is due, as a create is: the round being
        waited for covers it too (its pending cleanup rides on the connector's slot), so deleting
        hundreds one after another costs a round per gap, not a 409 and a retry per connector."""
        if not self.cluster.is_leader:
            raise NotLeader(self.cluster.leader_url)

    def check_connector_config(self, name: str, config: Mapping[str, str]) -> None:
        check_sink_group(name, config, self.cluster.settings.group_id)

    async def started(self, name: str, timeout: float) -> None:
        """The owner may be another worker: the write is the answer, as in Connect."""
        return

    def check_started(self, name: str) -> None:
        return None

    def unknown_connector_message(self, name: str) -> str:
        return f"Unknown connector: {name}"

    def unknown_task_message(self, name: str, task: int) -> str:
        return f"Unknown task: {name}-{task}"

    def verify(self, headers: Mapping[str, str], body: bytes) -> Refusal | None:
        return self.cluster.verify(headers, body)

    # ---- the cluster's own verbs ----------------------------------------------------------------

    def _check_leader(self) -> None:
        if not self.cluster.is_leader:
            raise NotLeader(self.cluster.leader_url)

    async def put_task_configs(self, name: str, configs: Sequence[Mapping[str, str]]) -> None:
        """Leader only: write task configs a connector's owner generated (the internal
        ``POST /connectors/{c}/tasks``), then their commit record."""
        self._check_leader()
        herder = self._herder()
        if name not in herder.snapshot.connectors:
            raise ConnectorNotFound(name)
        await herder.submit_task_configs(name, [{str(k): str(v) for k, v in c.items()} for c in configs])

    async def fence_zombie_source_tasks(self, name: str, lock: asyncio.Lock) -> None:
        """Leader only: a round of zombie fencing for an exactly-once source connector (the internal
        ``PUT /connectors/{c}/fence``, Connect's ``DistributedHerder.fenceZombieSourceTasks``), under
        the connector's ``lock``.

        When task configs were written after the connector's last task count record, the producers of
        that earlier generation (its recorded task count) are fenced out, then a ``tasks-fencing-<c>``
        record with the current task count is written; with no earlier record, or one task before and
        after, there is nothing to fence and only the record is written."""
        self._check_leader()
        sync_timeout = self.cluster.settings.sync_timeout_s
        async with lock:
            herder = self._herder()
            snapshot = herder.snapshot
            config = snapshot.connectors.get(name)
            if config is None:
                raise ConnectorNotFound(name, f"Connector {name} not found")
            if type_of(config) != "source":
                raise InvalidRequest(f"Connector {name} is not a source connector")
            enter_stage(f"reading to the end of the config topic before fencing connector {name}")
            await herder.wait_read(await herder.log.end_offset(), sync_timeout)
            if name not in snapshot.pending_fencing:
                return  # every earlier generation was fenced already
            previous = snapshot.task_count_records.get(name)
            tasks = snapshot.tasks.get(name, ())
            if previous is not None and (previous, len(tasks)) != (1, 1):
                from engine.worker.exactly_once import fence_producers

                enter_stage(f"initiating a round of zombie fencing for connector {name}")
                worker = self._worker
                await fence_producers(worker.raw, worker.kafka.worker_level("producer"), name, previous)
                await herder.wait_read(await herder.log.end_offset(), sync_timeout)
                if snapshot.tasks.get(name, ()) is not tasks:
                    raise FencingConflict(
                        "Fencing failed because new task configurations were generated for the connector"
                    )
            enter_stage(f"writing a task count record for connector {name} to the config topic")
            offset = await herder.append([TaskCountRecord(name, len(tasks))])
            await herder.wait_read(offset + 1, self._worker.callback_timeout)

    async def set_cluster_logger_level(self, namespace: str, level: str) -> None:
        """KIP-976 ``scope=cluster``: a ``logger-cluster-<namespace>`` record every worker applies when
        it reads it (this one included, before this returns)."""
        herder = self._herder()
        offset = await herder.append([LoggerLevelRecord(namespace, level)])
        await herder.wait_read(offset + 1, _READ_BACK_TIMEOUT_S)
