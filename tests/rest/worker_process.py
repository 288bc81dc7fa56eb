"""A ``connect-engine standalone`` worker in a child process, for end-to-end tests."""

from __future__ import annotations

import asyncio
import collections
import signal
import sys
from pathlib import Path

import aiohttp

READY_TIMEOUT_S = 20


LOG_LINES_KEPT = 2000


class Worker:
    """A worker process whose stderr is read for as long as it runs.

    An unread pipe fills (64 KiB on Linux) and the worker's next log line then blocks its whole
    event loop: a worker that logs a little more than usual would stop delivering mid-test.
    """

    def __init__(self, process: asyncio.subprocess.Process, url: str) -> None:
        self.process = process
        self.url = url
        self.log: collections.deque[str] = collections.deque(maxlen=LOG_LINES_KEPT)
        self._drain = asyncio.create_task(self._read_stderr())

    async def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        pending = b""
        while chunk := await self.process.stderr.read(65536):
            *lines, pending = (pending + chunk).split(b"\n")
            self.log.extend(line.decode(errors="replace") for line in lines)
        if pending:
            self.log.append(pending.decode(errors="replace"))

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
    before: list[str] = []  # the worker's INFO lines up to its "listening on" line (its URL)
    async with asyncio.timeout(READY_TIMEOUT_S):
        while b"listening on" not in (line := await process.stderr.readline()):
            assert line, "the worker exited before listening:\n" + "\n".join(before)
            before.append(line.decode(errors="replace").rstrip("\n"))
    worker = Worker(process, line.decode().rsplit(" ", 1)[1].strip())
    worker.log.extend(before)
    return worker
