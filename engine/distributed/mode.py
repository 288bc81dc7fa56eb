"""The mode a worker runs in, standalone or a cluster member: the one object that knows which.

Kafka Connect has a herder per mode (``StandaloneHerder``, ``DistributedHerder``). Here one engine
asks its mode whatever the two herders answer differently: who may write, whether a write waits for
the connector's start, whether a delete runs here, how "not found" is worded, which worker id the
logs and metrics carry, and the cluster-only verbs (task configs from a follower, zombie fencing, a
cluster-wide log level). ``StandaloneMode`` is here; ``ClusterMode`` (``cluster_mode.py``) wraps
the group's ``Cluster``. The herder sees only the mode's ``ownership``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING, Protocol

from engine.config.worker import WorkerConfig
from engine.errors import ConnectorStartFailed, InvalidRequest, OperationTimeout
from engine.herder.herder import Herder
from engine.herder.ownership import Ownership, StandaloneOwnership
from engine.herder.runtime import RunningMode
from engine.herder.timers import Timers
from engine.observability.log_levels import LOG_LEVELS
from engine.observability.metrics import EngineMetrics
from engine.observability.request_stage import enter_stage

if TYPE_CHECKING:
    from engine.distributed.cluster import Cluster
    from engine.distributed.forwarding import RestClient
    from engine.distributed.member import MemberFactory
    from engine.distributed.request_signing import Refusal


class WorkerMode(RunningMode, Protocol):
    """What the engine and its REST API ask of the mode, beyond what its run does (``RunningMode``:
    the herder's ``ownership``, joining, the membership task, leaving, the worker id logs carry)."""

    @property
    def distributed(self) -> bool:
        """True in a cluster: REST words its answers as Connect's distributed herder does."""
        ...

    @property
    def cluster(self) -> Cluster | None:
        """The group this worker is a member of (what it owns, who leads); None standalone."""
        ...

    @property
    def rest_client(self) -> RestClient:
        """What REST forwards a leader-only request to the leader with."""
        ...

    def report_to(self, metrics: EngineMetrics) -> None:
        """Hand ``metrics`` the mode's gauges (a cluster member's rebalance and coordinator ones)."""
        ...

    def check_leader_write(self) -> None:
        """Raise when this worker may not write now (``NotLeader``, ``RebalanceNeeded``)."""
        ...

    def check_create(self) -> None:
        """Raise when this worker may not write a new connector now (``NotLeader``)."""
        ...

    def check_delete(self) -> None:
        """Raise when this worker may not write a deletion now (``NotLeader``)."""
        ...

    def check_connector_config(self, name: str, config: Mapping[str, str]) -> None:
        """The mode's own checks of a connector's config before it is written."""
        ...

    async def started(self, name: str, timeout: float) -> None:
        """Return when a write's answer may be given: once the connector started, or at once."""
        ...

    def check_started(self, name: str) -> None:
        """Raise ``ConnectorStartFailed`` when the write's answer is that the start failed."""
        ...

    @property
    def defers_deletion(self) -> bool:
        """A delete returns once written: another worker may own the connector and run ``deleted()``."""
        ...

    def unknown_connector_message(self, name: str) -> str: ...

    def unknown_task_message(self, name: str, task: int) -> str: ...

    def verify(self, headers: Mapping[str, str], body: bytes) -> Refusal | None:
        """Why an internal request must be refused, or None when it is signed properly (KIP-507)."""
        ...

    async def put_task_configs(self, name: str, configs: Sequence[Mapping[str, str]]) -> None: ...

    async def fence_zombie_source_tasks(self, name: str, lock: asyncio.Lock) -> None: ...

    async def set_cluster_logger_level(self, namespace: str, level: str) -> None: ...


class StandaloneMode:
    """One worker owns, writes and runs everything (Connect's ``StandaloneHerder``)."""

    distributed = False
    cluster = None
    reported_worker_id = None
    defers_deletion = False

    def __init__(self, worker: WorkerConfig, herder: Callable[[], Herder]) -> None:
        """``herder`` is the engine's running herder (``EngineNotRunning`` when it is not)."""
        self.ownership: Ownership = StandaloneOwnership()
        self._worker = worker
        self._herder = herder
        self._rest_client: RestClient | None = None

    @property
    def rest_client(self) -> RestClient:
        """Built on first use: a standalone worker forwards nothing, but REST holds one all the same."""
        if self._rest_client is None:
            from engine.distributed.forwarding import RestClient

            self._rest_client = RestClient(self._worker)
        return self._rest_client

    def report_to(self, metrics: EngineMetrics) -> None:
        return None

    async def join(self, running: asyncio.Task[None], set_stage: Callable[[str], None]) -> str | None:
        return None

    async def run(self, herder: Herder, booted: asyncio.Future[None]) -> None:
        return None

    async def leave(self) -> None:
        return None

    def runs_task(self, connector: str, task: int) -> bool:
        return True

    def tasks_run(self) -> AbstractSet[tuple[str, int]] | None:
        return None

    def check_leader_write(self) -> None:
        return None

    def check_create(self) -> None:
        return None

    def check_delete(self) -> None:
        return None

    def check_connector_config(self, name: str, config: Mapping[str, str]) -> None:
        return None

    async def started(self, name: str, timeout: float) -> None:
        """Read-your-writes, as Kafka's standalone herder answers: once the connector started (or
        failed) and its tasks are configured, so a status read right after never misses."""
        enter_stage(f"starting connector {name}")
        herder = self._herder()
        try:
            await herder.wait_started(name, timeout)
        except TimeoutError:
            if herder.status.connector(name) is None:  # a task slow to start is no reason to fail
                raise OperationTimeout(f"starting connector {name}") from None

    def check_started(self, name: str) -> None:
        herder = self._herder()
        status = herder.status.connector(name)
        if status is not None and status.state == "FAILED":  # none: deleted meanwhile, the write answers
            raise ConnectorStartFailed(name, herder.snapshot.target(name).value)

    def unknown_connector_message(self, name: str) -> str:
        return f"Connector {name} not found"

    def unknown_task_message(self, name: str, task: int) -> str:
        return f"Task {name}-{task} not found"

    def verify(self, headers: Mapping[str, str], body: bytes) -> Refusal | None:
        """Never asked: REST refuses internal requests to a standalone worker before reading them."""
        return None

    async def put_task_configs(self, name: str, configs: Sequence[Mapping[str, str]]) -> None:
        raise InvalidRequest("Task configs are written by the engine itself outside a cluster")

    async def fence_zombie_source_tasks(self, name: str, lock: asyncio.Lock) -> None:
        raise InvalidRequest(
            "Kafka Connect in standalone mode does not support exactly-once source connectors."
        )

    async def set_cluster_logger_level(self, namespace: str, level: str) -> None:
        """Standalone, the cluster is this worker."""
        LOG_LEVELS.set(namespace, level)


def worker_mode(
    worker: WorkerConfig,
    herder: Callable[[], Herder],
    timers: Timers,
    *,
    membership: MemberFactory | None = None,
    rest_client: RestClient | None = None,
) -> WorkerMode:
    """``group.id`` makes the worker a member of a distributed cluster (Kafka's ``DistributedHerder``);
    without it the worker is standalone. ``membership`` and ``rest_client`` replace the broker's group
    and HTTP between workers (the scenario runner's in-process cluster)."""
    if not worker.get("group.id"):
        return StandaloneMode(worker, herder)
    from engine.distributed.cluster_mode import ClusterMode  # the group's client libraries, only when joining

    return ClusterMode(worker, herder, timers, membership=membership, rest_client=rest_client)
