"""``connect-engine standalone``: Connect's ``connect-standalone`` on the embedded engine plus REST.

Worker properties select the logs and stores as for ``Engine``; connector files (``.properties``
or JSON ``{"name": ..., "config": {...}}``) are created, or updated, at start. SIGINT/SIGTERM stop
every connector and task with a plain ``stop()``: shutting a worker down never deletes anything.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

import structlog
from aiohttp import web

from engine.cli.worker_defaults import with_worker_defaults
from engine.config.listeners import parse_admin_listeners
from engine.config.properties import load_properties
from engine.configlog.factory import standalone_notice
from engine.engine import Engine
from engine.errors import ConfigError
from engine.rest.app import DEFAULT_REST_TIMEOUT_S, make_app
from engine.rest.auth import CREDENTIALS_FILE_KEY
from engine.rest.health import DEFAULT_HEALTH_TIMEOUT_S
from engine.rest.listening import admin_tls, bind, listeners_of, server_tls

log = structlog.get_logger(component="standalone")

REST_TIMEOUT_KEY = "rest.request.timeout.ms"


def read_connector_file(path: str) -> tuple[str, dict[str, str]]:
    """A connector's name and config from a ``.properties`` or JSON file."""
    if path.endswith(".json"):
        try:
            document = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"Could not read connector file {path}: {exc}") from None
        if not isinstance(document, dict):
            raise ConfigError(f"Connector file {path} must hold a JSON object")
        config = document.get("config", document)
        name = document.get("name", config.get("name") if isinstance(config, dict) else None)
        if not isinstance(config, dict):
            raise ConfigError(f"Connector file {path}: 'config' must be a JSON object")
    else:
        config = load_properties(path)
        name = config.get("name")
    if not isinstance(name, str) or not name:
        raise ConfigError(f"Connector file {path} names no connector (set 'name')")
    return name, {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in config.items()}


class StandaloneWorker:
    """Engine + REST server with Connect standalone's start-up and shutdown order."""

    def __init__(self, worker_properties: dict[str, str], connector_files: Sequence[str] = ()) -> None:
        self.properties = worker_properties
        self.connector_files = list(connector_files)
        self.engine = Engine(worker_properties)
        self._runner: web.AppRunner | None = None
        self._admin_runner: web.AppRunner | None = None
        self.bound: list[str] = []
        self.admin_bound: list[str] = []  # admin.listeners' URLs, when set (KIP-208)
        self.ready = asyncio.Event()  # set once started: /health says healthy, requests stop waiting
        self.health_timeout = DEFAULT_HEALTH_TIMEOUT_S

    async def start(self) -> None:
        connectors = [read_connector_file(path) for path in self.connector_files]  # fail before starting
        listeners = listeners_of(self.engine.worker)
        tls = server_tls(self.engine.worker)  # a bad key store stops the worker before anything starts
        admin_listeners = parse_admin_listeners(self.engine.worker.raw)
        admin_context = admin_tls(self.engine.worker, admin_listeners) if admin_listeners else None
        # REST listens first, as Connect's does: /health answers 503 "starting" until the worker is ready
        timeout = float(self.properties.get(REST_TIMEOUT_KEY, DEFAULT_REST_TIMEOUT_S * 1000)) / 1000
        credentials = self.engine.worker.get(CREDENTIALS_FILE_KEY)
        # admin.listeners unset: the admin endpoints on every listener; set: only on its own (none when empty)
        app = make_app(
            self.engine,
            rest_timeout=timeout,
            credentials_file=credentials,
            resources="all" if admin_listeners is None else "regular",
            ready=self.ready,
            health_timeout=self.health_timeout,
        )
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        self.bound = await bind(self._runner, listeners, tls)
        if admin_listeners:
            admin_app = make_app(
                self.engine,
                rest_timeout=timeout,
                credentials_file=credentials,
                resources="admin",
                ready=self.ready,
                health_timeout=self.health_timeout,
            )
            self._admin_runner = web.AppRunner(admin_app, access_log=None)
            await self._admin_runner.setup()
            self.admin_bound = await bind(self._admin_runner, admin_listeners, admin_context)
        log.info(
            "worker.listening",
            listeners=self.bound,
            admin_listeners=self.admin_bound,
            worker=self.engine.worker.worker_id,
        )
        if (notice := standalone_notice(self.engine.worker)) is not None:
            log.info("worker.config_storage", message=notice, worker=self.engine.worker.worker_id)
        await self.engine.start()
        for name, config in connectors:
            await self.engine.put_connector_config(name, config)
            log.info("worker.connector_file_applied", connector=name)
        self.ready.set()
        log.info(
            "worker.started",
            listeners=self.bound,
            admin_listeners=self.admin_bound,
            worker=self.engine.worker.worker_id,
        )

    async def stop(self) -> None:
        if self._admin_runner is not None:
            await self._admin_runner.cleanup()
            self._admin_runner = None
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        await self.engine.shutdown()
        if self.ready.is_set():  # a worker that never started says so in its one line, nothing more
            log.info("worker.stopped", worker=self.engine.worker.worker_id)

    async def run_until_signalled(self) -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        try:
            await self.start()
            sys.stderr.write(
                f"connect-engine worker {self.engine.worker.worker_id} listening on {', '.join(self.bound)}\n"
            )
            sys.stderr.flush()
            await stop.wait()
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)
            await self.stop()


def split_files(files: Sequence[str]) -> tuple[str | None, list[str]]:
    """The first file is the worker's properties unless it is a connector file (JSON, or has connector.class)."""
    if not files:
        return None, []
    first = files[0]
    if first.endswith(".json") or "connector.class" in load_properties(first):
        return None, list(files)
    return first, list(files[1:])


async def run_standalone(worker_file: str | None, connector_files: Sequence[str]) -> None:
    properties = load_properties(worker_file) if worker_file else {}
    await StandaloneWorker(with_worker_defaults(properties), connector_files).run_until_signalled()
