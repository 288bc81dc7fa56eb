"""``GET /metrics`` and the middleware that counts and times every REST request.

Requests are labelled by route template (``/connectors/{connector}/status``), never the raw
path, so connector names cannot blow up the number of series; unmatched paths share one label.
"""

from __future__ import annotations

from time import perf_counter
from typing import Any

from aiohttp import web

from engine.api._invoke import CALLBACK_TIMER
from engine.observability.metrics import CONTENT_TYPE, OPENMETRICS
from engine.rest.keys import ENGINE
from engine.rest.openapi import OPERATIONS

UNMATCHED = "unmatched"


def route_of(request: web.Request) -> str:
    resource = request.match_info.route.resource
    if resource is None:
        return UNMATCHED
    return resource.canonical.rstrip("/") or "/"  # a trailing-slash variant counts as its route


@web.middleware
async def count_requests(request: web.Request, handler: Any) -> web.StreamResponse:
    """Outermost: sees the final status, 401s and error bodies included.

    It also points ``CALLBACK_TIMER`` at this engine, so callbacks run on behalf of a request
    (``validate()``, ``config()``) are timed like those the engine runs itself.
    """
    metrics = request.app[ENGINE].metrics
    token = CALLBACK_TIMER.set(metrics.callback)
    started = perf_counter()
    status = 500
    try:
        response: web.StreamResponse = await handler(request)
        status = response.status
        return response
    except web.HTTPException as exc:
        status = exc.status
        raise
    finally:
        CALLBACK_TIMER.reset(token)
        metrics.request(request.method, route_of(request), status, perf_counter() - started)


async def serve(request: web.Request) -> web.Response:
    """``Accept: application/openmetrics-text`` gets OpenMetrics; anything else the text format 0.0.4."""
    body, content_type = request.app[ENGINE].metrics.exposition(request.headers.get("Accept"))
    return web.Response(body=body, headers={"Content-Type": content_type})


OPERATIONS[("GET", "/metrics")] = {
    "summary": "Prometheus metrics (text exposition format 0.0.4, or OpenMetrics when the Accept header asks)",
    "responses": {
        "200": {
            "description": "Metrics",
            "content": {
                CONTENT_TYPE.split(";")[0]: {"schema": {"type": "string"}},
                OPENMETRICS: {"schema": {"type": "string"}},
            },
        }
    },
}
