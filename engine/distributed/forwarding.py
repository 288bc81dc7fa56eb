"""Requests one worker sends another: REST calls forwarded to the leader (Kafka's ``RestClient``)."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Mapping
from typing import Any, Protocol
from urllib.parse import quote

import aiohttp
import orjson
import structlog

from engine.config.listeners import HTTPS_PREFIX
from engine.config.ssl_context import prefixed_settings, ssl_context
from engine.config.worker import WorkerConfig
from engine.errors import ConfigError, ForwardingFailed

log = structlog.get_logger(component="forwarding")

_TASK_CONFIGS_RETRY_S = 30.0
_BACKOFF_S = 0.25


class RestClient:
    """Connect's ``RestClient``: requests to other workers, over HTTPS with the worker's own TLS keys.

    The TLS context comes from the ``listeners.https.*`` keys, or the plain ``ssl.*`` ones when
    none is set (``SSLUtils.createClientSideSslContextFactory``): it trusts the configured trust
    store, presents the key store to a worker that asks for a client certificate, and checks host
    names unless ``ssl.endpoint.identification.algorithm`` is empty. As in Connect (KAFKA-14816)
    it is built on the first https URL only, so an http cluster never reads the TLS keys.
    """

    def __init__(self, worker: WorkerConfig) -> None:
        self._worker = worker
        self._ssl: ssl.SSLContext | None = None

    def tls(self) -> ssl.SSLContext:
        if self._ssl is None:
            settings, prefix = prefixed_settings(self._worker.raw, HTTPS_PREFIX)
            self._ssl = ssl_context(self._worker.transformer.resolve(settings), "client", prefix=prefix)
        return self._ssl

    async def send(
        self, method: str, url: str, *, body: bytes | None, headers: Mapping[str, str], timeout: float
    ) -> tuple[int, bytes, str]:
        """One HTTP request to another worker: its status, body and content type.

        Connection and TLS failures become Connect's 500 ``IO Error trying to forward REST request``.
        """
        try:
            tls: ssl.SSLContext | bool = self.tls() if url.lower().startswith("https://") else True
        except ConfigError as exc:  # Connect: 500 "Failed to start RestClient: ..."
            log.error("forwarding.tls_settings_invalid", reason=str(exc))
            raise ForwardingFailed(500, f"Failed to start RestClient: {exc}") from exc
        try:
            async with (
                aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as session,
                session.request(
                    method, url, data=body, headers=dict(headers), ssl=tls, allow_redirects=False
                ) as response,
            ):
                return response.status, await response.read(), response.content_type
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            raise ForwardingFailed(500, f"IO Error trying to forward REST request: {exc!r}") from exc


class Leadership(Protocol):
    """Who leads the group right now, as this worker last heard."""

    @property
    def is_leader(self) -> bool: ...

    @property
    def leader_url(self) -> str | None: ...

    @property
    def rest_client(self) -> RestClient: ...

    def sign(self, body: bytes) -> dict[str, str]: ...


async def forward_task_configs(cluster: Leadership, connector: str, configs: list[dict[str, str]]) -> bool:
    """A connector owned by a follower: its new task configs go to the leader, who writes them.

    Signed with the session key (KIP-507), re-signed on every attempt. Retried while the group has
    no leader, the leader is rebalancing, or the signature was refused because no key was read yet
    or the key was just rotated (Connect's herder retries task reconfiguration with a backoff too);
    gives up after 30 s with the last error (the connector's actor asks again later). False when this worker became the leader meanwhile:
    it writes them itself.
    """
    body = orjson.dumps(configs)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + _TASK_CONFIGS_RETRY_S
    last = "no leader known"
    while loop.time() < deadline:
        leader_url = cluster.leader_url
        if cluster.is_leader:
            return False
        if leader_url:
            url = f"{leader_url.rstrip('/')}/connectors/{quote(connector, safe='')}/tasks?forward=true"
            try:
                headers = {**_JSON, **cluster.sign(body)}
                status, answer, _ = await cluster.rest_client.send(
                    "POST", url, body=body, headers=headers, timeout=30.0
                )
            except ForwardingFailed as exc:
                last = str(exc)
            else:
                if status < 300:
                    return True
                last = f"{status}: {answer.decode(errors='replace')}"
                if status not in (400, 403, 409, 500, 503):
                    break
        await asyncio.sleep(_BACKOFF_S)
    log.warning("cluster.task_configs_not_forwarded", connector=connector, reason=last)  # the actor retries
    raise ForwardingFailed(500, f"Could not forward task configs of {connector} to the leader: {last}")


_JSON: dict[str, Any] = {"Content-Type": "application/json"}
