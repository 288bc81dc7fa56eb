"""``/connectors`` resources (Connect's ``ConnectorsResource``): its codes, shapes and messages over the
embedded Engine."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import quote

import orjson
import structlog
from aiohttp import web

from engine.engine import Engine
from engine.errors import ConnectorNotFound
from engine.rest.body import NULL_CONFIG, create_request, json_body, query_flag, string_map
from engine.rest.errors import BadRequest, RestError
from engine.rest.keys import DETAILS, ENGINE
from engine.rest.quiet import quiet_status

log = structlog.get_logger(component="rest")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _engine(request: web.Request) -> Engine:
    return request.app[ENGINE]


def _name(request: web.Request) -> str:
    return request.match_info["connector"]


def _task(request: web.Request) -> int:
    raw = request.match_info["task"]
    try:
        return int(raw)
    except ValueError:
        raise web.HTTPNotFound() from None  # JAX-RS cannot bind a non-integer path parameter: 404


async def _known(engine: Engine, name: str, message: str) -> None:
    """Fail with Connect's wording for this endpoint (it differs from endpoint to endpoint)."""
    if name not in await engine.connectors():
        raise ConnectorNotFound(name, message)


# ---- the collection ---------------------------------------------------------------------------


async def list_connectors(request: web.Request) -> web.Response:
    engine = _engine(request)
    names = await engine.connectors()
    if "expand" not in request.query:
        return web.json_response(names, dumps=_compact_json)
    expand = set(request.query.getall("expand"))  # unknown expansions are ignored, still an object
    if expand == {"status"}:  # thousands of connectors: their parts kept encoded
        shown = None if request.app[DETAILS] else quiet_status
        body = await engine.connectors_status_json(shown)
        return web.Response(body=body, content_type="application/json", charset="utf-8")
    statuses = await engine.connectors_status() if "status" in expand else {}
    result: dict[str, dict[str, Any]] = {}
    for name in names:
        entry: dict[str, Any] = {}
        try:
            if "status" in expand:
                status = statuses.get(name)
                if status is None:
                    continue  # deleted (or not yet started) while we looked: Connect leaves it out
                entry["status"] = _shown(request, status)
            if "info" in expand:
                entry["info"] = await engine.connector_info(name)
        except ConnectorNotFound:
            continue
        result[name] = entry
    # orjson: thousands of connectors' statuses are megabytes, which the stdlib encoder took most of
    # the answer's time to write; compact, as Connect's Jackson writes it
    return web.json_response(result, dumps=_compact_json)


def _compact_json(body: Any) -> str:
    return orjson.dumps(body).decode()


async def create_connector(request: web.Request) -> web.Response:
    name, config, initial_state = create_request(await json_body(request, numbers_as_text=True))
    # KIP-995: the offsets keep their JSON numbers (the config's are bound to strings)
    offsets = (await json_body(request)).get("initial_offsets")
    engine = _engine(request)
    info = await engine.create_connector(
        name, config, initial_state, initial_offsets=offsets, raise_failed_start=True
    )
    return web.json_response(info, status=201, headers={"Location": _location(request, name)})


def _location(request: web.Request, name: str) -> str:
    """Jersey resolves ``Response.created``'s relative URI against the request's base URI: absolute."""
    return f"{request.url.origin()}/connectors/{quote(name, safe='')}"


# ---- one connector ---------------------------------------------------------------------------


async def get_connector(request: web.Request) -> web.Response:
    return web.json_response(await _engine(request).connector_info(_name(request)))


async def get_config(request: web.Request) -> web.Response:
    return web.json_response(await _engine(request).connector_config(_name(request)))


async def put_config(request: web.Request) -> web.Response:
    engine, name = _engine(request), _name(request)
    body = await json_body(request, numbers_as_text=True)
    if body is None:  # Connect reads the name out of the missing config: a NullPointerException
        raise RestError(500, NULL_CONFIG)
    config = string_map(body)
    created, info = await engine.put_connector_config_created(name, config, raise_failed_start=True)
    if created:
        return web.json_response(info, status=201, headers={"Location": _location(request, name)})
    return web.json_response(info)


