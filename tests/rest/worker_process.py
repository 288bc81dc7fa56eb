"""A ``connect-engine standalone`` worker in a child process, for end-to-end tests."""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path

import aiohttp

READY_TIMEOUT_S = 20


class Worker:
    def __init__(self, process: asyncio.subprocess.Process, url: str) -> None:
        self.process = process
        self.url = url

    async def get(self, path: str) -> tuple[int, object]:
        async with aiohttp.ClientSession() as session, session.get(self.url + path) as response:
            return response.status, await response.json()

    async def stop(self, sig: int = signal.SIGTERM) -> int:
        self.process.send_signal(sig)
        return await asyncio.wait_for(self.process.wait(), READY_TIMEOUT_S)


async def start_worker(*files: Path) -> Worker:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "engine.cli",
        "standalone",
        *map(str, files),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stderr is not None
    line = await asyncio.wait_for(process.stderr.readline(), READY_TIMEOUT_S)
    assert b"listening on" in line, line
    return Worker(process, line.decode().rsplit(" ", 1)[1].strip())
