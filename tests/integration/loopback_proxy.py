"""A TCP front on 127.0.0.1 that relays each connection to a broker's plain port, on its own loop in a thread.

The base of the TLS terminator (tls.py) and the SASL front (sasl_front.py): both accept a client on
``port``, open the broker's ``backend_port`` and pipe bytes; they differ only in what they do first.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import threading

HOST = "127.0.0.1"


class LoopbackProxy:
    """Serves ``_handle`` on ``port`` (TLS when given a context); ``start`` returns once it listens."""

    name = "proxy"

    def __init__(self, backend_port: int, port: int, context: ssl.SSLContext | None = None) -> None:
        self.port = port
        self.backend_port = backend_port
        self._context = context
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._server = self._loop.run_until_complete(
            asyncio.start_server(self._handle, HOST, self.port, ssl=self._context))
        self._ready.set()
        try:
            self._loop.run_forever()
        finally:
            self._loop.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        raise NotImplementedError

    async def _backend(self, writer: asyncio.StreamWriter) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
        """The broker's side of this client's connection (tracked for ``stop``); None, and the client closed, if
        the broker is not there."""
        try:
            backend_reader, backend_writer = await asyncio.open_connection(HOST, self.backend_port)
        except OSError:
            writer.close()
            return None
        self._writers |= {writer, backend_writer}
        return backend_reader, backend_writer

    def start(self) -> None:
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError(f"the {self.name} did not listen on {HOST}:{self.port}")

    def stop(self) -> None:
        async def close() -> None:
            if self._server is not None:
                self._server.close()
            for writer in list(self._writers):
                writer.close()
            await asyncio.sleep(0.05)
            self._loop.stop()

        self._loop.call_soon_threadsafe(lambda: self._loop.create_task(close()))
        self._thread.join(10)


async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Copy until either side closes; then close the writer."""
    with contextlib.suppress(OSError, ConnectionError, ssl.SSLError, asyncio.IncompleteReadError):
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    with contextlib.suppress(OSError, ConnectionError, ssl.SSLError, RuntimeError):
        writer.close()
