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


_VALUE = "(JSON String, Number, Array, Object or token 'null', 'true' or 'false')"
_EXPECTED = {
    "Expecting property name enclosed in double quotes": "was expecting double-quote to start field name",
    "Expecting ':' delimiter": "was expecting a colon to separate field name and value",
    "Expecting value": f"expected a valid value {_VALUE}",
}


def _jackson_char(ch: str) -> str:
    """How Jackson quotes a character in its messages: ``'b' (code 98)``, ``(CTRL-CHAR, code 10)``."""
    code = ord(ch)
    return f"(CTRL-CHAR, code {code})" if code < 32 else f"'{ch}' (code {code})"


def json_error_message(exc: json.JSONDecodeError) -> str:
    """Jackson's message for the common syntax errors (``Unexpected character ('b' (code 98)): was
    expecting double-quote to start field name``, ``Unrecognized token 'nope': ...``), without the parser
    location Jackson appends; other errors say where, in Python's words."""
    text, pos = exc.doc, exc.pos
    if pos < len(text) and exc.msg in _EXPECTED:
        ch = text[pos]
        if exc.msg == "Expecting value" and (ch.isalpha() or ch == "_"):
            end = pos
            while end < len(text) and (text[end].isalnum() or text[end] in "_$"):
                end += 1
            return f"Unrecognized token '{text[pos:end]}': was expecting {_VALUE}"
        return f"Unexpected character ({_jackson_char(ch)}): {_EXPECTED[exc.msg]}"
    return f"Unexpected character in JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
