"""Reading request bodies and query parameters the way Connect's JAX-RS stack does."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from engine.rest.errors import RestError, json_error_message


async def json_body(request: web.Request) -> Any:
    """The parsed body; malformed JSON is a 500, as Jackson's mapping errors are in Connect."""
    text = await request.text()
    if not text.strip():
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise RestError(500, json_error_message(exc)) from None


def query_flag(request: web.Request, name: str) -> bool:
    """``Boolean.valueOf``: only a case-insensitive "true" is true; absent is false."""
    return request.query.get(name, "false").strip().lower() == "true"
