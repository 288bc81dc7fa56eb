"""Connect's error model: every failure is ``{"error_code": <status>, "message": ...}``."""

from __future__ import annotations

import json

from aiohttp import web

from engine.errors import EngineError


class RestError(EngineError):
    """A request-level error with an explicit status (Connect's ``ConnectRestException``)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class BadRequest(RestError):
    def __init__(self, message: str) -> None:
        super().__init__(400, message)


def error_response(status: int, message: str, headers: dict[str, str] | None = None) -> web.Response:
    return web.json_response({"error_code": status, "message": message}, status=status, headers=headers)


def status_of(exc: BaseException) -> int:
    if isinstance(exc, RestError):
        return exc.status
    if isinstance(exc, EngineError):
        return exc.http_status
    return 500


def json_error_message(exc: json.JSONDecodeError) -> str:
    """Close to what Jackson says, so clients matching on the start of the message still work."""
    return f"Unexpected character in JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
