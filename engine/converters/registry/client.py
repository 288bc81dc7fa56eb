"""A Confluent Schema Registry REST client (the subset the converters use): asynchronous, cached, retrying.

Every call is a coroutine over aiohttp, so a slow or failing registry holds up only the record
waiting for that schema, never the event loop (the converters await it off their synchronous
path, see ``RegistryConverter``). A round trip happens once per new schema or id, never per
record: answers are cached (schema -> id per subject, id -> schema, subject -> latest).

Failures: a connection error or a retriable status (408, 429, 500, 502, 503, 504, as
confluent-kafka's client) moves on to the next ``schema.registry.url``; when every URL failed,
the client waits (full-jitter exponential backoff from ``retries.wait.ms`` to
``retries.max.wait.ms``) and tries them all again, ``max.retries`` times, then gives up with a
:class:`RegistryError` holding the registry's last answer. Any other status is the registry's
verdict and is raised at once. The ``a``-less methods (``register``, ``by_id`` ...) run the same
coroutine to completion for callers without an event loop. Credentials go in the
``Authorization`` header only; no message or log line this module makes holds them, nor a URL's
user-info.
"""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import json
import random
import ssl
import urllib.parse
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar

import aiohttp
import structlog

from engine.api.errors import DataException

__all__ = ["RegisteredSchema", "RegistryError", "RetryPolicy", "SchemaRegistryClient", "redact_url"]

log = structlog.get_logger(__name__)

T = TypeVar("T")

_CONTENT_TYPE: Final = "application/vnd.schemaregistry.v1+json"
RETRIABLE_STATUSES: Final = frozenset({408, 429, 500, 502, 503, 504})


class RegistryError(DataException):
    """A registry answered with an error, or could not be reached; ``error_code`` is its code (0 if none)."""

    def __init__(self, message: str, *, status: int = 0, error_code: int = 0) -> None:
        super().__init__(message)
        self.status = status
        self.error_code = error_code


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """``max.retries``, ``retries.wait.ms``, ``retries.max.wait.ms`` (confluent-kafka's keys and defaults)."""

    max_retries: int = 3
    wait_ms: int = 1000
    max_wait_ms: int = 20000

    def backoff_s(self, retries_done: int) -> float:
        """Full jitter: a random wait up to ``wait_ms * 2**retries_done``, capped at ``max_wait_ms``."""
        return random.random() * min(self.wait_ms * 2.0**retries_done, self.max_wait_ms) / 1000


@dataclass(frozen=True, slots=True)
class RegisteredSchema:
    """A schema as the registry stores it: ``schema_type`` is ``AVRO``, ``PROTOBUF`` or ``JSON``."""

    schema_id: int
    schema: str
    schema_type: str = "AVRO"
    subject: str | None = None
    version: int | None = None
    references: tuple[Mapping[str, Any], ...] = field(default=())


def redact_url(url: str) -> str:
    """``url`` without user-info (``https://user:secret@host`` -> ``https://host``), for messages."""
    parts = urllib.parse.urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urllib.parse.urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))


