"""Reading request bodies and query parameters the way Connect's JAX-RS stack does."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from engine.rest.errors import BadRequest, RestError, json_error_message


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


def json_text(value: Any) -> str:
    """A JSON scalar as Jackson coerces it to a Java String."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def string_map(body: Any) -> dict[str, Any]:
    """Connect's String->String config map: scalars arrive as their JSON text; null stays null (validation reports it)."""
    if not isinstance(body, dict):
        raise BadRequest("The connector config must be a JSON object")
    return {key: value if value is None or isinstance(value, str) else json_text(value)
            for key, value in body.items()}
