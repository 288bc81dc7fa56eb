"""A broker's authorization refusal in words a user can act on: who was refused, what, and the setting.

Kafka answers an ACL denial with a bare code (``TOPIC_AUTHORIZATION_FAILED``: "Not authorized to
access topics: [orders]"); which principal asked and which worker setting gave it that identity are
known only to the client. :func:`denial` names the principal (``User:<name>`` for a SASL PLAIN/SCRAM
login, the certificate's subject for TLS client authentication, ``User:ANONYMOUS`` otherwise), the
operation and resource, the ``kafka-acls`` grant that would allow it, and the setting to check
(``sasl.jaas.config`` under the client's prefix: ``producer.``, ``consumer.override.``, ...).
"""

from __future__ import annotations

from typing import Any

from aiokafka.errors import (
    ClusterAuthorizationFailedError,
    GroupAuthorizationFailedError,
    TopicAuthorizationFailedError,
    TransactionalIdAuthorizationFailed,
)

AUTHORIZATION_ERRORS = (
    TopicAuthorizationFailedError,
    GroupAuthorizationFailedError,
    ClusterAuthorizationFailedError,
    TransactionalIdAuthorizationFailed,
)
_KINDS: dict[type[BaseException], tuple[str, str]] = {  # resource kind, kafka-acls option
    TopicAuthorizationFailedError: ("topic", "--topic"),
    GroupAuthorizationFailedError: ("group", "--group"),
    ClusterAuthorizationFailedError: ("cluster", "--cluster"),
    TransactionalIdAuthorizationFailed: ("transactional id", "--transactional-id"),
}


def _inner(client: Any) -> Any:
    """The ``AIOKafkaClient`` of a producer (``client``), consumer or admin (``_client``), or ``client`` itself."""
    return getattr(client, "_client", None) or getattr(client, "client", None) or client


def principal(client: Any) -> str:
    """The principal the broker sees for ``client`` (an aiokafka producer, consumer, admin or client)."""
    inner = _inner(client)
    protocol = str(getattr(inner, "_security_protocol", "PLAINTEXT"))
    if protocol.startswith("SASL_"):
        if getattr(inner, "_sasl_mechanism", None) == "OAUTHBEARER":
            return "the principal of the OAUTHBEARER token"
        return f"User:{getattr(inner, '_sasl_plain_username', None) or 'ANONYMOUS'}"
    if protocol == "SSL":
        return "the subject of the TLS client certificate (User:ANONYMOUS without one)"
    return "User:ANONYMOUS"


def identity_setting(client: Any, prefix: str = "") -> str:
    """The setting that makes ``client`` the principal it is, under ``prefix`` (``producer.`` ...)."""
    protocol = str(getattr(_inner(client), "_security_protocol", "PLAINTEXT"))
    if protocol.startswith("SASL_"):
        key = "sasl.jaas.config"
    elif protocol == "SSL":
        key = "ssl.keystore.*"
    else:
        return f"{prefix}security.protocol (an unauthenticated client is User:ANONYMOUS)"
    if prefix.endswith("override."):  # a connector's own client: its override, or the worker's key under it
        return (
            f"{prefix}{key} (or {prefix.removesuffix('override.')}{key} when the connector does not set it)"
        )
    return f"{prefix}{key}"


def is_denial(exc: BaseException) -> bool:
    return isinstance(exc, AUTHORIZATION_ERRORS)


def denial(exc: BaseException, client: Any, *, operation: str, resource: str = "", prefix: str = "") -> str:
    """``principal X is not authorized to OPERATION topic 'orders' (...)``: grant it, or check the setting.

    ``operation`` is Kafka's ACL operation (``WRITE``, ``READ``, ``DESCRIBE``, ``CREATE``); ``resource``
    the topic, group or transactional id (empty for the cluster); ``prefix`` the client's key prefix.
    """
    kind, option = next((v for t, v in _KINDS.items() if isinstance(exc, t)), ("resource", "--topic"))
    who = principal(client)
    target = kind if not resource else f"{kind} '{resource}'"
    grant_to = who if who.startswith("User:") else "<principal>"
    grant = (
        f"kafka-acls --add --allow-principal {grant_to} --operation {operation.capitalize()} "
        f"{option}{'' if not resource else ' ' + resource}"
    )
    return (
        f"principal {who} is not authorized to {operation.upper()} {target} ({type(exc).__name__}): grant it "
        f"({grant}) or give this client a principal that has it: check {identity_setting(client, prefix)}"
    )
