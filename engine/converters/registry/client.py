"""A Confluent Schema Registry REST client (the subset the converters use), with caches both ways.

Synchronous like the ``Converter`` interface it serves (Confluent's ``CachedSchemaRegistryClient``
blocks too): a round trip happens once per new schema or id, never per record, since every
answer is cached (schema -> id per subject, id -> schema, subject -> latest). Several
``schema.registry.url`` are tried in order on a connection failure. Credentials go in the
``Authorization`` header only; no message or log line this module makes holds them, nor a URL's
user-info.
"""

from __future__ import annotations

import base64
import json
import ssl
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from engine.api.errors import DataException

__all__ = ["RegisteredSchema", "RegistryError", "SchemaRegistryClient", "redact_url"]

_CONTENT_TYPE: Final = "application/vnd.schemaregistry.v1+json"


class RegistryError(DataException):
    """A registry answered with an error, or could not be reached; ``error_code`` is its code (0 if none)."""

    def __init__(self, message: str, *, status: int = 0, error_code: int = 0) -> None:
        super().__init__(message)
        self.status = status
        self.error_code = error_code


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


class SchemaRegistryClient:
    """Blocking registry calls with caches; ``urls`` in order, ``headers`` sent with every request."""

    def __init__(
        self,
        urls: Sequence[str],
        *,
        headers: Mapping[str, str] | None = None,
        ssl_context: ssl.SSLContext | None = None,
        timeout_s: float = 30.0,
    ) -> None:
        if not urls:
            raise DataException("schema.registry.url has no URL")
        self.urls = [u.rstrip("/") for u in urls]
        self._headers = dict(headers or {})
        self._ssl = ssl_context
        self._timeout = timeout_s
        self._ids: dict[tuple[str, str, str, bool], int] = {}
        self._schemas: dict[int, RegisteredSchema] = {}
        self._latest: dict[str, RegisteredSchema] = {}
        self.requests = 0  # round trips made; the tests read it to check the caches

    # -- HTTP ------------------------------------------------------------------------------------

    def _request(self, method: str, path: str, body: Mapping[str, Any] | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        last: Exception | None = None
        for base in self.urls:
            parts = urllib.parse.urlsplit(base)
            headers = {"Accept": _CONTENT_TYPE, **self._headers}
            if data is not None:
                headers["Content-Type"] = _CONTENT_TYPE
            if parts.username is not None and "Authorization" not in headers:
                user = urllib.parse.unquote(parts.username)
                secret = urllib.parse.unquote(parts.password or "")
                headers["Authorization"] = "Basic " + base64.b64encode(f"{user}:{secret}".encode()).decode()
            url = redact_url(base) + path
            request = urllib.request.Request(url, data=data, method=method, headers=headers)
            self.requests += 1
            try:
                with urllib.request.urlopen(request, timeout=self._timeout, context=self._ssl) as response:
                    return json.loads(response.read() or b"null")
            except urllib.error.HTTPError as exc:
                raise self._http_error(exc, method, url) from None
            except (OSError, ValueError) as exc:
                last = exc
                continue
        raise RegistryError(
            f"Schema registry unreachable at {', '.join(redact_url(u) for u in self.urls)}: "
            f"{type(last).__name__}: {last}"
        )

    @staticmethod
    def _http_error(exc: urllib.error.HTTPError, method: str, url: str) -> RegistryError:
        try:
            with exc:
                payload = json.loads(exc.read() or b"{}")
        except (ValueError, OSError):
            payload = {}
        code = int(payload.get("error_code", 0)) if isinstance(payload, dict) else 0
        message = payload.get("message", exc.reason) if isinstance(payload, dict) else exc.reason
        return RegistryError(
            f"{message}; error code: {code or exc.code} ({method} {url})",
            status=exc.code,
            error_code=code or exc.code,
        )

    # -- calls -----------------------------------------------------------------------------------

    def register(self, subject: str, schema: str, schema_type: str, *, normalize: bool = False) -> int:
        """``POST /subjects/{subject}/versions``: the id (cached per subject and schema text)."""
        key = (subject, schema_type, schema, normalize)
        found = self._ids.get(key)
        if found is not None:
            return found
        body: dict[str, Any] = {"schema": schema}
        if schema_type != "AVRO":
            body["schemaType"] = schema_type
        suffix = "?normalize=true" if normalize else ""
        answer = self._request("POST", f"/subjects/{_quote(subject)}/versions{suffix}", body)
        schema_id = int(answer["id"])
        self._ids[key] = schema_id
        self._schemas.setdefault(schema_id, RegisteredSchema(schema_id, schema, schema_type, subject))
        return schema_id

    def lookup(self, subject: str, schema: str, schema_type: str, *, normalize: bool = False) -> int:
        """``POST /subjects/{subject}``: the id of an already registered schema (cached)."""
        key = (subject, schema_type, schema, normalize)
        found = self._ids.get(key)
        if found is not None:
            return found
        body: dict[str, Any] = {"schema": schema}
        if schema_type != "AVRO":
            body["schemaType"] = schema_type
        suffix = "?normalize=true" if normalize else ""
        answer = self._request("POST", f"/subjects/{_quote(subject)}{suffix}", body)
        schema_id = int(answer["id"])
        self._ids[key] = schema_id
        return schema_id

    def by_id(
        self, schema_id: int, *, subject: str | None = None, fmt: str | None = None
    ) -> RegisteredSchema:
        """``GET /schemas/ids/{id}`` (cached); ``fmt`` is the registry's ``format`` (``serialized``)."""
        found = self._schemas.get(schema_id)
        if found is not None:
            return found
        query = {k: v for k, v in (("subject", subject), ("format", fmt)) if v}
        path = f"/schemas/ids/{schema_id}"
        if query:
            path += "?" + urllib.parse.urlencode(query)
        answer = self._request("GET", path)
        registered = RegisteredSchema(
            schema_id,
            answer["schema"],
            answer.get("schemaType") or "AVRO",
            subject,
            None,
            tuple(answer.get("references") or ()),
        )
        self._schemas[schema_id] = registered
        return registered

    def latest(self, subject: str) -> RegisteredSchema:
        """``GET /subjects/{subject}/versions/latest`` (cached for the client's life, as Confluent's)."""
        found = self._latest.get(subject)
        if found is not None:
            return found
        answer = self._request("GET", f"/subjects/{_quote(subject)}/versions/latest")
        registered = RegisteredSchema(
            int(answer["id"]),
            answer["schema"],
            answer.get("schemaType") or "AVRO",
            subject,
            answer.get("version"),
            tuple(answer.get("references") or ()),
        )
        self._latest[subject] = registered
        self._schemas.setdefault(registered.schema_id, registered)
        return registered

    def compatible(self, subject: str, schema: str, schema_type: str, version: str = "latest") -> bool:
        """``POST /compatibility/subjects/{subject}/versions/{version}``."""
        body: dict[str, Any] = {"schema": schema}
        if schema_type != "AVRO":
            body["schemaType"] = schema_type
        answer = self._request("POST", f"/compatibility/subjects/{_quote(subject)}/versions/{version}", body)
        return bool(answer.get("is_compatible"))


def _quote(subject: str) -> str:
    return urllib.parse.quote(subject, safe="")
