"""What this worker owns, and who writes task configs: the herder's one seam to distribution.

Kafka Connect has a herder per mode (``StandaloneHerder``, ``DistributedHerder``); here one
herder asks an ``Ownership``. ``StandaloneOwnership`` is the null object (everything is ours,
we lead, generation 0); ``engine.distributed.cluster.Cluster`` is the group-backed one.
"""

from __future__ import annotations

from typing import Protocol


class Ownership(Protocol):
    """Which connectors and tasks run here, per the mode the engine runs in."""

    @property
    def distributed(self) -> bool:
        """True in a cluster: cleanups wait for an assignment, config changes ask for a rebalance."""
        ...

    @property
    def generation(self) -> int:
        """The group generation (-1 before the first assignment; 0 standalone)."""
        ...

    @property
    def is_leader(self) -> bool: ...

    def owns_connector(self, name: str) -> bool: ...

    def owns_task(self, name: str, task: int) -> bool: ...

    def work_changed(self, offset: int) -> None:
        """A record at ``offset`` adds or removes a connector, task or cleanup: reassign work."""
        ...

    async def forward_task_configs(self, connector: str, configs: list[dict[str, str]]) -> bool:
        """Hand task configs to the worker that writes them; False when this worker writes them itself."""
        ...


class StandaloneOwnership:
    """One worker owns everything and writes everything (Connect's ``StandaloneHerder``)."""

    distributed = False
    generation = 0
    is_leader = True

    def owns_connector(self, name: str) -> bool:
        return True

    def owns_task(self, name: str, task: int) -> bool:
        return True

    def work_changed(self, offset: int) -> None:
        return None

    async def forward_task_configs(self, connector: str, configs: list[dict[str, str]]) -> bool:
        return False
