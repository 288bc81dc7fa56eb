"""``sasl.mechanism`` + ``sasl.jaas.config`` as aiokafka's ``sasl_*`` arguments.

PLAIN and SCRAM take ``username`` and ``password`` from ``PlainLoginModule`` / ``ScramLoginModule``.
OAUTHBEARER takes a token provider (aiokafka's ``sasl_oauth_token_provider``), chosen as Kafka
chooses its login callback handler (``sasl.login.callback.handler.class``):
- none: Kafka's *unsecured* tokens (``OAuthBearerUnsecuredLoginCallbackHandler``), an unsigned JWT
  built from the JAAS options ``unsecuredLoginStringClaim_<name>``, ``unsecuredLoginNumberClaim_<name>``,
  ``unsecuredLoginListClaim_<name>``, ``unsecuredLoginPrincipalClaimName`` (default ``sub``),
  ``unsecuredLoginLifetimeSeconds`` (3600), ``unsecuredLoginExtension_<name>``; for development only,
  as in Kafka;
- ``org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler``: KIP-768's
  client-credentials grant against ``sasl.oauthbearer.token.endpoint.url`` with the JAAS options
  ``clientId``, ``clientSecret`` and optional ``scope`` (HTTP Basic, as Kafka sends them);
- a dotted Python path: a subclass of ``aiokafka.abc.AbstractTokenProvider``, made with no arguments
  (an engine extension: a token source Kafka's handlers do not cover).
"""

from __future__ import annotations

import asyncio
import base64
import importlib
import json
import time
from collections.abc import Mapping
from typing import Any

from aiokafka.abc import AbstractTokenProvider

from engine.config.kafka_clients.jaas import LoginModule, client_login_module
from engine.errors import ConfigError

MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")
_MODULES = {
    "PLAIN": "PlainLoginModule",
    "SCRAM-SHA-256": "ScramLoginModule",
    "SCRAM-SHA-512": "ScramLoginModule",
    "OAUTHBEARER": "OAuthBearerLoginModule",
}
OAUTH_HANDLER = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"
_OAUTH_HANDLER_ALIASES = (
    OAUTH_HANDLER,
    "org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler",
)
_UNSECURED_HANDLER = (
    "org.apache.kafka.common.security.oauthbearer.internals.unsecured."
    "OAuthBearerUnsecuredLoginCallbackHandler"
)
_REFRESH_MARGIN_S = 60.0


def _bad(key: str, message: str) -> ConfigError:
    return ConfigError(f"Invalid value for configuration {key}: {message}", errors={key: [message]})


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class UnsecuredTokenProvider(AbstractTokenProvider):
    """Kafka's ``OAuthBearerUnsecuredLoginCallbackHandler``: an unsigned (``alg: none``) JWT, renewed
    when it nears expiry. Brokers accept it only with their unsecured validator (development)."""

    def __init__(self, options: Mapping[str, str]) -> None:
        self._options = dict(options)
        self._token: str | None = None
        self._expires = 0.0
        self._claims, self._lifetime = self._parse(options)

    @staticmethod
    def _parse(options: Mapping[str, str]) -> tuple[dict[str, Any], float]:
        claims: dict[str, Any] = {}
        for key, value in options.items():
            if key.startswith("unsecuredLoginStringClaim_"):
                claims[key.removeprefix("unsecuredLoginStringClaim_")] = value
            elif key.startswith("unsecuredLoginNumberClaim_"):
                try:
                    claims[key.removeprefix("unsecuredLoginNumberClaim_")] = (
                        float(value) if "." in value else int(value)
                    )
                except ValueError:
                    raise _bad("sasl.jaas.config", f"option {key}: '{value}' is not a number") from None
            elif key.startswith("unsecuredLoginListClaim_"):
                # Kafka: the first character is the separator, e.g. ",a,b"
                claims[key.removeprefix("unsecuredLoginListClaim_")] = (
                    [v for v in value[1:].split(value[:1]) if v] if value else []
                )
        principal = options.get("unsecuredLoginPrincipalClaimName", "sub")
        if not str(claims.get(principal, "")).strip():
            raise _bad(
                "sasl.jaas.config",
                f"OAuthBearerLoginModule needs option unsecuredLoginStringClaim_{principal} "
                "(the principal) for unsecured tokens",
            )
        try:
            lifetime = float(options.get("unsecuredLoginLifetimeSeconds", "3600"))
        except ValueError:
            raise _bad("sasl.jaas.config", "option unsecuredLoginLifetimeSeconds is not a number") from None
        return claims, lifetime

    async def token(self) -> str:
        now = time.time()
        if self._token is None or now >= self._expires - min(_REFRESH_MARGIN_S, self._lifetime / 2):
            claims = {**self._claims, "iat": round(now, 3), "exp": round(now + self._lifetime, 3)}
            header = _b64(json.dumps({"alg": "none"}).encode())
            self._token = f"{header}.{_b64(json.dumps(claims).encode())}."
            self._expires = now + self._lifetime
        return self._token

    def extensions(self) -> dict[str, str]:
        return {
            k.removeprefix("unsecuredLoginExtension_"): v
            for k, v in self._options.items()
            if k.startswith("unsecuredLoginExtension_")
        }


