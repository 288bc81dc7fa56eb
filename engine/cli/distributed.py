"""``connect-engine distributed WORKER_PROPERTIES``: a worker that shares connectors through a group.

The standalone worker's REST server and shutdown order, on an engine whose ``group.id`` makes it
a cluster member: connectors come only from the config topic (REST on any worker), never from
files.
"""

from __future__ import annotations

from engine.cli.standalone import StandaloneWorker
from engine.cli.worker_defaults import with_worker_defaults
from engine.config.properties import load_properties
from engine.distributed.settings import check_required


class DistributedWorker(StandaloneWorker):
    """Engine in a group + Connect's REST API; SIGINT/SIGTERM stop work with plain ``stop()`` and
    leave the group, so the others take it over."""

    def __init__(self, worker_properties: dict[str, str]) -> None:
        check_required(worker_properties)
        super().__init__(worker_properties, [])


async def run_distributed(worker_file: str) -> None:
    await DistributedWorker(with_worker_defaults(load_properties(worker_file))).run_until_signalled()
