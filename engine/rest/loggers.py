"""``/admin/loggers``: read and change log levels at runtime, on this worker or (KIP-976 ``scope=cluster``)
on every worker of its cluster."""

from __future__ import annotations

import structlog
from aiohttp import web

from engine.observability.log_levels import LOG_LEVELS
from engine.rest.body import json_body
from engine.rest.errors import BadRequest, RestError
from engine.rest.keys import ENGINE

log = structlog.get_logger(component="rest")


async def list_loggers(request: web.Request) -> web.Response:
    return web.json_response(LOG_LEVELS.all())


async def get_logger(request: web.Request) -> web.Response:
    name = request.match_info["logger"]
    level = LOG_LEVELS.get(name)
    if level is None:
        raise RestError(404, f"Logger {name} not found.")
    return web.json_response(level)


async def set_level(request: web.Request) -> web.Response:
    body = await json_body(request)
    level = body.get("level") if isinstance(body, dict) else None
    if not isinstance(level, str) or not level:
        raise BadRequest("Desired 'level' parameter was not specified in request.")
    scope = request.query.get("scope", "worker").lower()
    if scope == "cluster":  # Connect: written to the config topic, answered before the others apply it
        await request.app[ENGINE].set_cluster_logger_level(request.match_info["logger"], level)
        return web.Response(status=204)
    if scope != "worker":
        log.warning("rest.logger_scope_invalid", scope=scope, default="worker")  # as Connect: worker scope
    return web.json_response(LOG_LEVELS.set(request.match_info["logger"], level))


ROUTES = [
    ("GET", "/admin/loggers", list_loggers),
    ("GET", "/admin/loggers/{logger}", get_logger),
    ("PUT", "/admin/loggers/{logger}", set_level),
]
