"""Cross-origin requests, as Connect's ``RestServer`` sets up Jetty's ``CrossOriginFilter``.

Off unless ``access.control.allow.origin`` is set: a comma-separated list of origins, where ``*``
allows any and an entry with ``*`` inside is a wildcard (``https://*.example.com``).
``access.control.allow.methods`` replaces the default ``GET,POST,HEAD``. The filter's other
settings are Jetty 9.4's defaults, as Connect leaves them: allowed request headers
``X-Requested-With,Content-Type,Accept,Origin``, credentials allowed, preflight answers cached
1800 s, no exposed headers.

A matching origin gets ``Access-Control-Allow-Origin`` set to itself (also under ``*``) and
``Access-Control-Allow-Credentials: true``. A preflight (``OPTIONS`` with
``Access-Control-Request-Method``) asking for an allowed method and headers also gets the allowed
methods and headers and ``Access-Control-Max-Age``; any other preflight gets no CORS headers, which
the browser reads as a refusal. A preflight is answered here, with 200 and no body, before basic
authentication (browsers send no credentials on one); Jetty passes it on to the resource instead.
An origin that does not match changes nothing: the request is served, and the browser withholds
the answer from the page.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from aiohttp import hdrs, web

ALLOW_ORIGIN_KEY = "access.control.allow.origin"
ALLOW_METHODS_KEY = "access.control.allow.methods"
DEFAULT_METHODS = ("GET", "POST", "HEAD")
ALLOWED_HEADERS = ("X-Requested-With", "Content-Type", "Accept", "Origin")
MAX_AGE_S = 1800


def _split(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


class CrossOrigin:
    """The filter's settings and the middleware applying them."""

    def __init__(self, origins: str, methods: str | None = None) -> None:
        allowed = _split(origins)
        self.any_origin = "*" in allowed
        self._exact = frozenset(o for o in allowed if "*" not in o)
        self._wildcards = [
            re.compile(re.escape(o).replace(r"\*", ".*")) for o in allowed if "*" in o and o != "*"
        ]
        self.methods = _split(methods or "") or list(DEFAULT_METHODS)
        self._headers = frozenset(h.lower() for h in ALLOWED_HEADERS)

    @classmethod
    def from_worker(cls, worker: Mapping[str, str]) -> CrossOrigin | None:
        """None when ``access.control.allow.origin`` is blank: Connect adds no filter then."""
        origins = (worker.get(ALLOW_ORIGIN_KEY) or "").strip()
        return cls(origins, worker.get(ALLOW_METHODS_KEY)) if origins else None

    def origin_matches(self, header: str) -> bool:
        if self.any_origin:
            return True
        return any(
            origin in self._exact or any(w.fullmatch(origin) for w in self._wildcards)
            for origin in header.split(" ")
            if origin.strip()
        )

    def _simple(self, response: web.StreamResponse, origin: str) -> None:
        response.headers[hdrs.ACCESS_CONTROL_ALLOW_ORIGIN] = origin
        if not self.any_origin:
            response.headers.add(hdrs.VARY, hdrs.ORIGIN)
        response.headers[hdrs.ACCESS_CONTROL_ALLOW_CREDENTIALS] = "true"

    def _preflight(self, request: web.Request, origin: str) -> web.Response:
        response = web.Response(status=200)
        method = request.headers[hdrs.ACCESS_CONTROL_REQUEST_METHOD]
        asked = _split(request.headers.get(hdrs.ACCESS_CONTROL_REQUEST_HEADERS, ""))
        if method in self.methods and all(h.lower() in self._headers for h in asked):
            self._simple(response, origin)
            response.headers[hdrs.ACCESS_CONTROL_MAX_AGE] = str(MAX_AGE_S)
            response.headers[hdrs.ACCESS_CONTROL_ALLOW_METHODS] = ",".join(self.methods)
            response.headers[hdrs.ACCESS_CONTROL_ALLOW_HEADERS] = ",".join(ALLOWED_HEADERS)
        return response

    def middleware(self) -> Any:
        @web.middleware
        async def cross_origin(request: web.Request, handler: Any) -> web.StreamResponse:
            origin = request.headers.get(hdrs.ORIGIN)
            if origin is None or _is_websocket(request) or not self.origin_matches(origin):
                response: web.StreamResponse = await handler(request)
                return response
            if request.method == "OPTIONS" and hdrs.ACCESS_CONTROL_REQUEST_METHOD in request.headers:
                return self._preflight(request, origin)
            response = await handler(request)
            self._simple(response, origin)
            return response

        return cross_origin


def _is_websocket(request: web.Request) -> bool:
    """Jetty's filter leaves WebSocket upgrades alone."""
    return (
        "upgrade" in request.headers.get(hdrs.CONNECTION, "").lower()
        and request.headers.get(hdrs.UPGRADE, "").lower() == "websocket"
    )
