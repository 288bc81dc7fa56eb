"""``GET /health`` (KIP-1017) and requests that come while the worker still starts.

A worker's REST server listens before its engine has started (Connect's ``RestServer`` is up
before its herder is ready), so a probe can tell starting from dead: ``/health`` waits up to
10 s (Connect's ``DEFAULT_HEALTH_CHECK_TIMEOUT_MS``) for the worker to be ready, then answers 503
``starting`` (in a cluster, naming what the worker is doing, as Connect's ``Stage.summarize``
does), 200 ``healthy`` once ready, or 500 ``unhealthy`` when a ready worker does not answer.
Other requests wait for the start, within the request timeout, as Connect queues them on its
herder.
"""

from __future__ import annotations

import asyncio
import datetime
from typing import Any

from aiohttp import web

from engine.errors import EngineError
from engine.observability.request_stage import enter_stage
from engine.rest.keys import ENGINE, HEALTH_TIMEOUT, READY

DEFAULT_HEALTH_TIMEOUT_S = 10.0
HEALTHY = "Worker has completed startup and is ready to handle requests."
STARTING = "Worker is still starting up."
UNHEALTHY = "Worker was unable to handle this request and may be unable to handle other requests."
# answered while the worker starts: nothing in them waits on the engine
_UNGATED = frozenset({"/", "/health", "/health/", "/openapi.json", "/metrics"})


def java_instant(epoch_ms: int) -> str:
    """``java.time.Instant.toString()`` of a millisecond instant: ``2024-06-01T10:00:00.123Z``
    (the fraction left out when it is zero)."""
    moment = datetime.datetime.fromtimestamp(epoch_ms / 1000, tz=datetime.UTC)
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    millis = epoch_ms % 1000
    return f"{text}.{millis:03d}Z" if millis else f"{text}Z"


def _status(status: str, message: str, code: int) -> web.Response:
    return web.json_response({"status": status, "message": message}, status=code)


async def health(request: web.Request) -> web.Response:
    engine, ready = request.app[ENGINE], request.app[READY]
    try:
        async with asyncio.timeout(request.app[HEALTH_TIMEOUT]):
            await ready.wait()
            await engine.connectors()
    except (TimeoutError, EngineError):
        if not ready.is_set():
            message = STARTING
            if engine.mode.distributed:  # the distributed herder's stage; the standalone one has none
                stage, began = engine.startup_stage
                message += f" The worker is currently {stage}, which began at {java_instant(began)}."
            return _status("starting", message, 503)
        return _status("unhealthy", UNHEALTHY, 500)
    return _status("healthy", HEALTHY, 200)


@web.middleware
async def wait_for_start(request: web.Request, handler: Any) -> web.StreamResponse:
    """Hold a request until the worker has started (inside the request timeout, which names the stage)."""
    ready = request.app[READY]
    if not ready.is_set() and request.path not in _UNGATED and request.method != "OPTIONS":
        enter_stage(request.app[ENGINE].startup_stage[0])
        await ready.wait()
    response: web.StreamResponse = await handler(request)
    return response
