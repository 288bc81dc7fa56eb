"""Embedded distributed workers for tests: an ``Engine`` in the test's process behind its own REST
API (followers forward task configs to the leader over it), on the session's broker."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from aiohttp import web

from engine import Engine
from engine.rest.app import make_app
from engine.testing.cluster import WorkerCluster, free_port

T = TypeVar("T")


async def serving(group: WorkerCluster, **options: Any) -> tuple[Engine, web.AppRunner]:
    """An embedded worker of ``group`` listening on a free port; ``options`` go to ``Engine``."""
    port = free_port()
    engine = Engine(group.properties(port), **options)
    runner = web.AppRunner(make_app(engine), access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    await engine.start()
    return engine, runner


async def until(check: Callable[[], Awaitable[T | None]], timeout: float = 60.0) -> T:
    """``check``'s first answer that is not None or false, polled every 0.2 s."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        found = await check()
        if found:
            return found
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.2)
