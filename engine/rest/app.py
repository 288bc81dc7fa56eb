"""The Connect-compatible REST application: routes, the error model, and the request timeout."""

from __future__ import annotations

import asyncio
from typing import Any, Literal

import structlog
from aiohttp import web

from engine.engine import Engine
from engine.errors import EngineError, NotLeader
from engine.observability.request_stage import current_stage, timed_out_message
from engine.plugins.discovery import PluginRegistry
from engine.rest import connectors, loggers, metrics, openapi, server_info
from engine.rest import plugins as plugin_routes
from engine.rest.auth import CREDENTIALS_FILE_KEY, BasicAuth, load_credentials
from engine.rest.cors import CrossOrigin
from engine.rest.errors import error_response, status_of
from engine.rest.forward import forward
from engine.rest.health import DEFAULT_HEALTH_TIMEOUT_S, health, wait_for_start
from engine.rest.keys import (
    CLUSTER_ID,
    CLUSTER_ID_LOCK,
    DETAILS,
    ENGINE,
    HEALTH_TIMEOUT,
    PLUGINS,
    READY,
    REST_CLIENT,
    REST_TIMEOUT,
)
from engine.rest.quiet import details_enabled, quiet_error
from engine.rest.routing import add_routes, consumes_json

log = structlog.get_logger(component="rest")

DEFAULT_REST_TIMEOUT_S = 90.0  # Connect's DEFAULT_REST_REQUEST_TIMEOUT_MS


@web.middleware
async def connect_errors(request: web.Request, handler: Any) -> web.StreamResponse:
    """Every failure becomes ``{"error_code", "message"}``; a hung plugin becomes a 500 after the timeout."""
    timeout = request.app[REST_TIMEOUT]
    try:
        async with asyncio.timeout(timeout):
            try:
                response: web.StreamResponse = await handler(request)
            except NotLeader as exc:  # distributed: the leader serves it (Connect's HerderRequestHandler)
                response = await forward(request, exc, timeout)
    except EngineError as exc:  # first: StateTimeout and friends are TimeoutErrors with their own message
        response = _error(request, status_of(exc), str(exc))
    except TimeoutError:
        response = _error(request, 500, timed_out_message(current_stage()))
    except web.HTTPMethodNotAllowed as exc:
        response = error_response(
            405, "HTTP 405 Method Not Allowed", headers={"Allow": ",".join(exc.allowed_methods)}
        )
    except web.HTTPNotFound:
        response = error_response(404, "HTTP 404 Not Found")
    except web.HTTPException as exc:
        response = error_response(exc.status, exc.reason)
    except Exception as exc:  # the REST boundary: an engine bug answers 500, never drops the connection
        log.exception("rest.request_failed", method=request.method, path=request.path)
        response = _error(request, 500, str(exc) or type(exc).__name__)
    return response


def _error(request: web.Request, status: int, message: str) -> web.Response:
    """A failure's answer; a 5xx's message is hidden when the worker keeps details out (``quiet.py``)."""
    if status >= 500 and not request.app[DETAILS]:
        message = quiet_error(status, message, method=request.method, path=request.path)
    return error_response(status, message)


def make_app(
    engine: Engine,
    *,
    rest_timeout: float = DEFAULT_REST_TIMEOUT_S,
    cluster_id: str = server_info.DEFAULT_CLUSTER_ID,
    plugins: PluginRegistry | None = None,
    credentials_file: str | None = None,
    resources: Literal["all", "regular", "admin"] = "all",
    ready: asyncio.Event | None = None,
    health_timeout: float = DEFAULT_HEALTH_TIMEOUT_S,
) -> web.Application:
    """An aiohttp application serving Connect's REST API for ``engine``.

    ``ready`` is set once the worker has started (``engine.rest.health``): until then ``/health``
    answers 503 and other requests wait. Without it the engine is taken as started already.

    ``resources``: ``regular`` leaves out the admin endpoints (``/admin/loggers``), ``admin`` serves
    only them, as Connect splits them when ``admin.listeners`` is set (KIP-208).

    ``plugins`` defaults to what is installed plus the worker's ``plugin.path``;
    ``credentials_file`` (basic auth, see ``engine.rest.auth``) to ``rest.basic.auth.credentials.file``.
    CORS follows ``access.control.allow.*`` (``engine.rest.cors``); its preflights need no credentials.
    """
    credentials_file = credentials_file or engine.worker.get(CREDENTIALS_FILE_KEY)
    auth = [BasicAuth(load_credentials(credentials_file)).middleware()] if credentials_file else []
    cross_origin = CrossOrigin.from_worker(engine.worker.raw)
    cors = [cross_origin.middleware()] if cross_origin is not None else []
    app = web.Application(middlewares=[metrics.count_requests, *cors, *auth, connect_errors, wait_for_start])
    app[ENGINE] = engine
    if ready is None:
        ready = asyncio.Event()
        ready.set()
    app[READY] = ready
    app[HEALTH_TIMEOUT] = health_timeout
    app[DETAILS] = details_enabled(engine.worker.raw)
    app[REST_CLIENT] = engine.mode.rest_client
    app[REST_TIMEOUT] = rest_timeout
    app[CLUSTER_ID] = cluster_id
    app[CLUSTER_ID_LOCK] = asyncio.Lock()
    app[PLUGINS] = (
        plugins if plugins is not None else PluginRegistry.discover(engine.worker.get("plugin.path"))
    )
    admin = [(method, path, consumes_json(handler)) for method, path, handler in loggers.ROUTES]
    if resources == "admin":
        add_routes(app, admin)
        return app
    json_resources = [
        (method, path, consumes_json(handler))
        for method, path, handler in [*connectors.ROUTES, *plugin_routes.ROUTES]
    ]
    if resources == "all":
        json_resources += admin
    server_info.build_commit()  # asks git once, before any request waits on it
    add_routes(
        app,
        [
            ("GET", "/", server_info.serve),
            ("GET", "/health", health),
            ("GET", "/openapi.json", openapi.serve),
            ("GET", "/metrics", metrics.serve),
            *json_resources,
            *connectors.INTERNAL_ROUTES,
        ],
    )
    return app
