"""A faulty schema registry for tests: a real HTTP server in front of the real one (Apicurio) that
answers 503 a number of times, holds requests until told to let them through, is down for good,
or has lost one path.

It stands for a registry in trouble (overloaded, restarting, gone), which the real one cannot be
made to be on demand. It runs in a thread of its own, so an event loop it is meant to prove
unblocked cannot block it too.
"""

from __future__ import annotations

import http.server
import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager

DOWN_MESSAGE = "registry is down for maintenance"


class FaultyRegistry:
    """``fail_first`` requests get 503 (``error_code`` 50301); later ones wait for ``release`` (if
    ``hold``), then go to ``upstream`` and its answer comes back as it is."""

    def __init__(self, upstream: str, *, fail_first: int = 0, hold: bool = False) -> None:
        self.upstream = upstream.rstrip("/")
        self.fail_first = fail_first
        self.release = threading.Event()
        if not hold:
            self.release.set()
        self.requests = 0
        self.failed = 0
        self.held = threading.Event()  # set once a request is waiting for release
        self.refuse: str | None = None  # a path answered 404 (40402), as if the registry lost it
        self._lock = threading.Lock()
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def _handler(self) -> type[http.server.BaseHTTPRequestHandler]:
        registry = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the stdlib's name
                return

            def _answer(self) -> None:
                with registry._lock:
                    registry.requests += 1
                    fail = registry.failed < registry.fail_first
                    if fail:
                        registry.failed += 1
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0)) or None
                if fail:
                    self._send(503, json.dumps({"error_code": 50301, "message": DOWN_MESSAGE}).encode())
                    return
                if registry.refuse is not None and self.path.split("?")[0] == registry.refuse:
                    self._send(
                        404, json.dumps({"error_code": 40402, "message": "Version not found."}).encode()
                    )
                    return
                registry.held.set()
                registry.release.wait(60)
                request = urllib.request.Request(
                    registry.upstream + self.path,
                    data=body,
                    method=self.command,
                    headers={
                        k: v for k, v in self.headers.items() if k.lower() in ("content-type", "accept")
                    },
                )
                try:
                    with urllib.request.urlopen(request, timeout=30) as response:
                        self._send(response.status, response.read())
                except urllib.error.HTTPError as exc:
                    self._send(exc.code, exc.read())

            def _send(self, status: int, payload: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/vnd.schemaregistry.v1+json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PUT = do_DELETE = _answer

        return Handler

    @contextmanager
    def running(self) -> Iterator[FaultyRegistry]:
        thread = threading.Thread(target=self._server.serve_forever, name="faulty-registry", daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self.release.set()
            self._server.shutdown()
            self._server.server_close()
            thread.join(10)
