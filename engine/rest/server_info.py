"""``GET /``: which Kafka Connect REST API this worker implements (Connect's ``ServerInfo``).

Clients read ``version`` as Connect's and gate features on it (kcctl offers stop and the offsets
commands only on a Connect that has them), so it names the Connect release whose REST API we match,
not our own version: 3.9.0, the last 3.x release. 3.9 has everything this worker answers (KIP-745 restarts,
PUT .../stop, KIP-875 offsets, KIP-980 ``initial_state``, KIP-976 ``scope=cluster`` loggers,
KIP-1017 ``/health``) and still has ``GET .../tasks-config``, which 4.0 removed. ``commit`` is, as
Kafka's, the first 16 hex digits of the build's commit ("unknown" when it cannot be told), and
``engine_version`` is connect-engine's own version.
"""

from __future__ import annotations

import subprocess
from functools import cache
from importlib.metadata import version
from pathlib import Path

from aiohttp import web

from engine.rest.keys import CLUSTER_ID

CONNECT_VERSION = "3.9.0"
UNKNOWN = "unknown"  # Kafka's AppInfoParser default
_COMMIT_LENGTH = 16  # Kafka's build keeps the first 16 hex digits of the commit id


@cache
def build_commit() -> str:
    """The commit of the source this engine runs from (a git checkout), else "unknown"."""
    source = Path(__file__).resolve().parent
    try:
        found = subprocess.run(["git", "-C", str(source), "rev-parse", "HEAD"], capture_output=True, text=True,
                               timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return UNKNOWN
    commit = found.stdout.strip()
    if found.returncode != 0 or len(commit) < _COMMIT_LENGTH:
        return UNKNOWN
    return commit[:_COMMIT_LENGTH]


def server_info(cluster_id: str) -> dict[str, str]:
    return {"version": CONNECT_VERSION, "commit": build_commit(), "kafka_cluster_id": cluster_id,
            "engine_version": version("connect-engine")}


async def serve(request: web.Request) -> web.Response:
    return web.json_response(server_info(request.app[CLUSTER_ID]))
