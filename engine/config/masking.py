"""Hiding secrets in configs before they are logged.

A key is secret when the connector's ``ConfigDef`` types it PASSWORD or, as a fallback for keys
it does not define, when its name mentions a password, secret or token, or it is one of the Kafka
client keys Kafka types PASSWORD (``sasl.jaas.config``, ``ssl.keystore.key`` ...), under any prefix
(``producer.override.sasl.jaas.config``), or a schema registry's credentials
(``value.converter.basic.auth.user.info``; user-info in a ``schema.registry.url`` is cut out).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any

from engine.api._invoke import invoke
from engine.api.config_def import ConfigDef, ConfigType, Password
from engine.config.kafka_clients.keys import SECRET_KEYS

_SECRET_WORDS = ("password", "secret", "token")
# Confluent's schema-registry serde keys it types PASSWORD, under any prefix (key.converter. ...)
_REGISTRY_SECRETS = ("basic.auth.user.info",)
_URL_USER_INFO = re.compile(r"(?<=://)[^/@,\s]*@")


def password_keys(config_def: ConfigDef | None) -> frozenset[str]:
    if config_def is None:
        return frozenset()
    return frozenset(name for name, key in config_def.config_keys.items() if key.type is ConfigType.PASSWORD)


def is_secret_key(key: str, passwords: Collection[str] = ()) -> bool:
    lowered = key.lower()
    return (
        key in passwords
        or any(word in lowered for word in _SECRET_WORDS)
        or any(lowered == k or lowered.endswith("." + k) for k in (*SECRET_KEYS, *_REGISTRY_SECRETS))
    )


def mask_config(config: Mapping[str, str | None], passwords: Collection[str] = ()) -> dict[str, str | None]:
    """A copy of ``config`` fit for a log line: secret values become ``[hidden]``."""
    return {
        k: (Password.HIDDEN if v is not None and is_secret_key(k, passwords) else _no_user_info(k, v))
        for k, v in config.items()
    }


def _no_user_info(key: str, value: str | None) -> str | None:
    """``schema.registry.url`` without the ``user:password@`` a URL may carry."""
    if value is None or not key.endswith("schema.registry.url") or not isinstance(value, str):
        return value
    return _URL_USER_INFO.sub(f"{Password.HIDDEN}@", value)


async def connector_password_keys(instance: Any) -> frozenset[str]:
    """The PASSWORD keys of a connector's ``config()``; none if it cannot say (user code may fail)."""
    try:
        config_def = await invoke(instance.config)
    except Exception:  # user code: fall back to the key-name rule
        return frozenset()
    return password_keys(config_def if isinstance(config_def, ConfigDef) else None)
