"""Registering routes so requests match as Connect's Jersey router matches them.

* A single trailing ``/`` is accepted on every path (Jersey's templates end in ``(/)?``); some
  clients build URLs that way (one checks a connector exists with ``GET /connectors/{name}/``).
* ``HEAD`` is answered for every ``GET``: the same status and headers, no body.
* ``OPTIONS`` is answered for every path (Jersey's ``OptionsMethodProcessor``): 200 with an
  ``Allow`` header; with a plain-text body listing the methods when the client accepts
  ``text/plain`` best (as ``*/*`` does), else an empty body.
* Connect's JSON resources (``/connectors``, ``/connector-plugins``, ``/admin/loggers``; class-level
  ``@Consumes(APPLICATION_JSON)``) answer 415 to a request with a body whose ``Content-Type`` is not
  JSON, before anything else runs. A body without ``Content-Type`` is read as JSON, as Jersey does.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from functools import wraps

from aiohttp import web

from engine.rest.errors import RestError

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
Route = tuple[str, str, Handler]

UNSUPPORTED_MEDIA_TYPE = "HTTP 415 Unsupported Media Type"

# Jersey collects the allowed methods in a java.util.HashSet of at most 7 strings: it iterates them
# in the order of their hash buckets (PUT and PATCH share one; PUT is added first).
_JAVA_HASHSET_ORDER = ("HEAD", "DELETE", "POST", "GET", "OPTIONS", "PUT", "PATCH")


def _media_type(value: str) -> tuple[str, str] | None:
    """``type/subtype`` of a media type, lower-cased, parameters dropped; None when malformed."""
    kind, _, subtype = value.split(";", 1)[0].strip().lower().partition("/")
    return (kind, subtype) if kind and subtype else None


def _compatible(value: str, wanted: tuple[str, str]) -> bool:
    """JAX-RS ``MediaType.isCompatible``: equal types, or a wildcard on either side."""
    media = _media_type(value)
    if media is None:
        return False
    return (media[0] == "*" or wanted[0] == "*" or media[0] == wanted[0]) and (
        media[1] == "*" or wanted[1] == "*" or media[1] == wanted[1]
    )


def consumes_json(handler: Handler) -> Handler:
    """``@Consumes(APPLICATION_JSON)``: 415 when the request says its body is anything but JSON.

    Only a request that has a body: Jersey checks bodiless ones too, but some clients (aiohttp's)
    label an empty ``PUT .../pause`` ``application/octet-stream``, and refusing that helps no one.
    """

    @wraps(handler)
    async def checked(request: web.Request) -> web.StreamResponse:
        content_type = request.headers.get("Content-Type")
        if (
            request.body_exists
            and content_type is not None
            and not _compatible(content_type, ("application", "json"))
        ):
            raise RestError(415, UNSUPPORTED_MEDIA_TYPE)
        return await handler(request)

    return checked


def _accepted(accept: str) -> list[tuple[str, float]]:
    """The Accept header's media types with their quality, best first (Jersey's acceptable media types)."""
    types: list[tuple[str, float]] = []
    for entry in (e.strip() for e in accept.split(",") if e.strip()):
        media, *params = (p.strip() for p in entry.split(";"))
        quality = 1.0
        for param in params:
            key, _, raw = param.partition("=")
            if key.strip().lower() == "q":
                try:
                    quality = float(raw)
                except ValueError:
                    quality = 0.0
        types.append((media, quality))
    return sorted(types, key=lambda t: -t[1]) or [("*/*", 1.0)]


def _concreteness(media: str) -> int:
    parsed = _media_type(media) or ("*", "*")
    return (parsed[0] != "*") + (parsed[1] != "*")


def _wants_plain_text(accepted: list[tuple[str, float]]) -> bool:
    """Whether Jersey picks its plain-text OPTIONS answer: the most concrete acceptable match wins, then
    the higher quality; on a tie the plain-text method (it matches ``text/plain`` exactly)."""
    best: tuple[int, float, int] | None = None
    for media, quality in accepted:
        if quality <= 0:
            continue
        candidates = [(_concreteness(media), quality, 0)]
        if _compatible(media, ("text", "plain")):
            candidates.append((2, quality, 1))
        for candidate in candidates:
            best = candidate if best is None or candidate > best else best
    return best is not None and best[2] == 1


def _options(methods: Iterable[str]) -> Handler:
    allowed = {*methods, "OPTIONS"}
    if "GET" in allowed:
        allowed.add("HEAD")
    ordered = [m for m in _JAVA_HASHSET_ORDER if m in allowed]

    async def answer(request: web.Request) -> web.StreamResponse:
        headers = {"Allow": ",".join(ordered)}
        accepted = _accepted(request.headers.get("Accept", ""))
        if _wants_plain_text(accepted):
            return web.Response(text=", ".join(ordered), content_type="text/plain", headers=headers)
        return web.Response(headers={**headers, "Content-Type": accepted[0][0]})

    return answer


def add_routes(app: web.Application, routes: Iterable[Route]) -> None:
    """Each route at its path and its path with a trailing slash, HEAD beside GET, OPTIONS per path."""
    by_path: dict[str, list[Route]] = {}
    for route in routes:
        by_path.setdefault(route[1], []).append(route)
    for path, path_routes in by_path.items():
        variants = [path] if path.endswith("/") else [path, path + "/"]
        methods = [method for method, _, _ in path_routes]
        for variant in variants:
            for method, _, handler in path_routes:
                app.router.add_route(method, variant, handler)
                if method == "GET":
                    app.router.add_route("HEAD", variant, handler)
            app.router.add_route("OPTIONS", variant, _options(methods))
