"""Requests between in-process cluster workers: the one a follower sends the leader, task configs.

``engine.distributed.forwarding.forward_task_configs`` runs unchanged (its retries, its answer
codes); only the HTTP hop is replaced by a call on the target worker's engine, found by the host
of its advertised URL (``http://w2:8083`` is worker ``w2``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from urllib.parse import unquote, urlsplit

import orjson

from engine.config.worker import WorkerConfig
from engine.distributed.forwarding import RestClient
from engine.engine import Engine
from engine.errors import EngineError, ForwardingFailed


class InProcessRestClient(RestClient):
    """``send`` to a worker of this process; ``stalled`` names connectors whose forward found no one."""

    def __init__(self, worker: WorkerConfig, engine_of: Callable[[str], Engine | None], name: str) -> None:
        super().__init__(worker)
        self._engine_of = engine_of
        self.name = name  # the sending worker
        self.stalled: dict[str, str] = {}  # connector -> the worker its task configs could not reach

    async def send(
        self, method: str, url: str, *, body: bytes | None, headers: Mapping[str, str], timeout: float
    ) -> tuple[int, bytes, str]:
        parts = urlsplit(url)
        target = parts.hostname or ""
        path = parts.path.strip("/").split("/")
        if method != "POST" or len(path) != 3 or path[0] != "connectors" or path[2] != "tasks":
            return (
                404,
                orjson.dumps({"error_code": 404, "message": f"not served in-process: {method} {url}"}),
                "application/json",
            )
        connector = unquote(path[1])
        engine = self._engine_of(target)
        if engine is None:
            self.stalled[connector] = target
            raise ForwardingFailed(500, f"IO Error trying to forward REST request: worker {target} is down")
        try:
            await engine.put_task_configs(connector, orjson.loads(body or b"[]"))
        except EngineError as exc:
            self.stalled.pop(connector, None)
            status = int(getattr(exc, "http_status", 500))
            return status, orjson.dumps({"error_code": status, "message": str(exc)}), "application/json"
        self.stalled.pop(connector, None)
        return 204, b"", "application/json"
