"""A request aiohttp cannot parse (a NUL byte in a header) is answered 400 and logged at warning with
its reason, not as an unexplained "Error handling request" at error level."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator

import pytest
from aiohttp.test_utils import TestServer

from engine import Engine
from engine.observability.logs import configure_logging
from engine.rest.app import make_app


@pytest.fixture
def configured() -> Iterator[None]:
    configure_logging("INFO", json=True)
    yield
    for handler in list(logging.getLogger().handlers):
        if type(handler).__name__ == "_ToStructlog":
            logging.getLogger().removeHandler(handler)


@pytest.mark.usefixtures("configured")
async def test_a_nul_byte_in_a_header_is_a_warning_with_its_reason(
    engine: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    server = TestServer(make_app(engine), host="127.0.0.1")
    await server.start_server()
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(b"GET /connectors HTTP/1.1\r\nHost: x\r\nX-Bad: a\x00b\r\n\r\n")
        await writer.drain()
        answer = await reader.read()
        writer.close()
    finally:
        await server.close()
    assert answer.startswith(b"HTTP/1.0 400 Bad Request")
    events = [json.loads(line) for line in capsys.readouterr().err.splitlines() if line.startswith("{")]
    server_events = [e for e in events if e.get("component") == "aiohttp.server"]
    assert [(e["level"], e["event"]) for e in server_events] == [
        (
            "warning",
            "Malformed HTTP request from 127.0.0.1, answered 400: Invalid header value char: b'X-Bad: a\\x00b'",
        )
    ]