class ClientCredentialsTokenProvider(AbstractTokenProvider):
    """KIP-768's ``OAuthBearerLoginCallbackHandler``: an access token from the token endpoint by the
    client-credentials grant, cached until shortly before ``expires_in`` runs out."""

    def __init__(
        self, endpoint: str, client_id: str, client_secret: str, scope: str | None, timeout_s: float = 10.0
    ) -> None:
        self.endpoint = endpoint
        self._auth = (client_id, client_secret)
        self._scope = scope
        self._timeout_s = timeout_s
        self._token: str | None = None
        self._expires = 0.0
        self._lock = asyncio.Lock()

    async def token(self) -> str:
        async with self._lock:
            if self._token is None or time.time() >= self._expires - _REFRESH_MARGIN_S:
                self._token, lifetime = await self._fetch()
                self._expires = time.time() + lifetime
            return self._token

    async def _fetch(self) -> tuple[str, float]:
        import aiohttp

        form = {"grant_type": "client_credentials"}
        if self._scope:
            form["scope"] = self._scope
        # Kafka's HttpAccessTokenRetriever: Basic over "clientId:clientSecret", not URL-encoded (RFC 7617)
        basic = "Basic " + base64.b64encode(":".join(self._auth).encode()).decode()
        timeout = aiohttp.ClientTimeout(total=self._timeout_s)
        try:
            async with (
                aiohttp.ClientSession(timeout=timeout) as session,
                session.post(self.endpoint, data=form, headers={"Authorization": basic}) as response,
            ):
                body = await response.text()
                if response.status != 200:
                    raise ConfigError(
                        f"The OAuth token endpoint {self.endpoint} answered {response.status}: "
                        f"{body[:200]} (check sasl.jaas.config clientId/clientSecret)"
                    )
                answer = json.loads(body)
        except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
            raise ConfigError(
                f"Could not get a token from sasl.oauthbearer.token.endpoint.url {self.endpoint}: "
                f"{type(exc).__name__}: {exc}"
            ) from None
        token = answer.get("access_token") if isinstance(answer, dict) else None
        if not isinstance(token, str) or not token:
            raise ConfigError(f"The OAuth token endpoint {self.endpoint} answered without an access_token")
        return token, float(answer.get("expires_in") or 3600)


def _oauth_provider(props: Mapping[str, str], module: LoginModule) -> AbstractTokenProvider:
    handler = (props.get("sasl.login.callback.handler.class") or "").strip()
    if not handler or handler == _UNSECURED_HANDLER:
        return UnsecuredTokenProvider(module.options)
    if handler in _OAUTH_HANDLER_ALIASES:
        endpoint = (props.get("sasl.oauthbearer.token.endpoint.url") or "").strip()
        if not endpoint:
            raise _bad("sasl.oauthbearer.token.endpoint.url", f"required by {handler}")
        missing = [o for o in ("clientId", "clientSecret") if not module.options.get(o)]
        if missing:
            raise _bad(
                "sasl.jaas.config",
                f"OAuthBearerLoginModule needs option(s) {', '.join(missing)} for {handler}",
            )
        return ClientCredentialsTokenProvider(
            endpoint, module.options["clientId"], module.options["clientSecret"], module.options.get("scope")
        )
    module_name, _, class_name = handler.rpartition(".")
    try:
        cls = getattr(importlib.import_module(module_name), class_name) if module_name else None
    except (ImportError, AttributeError):
        cls = None
    if not (isinstance(cls, type) and issubclass(cls, AbstractTokenProvider)):
        raise _bad(
            "sasl.login.callback.handler.class",
            f"'{handler}' is neither Kafka's OAuthBearerLoginCallbackHandler "
            "nor an importable aiokafka AbstractTokenProvider subclass",
        )
    return cls()


def sasl_arguments(props: Mapping[str, str]) -> dict[str, Any]:
    """aiokafka's SASL arguments for a SASL_* protocol; ``ConfigError`` naming the key at fault."""
    mechanism = (props.get("sasl.mechanism") or "GSSAPI").strip().upper()  # GSSAPI: Java's default
    if mechanism not in MECHANISMS:
        raise _bad("sasl.mechanism", f"'{mechanism}' is not supported (supported: {', '.join(MECHANISMS)})")
    jaas = props.get("sasl.jaas.config")
    if not jaas:
        raise _bad(
            "sasl.jaas.config",
            f"required for sasl.mechanism={mechanism} (a JAAS file via "
            "java.security.auth.login.config is not read)",
        )
    module = client_login_module(jaas)
    if module.simple_name != _MODULES[mechanism]:
        raise _bad(
            "sasl.jaas.config", f"sasl.mechanism={mechanism} needs {_MODULES[mechanism]}, not {module.name}"
        )
    if mechanism == "OAUTHBEARER":
        return {"sasl_mechanism": mechanism, "sasl_oauth_token_provider": _oauth_provider(props, module)}
    missing = [o for o in ("username", "password") if o not in module.options]
    if missing:
        raise _bad("sasl.jaas.config", f"{module.simple_name} needs option(s) {', '.join(missing)}")
    return {
        "sasl_mechanism": mechanism,
        "sasl_plain_username": module.options["username"],
        "sasl_plain_password": module.options["password"],
    }