async def patch_config(request: web.Request) -> web.Response:
    engine, name = _engine(request), _name(request)
    patch = string_map(await json_body(request, numbers_as_text=True))
    config: dict[str, Any] = dict(await engine.connector_config(name))
    for key, value in patch.items():
        if value is None:
            config.pop(key, None)
        else:
            config[key] = value
    info = await engine.put_connector_config(name, config, raise_failed_start=True)
    return web.json_response(info)


async def delete_connector(request: web.Request) -> web.Response:
    """204 only once the cleanup ran (or, in a cluster, once the deletion is written for its owner)."""
    name = _name(request)
    outcome = await _engine(request).delete_connector(name)
    if outcome.succeeded or outcome.deferred:
        return web.Response(status=204)
    what = "timed out" if outcome.timed_out else "failed"
    then = (
        "it will be retried (GET /connector-cleanups)"
        if outcome.will_retry
        else "it will not be retried (connector.deleted.max.retries)"
    )
    reason = (outcome.error or "").strip().splitlines()
    raise RestError(
        500, f"Connector {name} was deleted, but its cleanup {what}: {reason[0] if reason else what}; {then}"
    )


async def list_cleanups(request: web.Request) -> web.Response:
    """Our own endpoint: deleted connectors whose ``deleted()`` has not succeeded yet."""
    return web.json_response(_engine(request).connector_cleanups())


def _shown(request: web.Request, status: dict[str, Any]) -> dict[str, Any]:
    """A status as this worker may show it: traces hidden with details off (``engine/rest/quiet.py``)."""
    return status if request.app[DETAILS] else quiet_status(status)


async def get_status(request: web.Request) -> web.Response:
    return web.json_response(_shown(request, await _engine(request).connector_status(_name(request))))


async def get_tasks(request: web.Request) -> web.Response:
    return web.json_response(await _engine(request).task_configs(_name(request)))


async def get_task_status(request: web.Request) -> web.Response:
    return web.json_response(
        _shown(request, await _engine(request).task_status(_name(request), _task(request)))
    )


async def restart_task(request: web.Request) -> web.Response:
    await _engine(request).restart_task(_name(request), _task(request))
    return web.Response(status=204)


async def restart_connector(request: web.Request) -> web.Response:
    engine, name = _engine(request), _name(request)
    include_tasks, only_failed = query_flag(request, "includeTasks"), query_flag(request, "onlyFailed")
    # a plain restart is worded as the mode's herder words it; the KIP-745 path says "Unknown connector: x"
    plain = not (include_tasks or only_failed)
    await _known(
        engine, name, engine.mode.unknown_connector_message(name) if plain else f"Unknown connector: {name}"
    )
    plan = await engine.restart_connector(name, include_tasks=include_tasks, only_failed=only_failed)
    if plan is None:
        return web.Response(status=204)
    return web.json_response(_shown(request, plan), status=202)


def _target_change(method: str, status: int) -> Handler:
    async def handle(request: web.Request) -> web.Response:
        engine, name = _engine(request), _name(request)
        await _known(engine, name, f"Unknown connector {name}")
        await getattr(engine, method)(name)
        return web.Response(status=status)

    return handle


pause_connector = _target_change("pause_connector", 202)
resume_connector = _target_change("resume_connector", 202)
stop_connector = _target_change("stop_connector", 204)


# ---- topics and offsets ----------------------------------------------------------------------


async def get_topics(request: web.Request) -> web.Response:
    name = _name(request)
    return web.json_response({name: {"topics": await _engine(request).connector_active_topics(name)}})


async def reset_topics(request: web.Request) -> web.Response:
    await _engine(request).reset_connector_active_topics(_name(request))
    return web.Response(status=202)


async def get_offsets(request: web.Request) -> web.Response:
    return web.json_response(await _engine(request).connector_offsets(_name(request)))


async def alter_offsets(request: web.Request) -> web.Response:
    body = await json_body(request)
    offsets = body.get("offsets") if isinstance(body, dict) else None
    if not isinstance(offsets, list) or not offsets:
        raise BadRequest("Partitions / offsets need to be provided for an alter offsets request")
    message = await _engine(request).alter_connector_offsets(_name(request), offsets)
    return web.json_response({"message": message})


async def reset_offsets(request: web.Request) -> web.Response:
    message = await _engine(request).reset_connector_offsets(_name(request))
    return web.json_response({"message": message})


