"""Starting an aiokafka client so that a refused TLS or SASL handshake says why.

aiokafka logs each failed bootstrap connection and raises only ``Unable to bootstrap from [...]``;
its SCRAM client raises ``KeyError('v')`` when a broker answers with an RFC 5802 ``e=`` error.
``start_client`` retries the first bootstrap address once, directly and bounded, to name the cause
and the setting to check (``ssl.truststore.*``, ``sasl.jaas.config``, ``sasl.mechanism``).
"""

from __future__ import annotations

import asyncio
import ssl
from typing import Any

from aiokafka.conn import create_conn
from aiokafka.errors import (
    KafkaConnectionError,
    KafkaError,
    SaslAuthenticationFailed,
    UnsupportedSaslMechanismError,
)
from aiokafka.protocol.metadata import MetadataRequest

from engine.config.kafka_clients.accounting import track

DIAGNOSE_TIMEOUT_S = 10.0


def _described(exc: BaseException) -> str:
    name, text = type(exc).__name__, str(exc)
    return text if text.startswith(name) else f"{name}: {text}" if text else name


def _hint(exc: BaseException, inner: Any) -> str:
    protocol = str(getattr(inner, "_security_protocol", "PLAINTEXT"))
    # aiokafka keeps sasl_mechanism="PLAIN" by default: it means something only on a SASL_* protocol
    mechanism = getattr(inner, "_sasl_mechanism", None) if protocol.startswith("SASL_") else None
    user = getattr(inner, "_sasl_plain_username", None)
    who = f" as '{user}'" if user and mechanism != "OAUTHBEARER" else ""
    if isinstance(exc, ssl.SSLError):
        return (
            f"the TLS handshake failed ({_described(exc)}): check ssl.truststore.* (the broker's certificate "
            "must be trusted), ssl.keystore.* and ssl.endpoint.identification.algorithm"
        )
    if isinstance(exc, UnsupportedSaslMechanismError):
        return f"the broker does not offer sasl.mechanism={mechanism} ({_described(exc)})"
    if mechanism and isinstance(exc, KafkaConnectionError):
        return (
            f"the broker closed the connection during the SASL handshake ({_described(exc)}): does it offer "
            f"sasl.mechanism={mechanism} on a security.protocol={protocol} listener?"
        )
    if isinstance(exc, KafkaConnectionError):
        return (
            f"the broker closed the connection ({_described(exc)}): this client uses security.protocol="
            f"{protocol}; does the listener speak it? A TLS listener drops a client that does not start TLS, a "
            "SASL listener one that does not log in"
        )
    if isinstance(exc, SaslAuthenticationFailed | KeyError | ValueError):
        return f"SASL {mechanism} authentication{who} was refused ({_described(exc)}): check sasl.jaas.config"
    if isinstance(exc, TimeoutError):
        return (
            f"no answer within {DIAGNOSE_TIMEOUT_S:g} s (security.protocol="
            f"{getattr(inner, '_security_protocol', '?')}: does the listener speak it?)"
        )
    return _described(exc)


def _inner(client: Any) -> Any:
    """The ``AIOKafkaClient`` inside a producer (``client``), consumer or admin client (``_client``)."""
    return getattr(client, "_client", None) or getattr(client, "client", None)


async def diagnose(client: Any) -> str | None:
    """Why the client's first bootstrap address refuses it, or None if it connects now."""
    inner = _inner(client)
    hosts = getattr(inner, "hosts", None)
    if inner is None or not hosts:
        return None
    host, port, _ = hosts[0]
    conn: Any = None
    try:
        async with asyncio.timeout(DIAGNOSE_TIMEOUT_S):
            conn = await create_conn(
                host,
                port,
                client_id=getattr(inner, "_client_id", "connect-engine"),
                request_timeout_ms=int(DIAGNOSE_TIMEOUT_S * 1000),
                ssl_context=inner._ssl_context,
                security_protocol=inner._security_protocol,
                sasl_mechanism=inner._sasl_mechanism,
                sasl_plain_username=inner._sasl_plain_username,
                sasl_plain_password=inner._sasl_plain_password,
                sasl_oauth_token_provider=inner._sasl_oauth_token_provider,
            )
        # a SASL listener answers ApiVersions before any login, then drops a client that asks for more
        async with asyncio.timeout(DIAGNOSE_TIMEOUT_S):
            await conn.send(MetadataRequest([]))
    except (OSError, KafkaError, TimeoutError, KeyError, ValueError) as exc:
        return f"{host}:{port}: {_hint(exc, inner)}"
    finally:
        if conn is not None:
            conn.close()
    return None


async def start_client(client: Any) -> None:
    """``await client.start()``; a failed bootstrap or SASL exchange raises a ``KafkaError`` naming its cause."""
    try:
        await client.start()
        track(client)  # Connect's client metrics: connections and bytes (``accounting``)
    except KafkaConnectionError as exc:
        reason = await diagnose(client)
        if reason is None:
            raise
        raise KafkaConnectionError(f"{exc.args[0] if exc.args else 'Unable to bootstrap'}: {reason}") from exc
    except (KeyError, ValueError) as exc:  # aiokafka's SCRAM client reading a server's error message
        if not _raised_in_sasl(exc):
            raise
        raise SaslAuthenticationFailed(_hint(exc, _inner(client))) from exc


_SASL_FRAMES = frozenset(
    {
        "_do_sasl_handshake",
        "authenticator_scram",
        "process_server_first_message",
        "process_server_final_message",
        "step",
    }
)


def _raised_in_sasl(exc: BaseException) -> bool:
    """Whether ``exc`` came out of aiokafka's SASL exchange (and not, say, a malformed address)."""
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_name in _SASL_FRAMES:
            return True
        tb = tb.tb_next
    return False
