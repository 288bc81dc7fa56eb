"""``GET /``: which Kafka Connect REST API this worker implements (Connect's ``ServerInfo``).

Clients read ``version`` as Connect's and gate features on it (kcctl offers stop and the offsets
commands only on a Connect that has them), so it names the Connect release whose REST API we match,
not our own version: 4.4.0, the newest release (KIP-745 restarts, PUT .../stop, KIP-875 offsets,
KIP-980 ``initial_state``, KIP-976 ``scope=cluster`` loggers, KIP-1017 ``/health``, KIP-891 plugin
versions, KIP-970's removal of ``GET .../tasks-config``, KIP-1188, KIP-1161, KIP-1209). ``commit`` is, as
Kafka's, the first 16 hex digits of the build's commit ("unknown" when it cannot be told), and
``engine_version`` is connect-engine's own version.
"""

from __future__ import annotations

import subprocess
from functools import cache
from importlib.metadata import version
from pathlib import Path

from aiohttp import web

from engine.rest.keys import CLUSTER_ID, CLUSTER_ID_LOCK, ENGINE
from engine.storage.kafka_topic_admin import kafka_cluster_id

CONNECT_VERSION = "4.4.0"
DEFAULT_CLUSTER_ID = "connect-engine"  # a worker without Kafka (in-process topics) has no cluster to name
UNKNOWN = "unknown"  # Kafka's AppInfoParser default
_COMMIT_LENGTH = 16  # Kafka's build keeps the first 16 hex digits of the commit id


@cache
def build_commit() -> str:
    """The commit of the source this engine runs from (a git checkout), else "unknown"."""
    source = Path(__file__).resolve().parent
    try:
        found = subprocess.run(
            ["git", "-C", str(source), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return UNKNOWN
    commit = found.stdout.strip()
    if found.returncode != 0 or len(commit) < _COMMIT_LENGTH:
        return UNKNOWN
    return commit[:_COMMIT_LENGTH]


def server_info(cluster_id: str) -> dict[str, str]:
    return {
        "version": CONNECT_VERSION,
        "commit": build_commit(),
        "kafka_cluster_id": cluster_id,
        "engine_version": version("connect-engine"),
    }


async def serve(request: web.Request) -> web.Response:
    return web.json_response(server_info(await cluster_id(request.app)))


async def cluster_id(app: web.Application) -> str:
    """The Kafka cluster's id when the worker is on Kafka (asked once, then kept), as Connect's
    ``kafka_cluster_id``; else what ``make_app`` was given."""
    found = app[CLUSTER_ID]
    engine = app[ENGINE]
    bootstrap = engine.worker.get("bootstrap.servers")
    if found != DEFAULT_CLUSTER_ID or not bootstrap:
        return found
    async with app[CLUSTER_ID_LOCK]:
        if app[CLUSTER_ID] == DEFAULT_CLUSTER_ID:
            app[CLUSTER_ID] = await kafka_cluster_id(
                bootstrap,
                client_id=f"connect-engine-{engine.worker.worker_id}",
                client_args=engine.worker.kafka.own(),
            )
    return app[CLUSTER_ID]