# ---- internal, distributed-mode endpoints ------------------------------------------------------


async def put_task_configs(request: web.Request) -> web.Response:
    """Internal: a follower owning the connector hands its task configs to the leader
    (Connect's ``ConnectorsResource.putTaskConfigs``, ``POST /connectors/{c}/tasks``)."""
    engine, name = _engine(request), _name(request)
    if not engine.mode.distributed:
        return await distributed_only(request)
    body = await json_body(request, numbers_as_text=True)
    if not isinstance(body, list) or not all(isinstance(c, dict) for c in body):
        raise BadRequest("The request body must be a JSON array of task configs (objects)")
    configs = [string_map(c, [f"java.util.ArrayList[{i}]"]) for i, c in enumerate(body)]
    await _signed(request, engine)
    await engine.put_task_configs(name, configs)
    return web.Response(status=204)


_STANDALONE_REFUSALS = {
    "tasks": "Kafka Connect in standalone mode does not support externally setting task configurations.",
    "fence": "Kafka Connect in standalone mode does not support exactly-once source connectors.",
}


async def distributed_only(request: web.Request) -> web.Response:
    """Connect's standalone herder throws UnsupportedOperationException here: a 500 with its message."""
    raise RestError(500, _STANDALONE_REFUSALS[request.path.rstrip("/").rsplit("/", 1)[-1]])


async def fence_zombies(request: web.Request) -> web.Response:
    """Internal: a round of zombie fencing for an exactly-once source connector, done by the leader
    (Connect's ``fenceZombies``, ``PUT /connectors/{c}/fence``); signed."""
    engine, name = _engine(request), _name(request)
    if not engine.mode.distributed:
        return await distributed_only(request)
    await _signed(request, engine)
    await engine.fence_zombie_source_tasks(name)
    return web.Response(status=204)


async def _signed(request: web.Request, engine: Engine) -> None:
    """KIP-507: an internal request must carry a valid signature of its body under the session key
    (Connect's ``requestNotSignedProperly``: 400 unsigned or an algorithm not accepted, 503 before a key
    was read, 403 a wrong signature), checked before anything is written."""
    refusal = engine.mode.verify(request.headers, await request.read())
    if refusal is not None:
        log.warning(
            "rest.internal_request_refused", path=request.path, status=refusal.status, reason=refusal.message
        )
        raise RestError(refusal.status, refusal.message)


ROUTES: list[tuple[str, str, Handler]] = [
    ("GET", "/connectors", list_connectors),
    ("POST", "/connectors", create_connector),
    ("GET", "/connectors/{connector}", get_connector),
    ("DELETE", "/connectors/{connector}", delete_connector),
    ("GET", "/connector-cleanups", list_cleanups),
    ("GET", "/connectors/{connector}/config", get_config),
    ("PUT", "/connectors/{connector}/config", put_config),
    ("PATCH", "/connectors/{connector}/config", patch_config),
    ("GET", "/connectors/{connector}/status", get_status),
    ("GET", "/connectors/{connector}/tasks", get_tasks),
    ("GET", "/connectors/{connector}/tasks/{task}/status", get_task_status),
    ("POST", "/connectors/{connector}/tasks/{task}/restart", restart_task),
    ("POST", "/connectors/{connector}/restart", restart_connector),
    ("PUT", "/connectors/{connector}/pause", pause_connector),
    ("PUT", "/connectors/{connector}/resume", resume_connector),
    ("PUT", "/connectors/{connector}/stop", stop_connector),
    ("GET", "/connectors/{connector}/topics", get_topics),
    ("PUT", "/connectors/{connector}/topics/reset", reset_topics),
    ("GET", "/connectors/{connector}/offsets", get_offsets),
    ("PATCH", "/connectors/{connector}/offsets", alter_offsets),
    ("DELETE", "/connectors/{connector}/offsets", reset_offsets),
]

# Connect's InternalConnectResource: no @Consumes, so no 415 check
INTERNAL_ROUTES: list[tuple[str, str, Handler]] = [
    ("POST", "/connectors/{connector}/tasks", put_task_configs),
    ("PUT", "/connectors/{connector}/fence", fence_zombies),
]
