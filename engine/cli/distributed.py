"""``connect-engine distributed WORKER_PROPERTIES``: a worker that shares connectors through a group.

The standalone worker's REST server and shutdown order, on an engine whose ``group.id`` makes it
a cluster member: connectors come only from the config topic (REST on any worker), never from
files.
"""

from __future__ import annotations

from engine.cli.standalone import StandaloneWorker
from engine.config.properties import load_properties
from engine.errors import ConfigError

REQUIRED = ("group.id", "bootstrap.servers")


class DistributedWorker(StandaloneWorker):
    """Engine in a group + Connect's REST API; SIGINT/SIGTERM stop work with plain ``stop()`` and
    leave the group, so the others take it over."""

    def __init__(self, worker_properties: dict[str, str]) -> None:
        missing = [key for key in REQUIRED if not worker_properties.get(key, "").strip()]
        if missing:
            raise ConfigError(f"Missing required configuration \"{missing[0]}\" which has no default value.",
                              errors={key: ["Missing required configuration"] for key in missing})
        super().__init__(worker_properties, [])


async def run_distributed(worker_file: str) -> None:
    await DistributedWorker(load_properties(worker_file)).run_until_signalled()