def run_blocking(coro: Coroutine[Any, Any, T]) -> T:
    """``coro`` run to completion from synchronous code: on a fresh loop here, or, if this thread
    already runs a loop (which must not be re-entered), on one in a helper thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="schema-registry") as pool:
        return pool.submit(asyncio.run, coro).result()


class SchemaRegistryClient:
    """Registry calls with caches; ``urls`` in order, ``headers`` sent with every request."""

    def __init__(
        self,
        urls: Sequence[str],
        *,
        headers: Mapping[str, str] | None = None,
        ssl_context: ssl.SSLContext | None = None,
        timeout_s: float = 30.0,
        retry: RetryPolicy | None = None,
    ) -> None:
        if not urls:
            raise DataException("schema.registry.url has no URL")
        self.urls = [u.rstrip("/") for u in urls]
        self._headers = dict(headers or {})
        self._ssl = ssl_context
        self._timeout = timeout_s
        self.retry = retry or RetryPolicy()
        self._ids: dict[tuple[str, str, str, bool, tuple[Any, ...]], int] = {}
        self._schemas: dict[tuple[int, str | None], RegisteredSchema] = {}
        self._latest: dict[str, RegisteredSchema] = {}
        self._first = 0  # the URL that answered last: tried first next time
        self.requests = 0  # round trips made; the tests read it to check the caches

    # -- HTTP ------------------------------------------------------------------------------------

    def _request_headers(self, base: str, with_body: bool) -> dict[str, str]:
        headers = {"Accept": _CONTENT_TYPE, **self._headers}
        if with_body:
            headers["Content-Type"] = _CONTENT_TYPE
        parts = urllib.parse.urlsplit(base)
        if parts.username is not None and "Authorization" not in headers:
            user = urllib.parse.unquote(parts.username)
            secret = urllib.parse.unquote(parts.password or "")
            headers["Authorization"] = "Basic " + base64.b64encode(f"{user}:{secret}".encode()).decode()
        return headers

    async def _request(self, method: str, path: str, body: Mapping[str, Any] | None = None) -> Any:
        """One call, over every URL and ``max.retries`` rounds; the answer's JSON or a ``RegistryError``."""
        data = None if body is None else json.dumps(body).encode()
        timeout = aiohttp.ClientTimeout(total=self._timeout)
        last = ""
        last_status = 0
        last_code = 0
        attempts = self.retry.max_retries + 1
        # one session per call: the client is used from whichever loop needs a schema (a task
        # host's, a test's), and a call happens once per new schema
        async with aiohttp.ClientSession(timeout=timeout) as session:
            for attempt in range(attempts):
                if attempt:
                    await asyncio.sleep(self.retry.backoff_s(attempt - 1))
                for step in range(len(self.urls)):
                    index = (self._first + step) % len(self.urls)
                    base = self.urls[index]
                    url = redact_url(base) + path
                    self.requests += 1
                    try:
                        async with session.request(
                            method,
                            url,
                            data=data,
                            headers=self._request_headers(base, data is not None),
                            ssl=self._ssl if self._ssl is not None else True,
                        ) as response:
                            raw = await response.read()
                            if response.status < 400:
                                self._first = index
                                return json.loads(raw or b"null")
                            error = _http_error(response.status, response.reason, raw, method, url)
                    except (aiohttp.ClientError, TimeoutError, OSError, ValueError) as exc:
                        last = f"{redact_url(base)}: {type(exc).__name__}: {exc}"
                        last_status = last_code = 0
                        log.warning(
                            "schema_registry.unreachable",
                            url=redact_url(base),
                            request=f"{method} {path}",
                            attempt=attempt + 1,
                            error=repr(exc),
                        )
                        continue
                    if error.status not in RETRIABLE_STATUSES:
                        raise error
                    last, last_status, last_code = str(error), error.status, error.error_code
                    log.warning(
                        "schema_registry.retriable_answer",
                        url=redact_url(base),
                        request=f"{method} {path}",
                        attempt=attempt + 1,
                        status=error.status,
                    )
        tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"
        if last_status:
            raise RegistryError(
                f"Schema registry gave up after {tries}; its last answer: {last}",
                status=last_status,
                error_code=last_code,
            )
        raise RegistryError(
            f"Schema registry unreachable at {', '.join(redact_url(u) for u in self.urls)} after {tries}: {last}"
        )

    # -- calls -----------------------------------------------------------------------------------

    async def aregister(
        self,
        subject: str,
        schema: str,
        schema_type: str,
        *,
        normalize: bool = False,
        references: Sequence[Mapping[str, Any]] = (),
    ) -> int:
        """``POST /subjects/{subject}/versions``: the id (cached per subject and schema text)."""
        key = (subject, schema_type, schema, normalize, _refs_key(references))
        found = self._ids.get(key)
        if found is not None:
            return found
        suffix = "?normalize=true" if normalize else ""
        answer = await self._request(
            "POST", f"/subjects/{_quote(subject)}/versions{suffix}", _body(schema, schema_type, references)
        )
        schema_id = int(answer["id"])
        self._ids[key] = schema_id
        self._schemas.setdefault(
            (schema_id, None),
            RegisteredSchema(schema_id, schema, schema_type, subject, None, tuple(references)),
        )
        return schema_id

    async def alookup(
        self,
        subject: str,
        schema: str,
        schema_type: str,
        *,
        normalize: bool = False,
        references: Sequence[Mapping[str, Any]] = (),
    ) -> int:
        """``POST /subjects/{subject}``: the id of an already registered schema (cached)."""
        key = (subject, schema_type, schema, normalize, _refs_key(references))
        found = self._ids.get(key)
        if found is not None:
            return found
        suffix = "?normalize=true" if normalize else ""
        answer = await self._request(
            "POST", f"/subjects/{_quote(subject)}{suffix}", _body(schema, schema_type, references)
        )
        schema_id = int(answer["id"])
        self._ids[key] = schema_id
        return schema_id

    async def aby_id(
        self, schema_id: int, *, subject: str | None = None, fmt: str | None = None
    ) -> RegisteredSchema:
        """``GET /schemas/ids/{id}`` (cached per id and format); ``fmt`` is the registry's ``format``."""
        found = self._schemas.get((schema_id, fmt))
        if found is not None:
            return found
        query = {k: v for k, v in (("subject", subject), ("format", fmt)) if v}
        path = f"/schemas/ids/{schema_id}"
        if query:
            path += "?" + urllib.parse.urlencode(query)
        answer = await self._request("GET", path)
        registered = RegisteredSchema(
            schema_id,
            answer["schema"],
            answer.get("schemaType") or "AVRO",
            subject,
            None,
            tuple(answer.get("references") or ()),
        )
        self._schemas[(schema_id, fmt)] = registered
        return registered

    async def aversion(self, subject: str, version: int | str, *, fmt: str | None = None) -> RegisteredSchema:
        """``GET /subjects/{subject}/versions/{version}`` (``latest`` cached for the client's life,
        as Confluent's; a numbered version is immutable and cached too)."""
        cache_key = f"{subject}\x00{version}\x00{fmt or ''}"
        found = self._latest.get(cache_key)
        if found is not None:
            return found
        path = f"/subjects/{_quote(subject)}/versions/{version}"
        if fmt:
            path += "?" + urllib.parse.urlencode({"format": fmt})
        answer = await self._request("GET", path)
        registered = RegisteredSchema(
            int(answer["id"]),
            answer["schema"],
            answer.get("schemaType") or "AVRO",
            subject,
            answer.get("version"),
            tuple(answer.get("references") or ()),
        )
        self._latest[cache_key] = registered
        return registered

    async def alatest(self, subject: str, *, fmt: str | None = None) -> RegisteredSchema:
        """``GET /subjects/{subject}/versions/latest`` (cached for the client's life, as Confluent's)."""
        return await self.aversion(subject, "latest", fmt=fmt)

    async def acompatible(
        self,
        subject: str,
        schema: str,
        schema_type: str,
        version: str = "latest",
        *,
        references: Sequence[Mapping[str, Any]] = (),
    ) -> bool:
        """``POST /compatibility/subjects/{subject}/versions/{version}``."""
        answer = await self._request(
            "POST",
            f"/compatibility/subjects/{_quote(subject)}/versions/{version}",
            _body(schema, schema_type, references),
        )
        return bool(answer.get("is_compatible"))

    # -- the same, for callers without a loop ------------------------------------------------------

    def register(self, subject: str, schema: str, schema_type: str, *, normalize: bool = False) -> int:
        return run_blocking(self.aregister(subject, schema, schema_type, normalize=normalize))

    def lookup(self, subject: str, schema: str, schema_type: str, *, normalize: bool = False) -> int:
        return run_blocking(self.alookup(subject, schema, schema_type, normalize=normalize))

    def by_id(
        self, schema_id: int, *, subject: str | None = None, fmt: str | None = None
    ) -> RegisteredSchema:
        return run_blocking(self.aby_id(schema_id, subject=subject, fmt=fmt))

    def latest(self, subject: str) -> RegisteredSchema:
        return run_blocking(self.alatest(subject))

    def compatible(self, subject: str, schema: str, schema_type: str, version: str = "latest") -> bool:
        return run_blocking(self.acompatible(subject, schema, schema_type, version))


def _http_error(status: int, reason: str | None, raw: bytes, method: str, url: str) -> RegistryError:
    try:
        payload = json.loads(raw or b"{}")
    except ValueError:
        payload = {}
    code = int(payload.get("error_code", 0) or 0) if isinstance(payload, dict) else 0
    message = payload.get("message", reason) if isinstance(payload, dict) else reason
    return RegistryError(
        f"{message}; error code: {code or status} ({method} {url})", status=status, error_code=code or status
    )


def _body(schema: str, schema_type: str, references: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    body: dict[str, Any] = {"schema": schema}
    if schema_type != "AVRO":
        body["schemaType"] = schema_type
    if references:
        body["references"] = [dict(r) for r in references]
    return body


def _refs_key(references: Sequence[Mapping[str, Any]]) -> tuple[Any, ...]:
    return tuple((r.get("name"), r.get("subject"), r.get("version")) for r in references)


def _quote(subject: str) -> str:
    return urllib.parse.quote(subject, safe="")
