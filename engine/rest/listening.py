"""Binding the REST API to its ``listeners``, HTTPS ones with the worker's TLS keys
(Connect's ``RestServer.createConnector`` and ``SSLUtils.createServerSideSslContextFactory``)."""

from __future__ import annotations

import ssl

import structlog
from aiohttp import web

from engine.config.listeners import ADMIN_HTTPS_PREFIX, HTTPS, HTTPS_PREFIX, Listener, parse_listeners
from engine.config.ssl_context import prefixed_settings, ssl_context
from engine.config.worker import WorkerConfig

log = structlog.get_logger(component="rest")


def listeners_of(worker: WorkerConfig) -> list[Listener]:
    return parse_listeners(worker.raw["listeners"])


def server_tls(
    worker: WorkerConfig, listeners: list[Listener] | None = None, https_prefix: str = HTTPS_PREFIX
) -> ssl.SSLContext | None:
    """The HTTPS listeners' TLS context, or None without one. ``listeners.https.*`` keys (for the admin
    listeners ``admin.listeners.https.*``), when any is set, replace the plain ``ssl.*`` keys
    altogether (Kafka's ``valuesWithPrefixAllOrNothing``). Built before the worker starts, so a bad
    key store stops the start naming its key."""
    chosen = listeners_of(worker) if listeners is None else listeners
    if not any(listener.protocol == HTTPS for listener in chosen):
        return None
    settings, prefix = prefixed_settings(worker.raw, https_prefix)
    return ssl_context(worker.transformer.resolve(settings), "server", prefix=prefix)


def admin_tls(worker: WorkerConfig, listeners: list[Listener]) -> ssl.SSLContext | None:
    """The admin listeners' TLS context (``admin.listeners.https.*``, else the plain ``ssl.*`` keys)."""
    return server_tls(worker, listeners, ADMIN_HTTPS_PREFIX)


async def bind(runner: web.AppRunner, listeners: list[Listener], tls: ssl.SSLContext | None) -> list[str]:
    """Start one site per listener; the URLs they listen on (a port 0 listener's chosen port)."""
    bound = []
    for listener in listeners:
        before = len(runner.addresses)
        site = web.TCPSite(
            runner,
            listener.host or None,
            listener.port,
            ssl_context=tls if listener.protocol == HTTPS else None,
        )
        await site.start()
        port = runner.addresses[before][1] if len(runner.addresses) > before else listener.port
        bound.append(listener.url(port))
        log.info("rest.listener_started", listener=listener.url(), url=bound[-1])
    return bound
