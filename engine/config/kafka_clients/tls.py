"""The ``SSLContext`` of a Kafka client: Connect's ``ssl.*`` keys through the engine's one TLS builder
(``engine.config.ssl_context``, Kafka's ``DefaultSslEngineFactory`` semantics and messages, which the
HTTPS listeners use too: Connect reads the same top-level ``ssl.*`` keys for both).

What is the client's own: inline PEM values (``ssl.truststore.certificates``, ``ssl.keystore.key``,
``ssl.keystore.certificate.chain``) written over ``\\``-continued lines of a .properties file arrive
as one line, which Kafka's PEM parser accepts and OpenSSL does not; they are re-wrapped first.
"""

from __future__ import annotations

import re
import ssl
import textwrap
from collections.abc import Mapping

from engine.config.ssl_context import KEYSTORE_CHAIN, KEYSTORE_KEY, KNOWN_KEYS, TRUSTSTORE_CERTIFICATES
from engine.config.ssl_context import UNSUPPORTED as UNSUPPORTED_SSL
from engine.config.ssl_context import ssl_context as build_context

SSL_KEYS = KNOWN_KEYS - set(UNSUPPORTED_SSL)
INLINE_PEM = (TRUSTSTORE_CERTIFICATES, KEYSTORE_KEY, KEYSTORE_CHAIN)
_PEM_BLOCK = re.compile(r"-----BEGIN ([A-Z0-9 ]+)-----(.*?)-----END \1-----", re.DOTALL)
_HEADER = re.compile(r"([A-Za-z-]+: [^\s]+)")


def normalized_pem(text: str) -> str:
    """Every PEM block of ``text`` with its base64 re-wrapped at 64 columns; encryption headers
    (``Proc-Type``, ``DEK-Info``) kept on their own lines. Text without a block is returned as is."""
    blocks = []
    for kind, body in _PEM_BLOCK.findall(text):
        headers = _HEADER.findall(body)
        data = re.sub(r"\s+", "", _HEADER.sub("", body))
        head = "".join(h + "\n" for h in headers) + ("\n" if headers else "")
        blocks.append(f"-----BEGIN {kind}-----\n{head}{textwrap.fill(data, 64)}\n-----END {kind}-----\n")
    return "".join(blocks) or text


def client_context(props: Mapping[str, str]) -> ssl.SSLContext:
    """The context for ``security.protocol`` SSL or SASL_SSL from the ``ssl.*`` keys of ``props``
    (resolved; unprefixed: the caller renames keys in errors)."""
    ssl_props = {
        k: normalized_pem(v) if k in INLINE_PEM and v else v for k, v in props.items() if k.startswith("ssl.")
    }
    return build_context(ssl_props, "client")
