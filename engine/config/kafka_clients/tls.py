"""Connect's ``ssl.*`` client keys as one ``ssl.SSLContext`` (Kafka's ``DefaultSslEngineFactory``).

Trust and key material come as PEM or PKCS12, from a file (``ssl.truststore.location``,
``ssl.keystore.location``) or, for PEM, inline (``ssl.truststore.certificates``,
``ssl.keystore.certificate.chain`` + ``ssl.keystore.key``). Java's default store type is JKS;
since Java 9 keytool writes PKCS12 even then, and Java's JKS loader reads PKCS12, so a JKS-typed
file is read as PKCS12 and only a real JKS file (magic ``FEEDFEED``) is refused, with the keytool
command that converts it. Without any store the system's trusted CAs are used, as Java uses its
``cacerts``.
"""

from __future__ import annotations

import os
import re
import ssl
import tempfile
import textwrap
from collections.abc import Mapping
from pathlib import Path

from engine.errors import ConfigError

_STORE_TYPES = ("JKS", "PKCS12", "PEM")
_JKS_MAGIC = b"\xfe\xed\xfe\xed"
_PROTOCOLS = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3,
              "TLSv1.1": ssl.TLSVersion.TLSv1_1, "TLSv1": ssl.TLSVersion.TLSv1}
# Java's defaults for the keys we accept only at their default (no Python equivalent to choose another)
JAVA_DEFAULTS = {"ssl.keymanager.algorithm": "SunX509", "ssl.trustmanager.algorithm": "PKIX",
                 "ssl.keystore.type": "JKS", "ssl.truststore.type": "JKS", "ssl.protocol": "TLSv1.3",
                 "ssl.enabled.protocols": "TLSv1.2,TLSv1.3", "ssl.endpoint.identification.algorithm": "https"}


_PEM_BLOCK = re.compile(r"-----BEGIN ([A-Z0-9 ]+)-----(.*?)-----END \1-----", re.DOTALL)


def normalized_pem(text: str) -> str:
    """PEM blocks re-wrapped: inline values from a .properties file arrive joined into one line
    (backslash continuations), which Kafka's own PEM parser accepts and OpenSSL does not. Encryption
    headers (``Proc-Type``) are kept on their own lines."""
    blocks = []
    for kind, body in _PEM_BLOCK.findall(text):
        headers = re.findall(r"([A-Za-z-]+: [^\s]+)", body)
        data = re.sub(r"\s+", "", re.sub(r"([A-Za-z-]+: [^\s]+)", "", body))
        head = "".join(h + "\n" for h in headers) + ("\n" if headers else "")
        blocks.append(f"-----BEGIN {kind}-----\n{head}{textwrap.fill(data, 64)}\n-----END {kind}-----\n")
    return "".join(blocks)


def _bad(key: str, message: str) -> ConfigError:
    return ConfigError(f"Invalid value for configuration {key}: {message}", errors={key: [message]})


def _read(props: Mapping[str, str], key: str) -> bytes:
    path = props[key]
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise _bad(key, f"could not read '{path}': {exc.strerror or exc}") from None


def _store_type(props: Mapping[str, str], key: str) -> str:
    kind = (props.get(key) or JAVA_DEFAULTS[key]).strip().upper()
    if kind not in _STORE_TYPES:
        raise _bad(key, f"store type '{props.get(key)}' is not supported (PEM, PKCS12, or JKS files written "
                        "as PKCS12)")
    return kind


def _pkcs12(props: Mapping[str, str], location_key: str, password_key: str, kind: str) -> tuple[object, object, list[object]]:
    """(key, certificate, additional certificates) of a PKCS12 (or PKCS12-as-JKS) store."""
    from cryptography.hazmat.primitives.serialization import pkcs12

    data = _read(props, location_key)
    if data[:4] == _JKS_MAGIC:
        raise _bad(location_key, f"'{props[location_key]}' is a JKS keystore, which is not supported: convert it with "
                                 "'keytool -importkeystore -srckeystore <file> -destkeystore <file>.p12 -deststoretype "
                                 "PKCS12' and set the type to PKCS12")
    password = props.get(password_key)
    try:
        key, cert, extra = pkcs12.load_key_and_certificates(data, password.encode() if password else None)
    except ValueError as exc:
        raise _bad(location_key, f"could not load the {kind} store '{props[location_key]}' (wrong {password_key}?): "
                                 f"{exc}") from None
    return key, cert, list(extra)


def _pem_certs(certs: list[object]) -> str:
    from cryptography.hazmat.primitives.serialization import Encoding

    return "".join(c.public_bytes(Encoding.PEM).decode() for c in certs)  # type: ignore[attr-defined]


def _trust(context: ssl.SSLContext, props: Mapping[str, str]) -> None:
    inline = props.get("ssl.truststore.certificates")
    location = props.get("ssl.truststore.location")
    kind = _store_type(props, "ssl.truststore.type")
    if inline:
        if location:
            raise _bad("ssl.truststore.certificates", "set either ssl.truststore.certificates or "
                                                      "ssl.truststore.location, not both")
        if kind != "PEM":
            raise _bad("ssl.truststore.certificates", "inline certificates need ssl.truststore.type=PEM")
        pem = normalized_pem(inline)
        source = "ssl.truststore.certificates"
    elif location:
        source = "ssl.truststore.location"
        if kind == "PEM":
            pem = _read(props, source).decode("ascii", "replace")
        else:
            _, cert, extra = _pkcs12(props, source, "ssl.truststore.password", kind)
            pem = _pem_certs([c for c in (cert, *extra) if c is not None])
            if not pem:
                raise _bad(source, f"'{location}' holds no certificate")
    else:
        context.load_default_certs(ssl.Purpose.SERVER_AUTH)
        return
    try:
        context.load_verify_locations(cadata=pem)
    except (ssl.SSLError, ValueError) as exc:
        raise _bad(source, f"no usable PEM certificate: {exc}") from None


def _load_chain(context: ssl.SSLContext, chain_pem: bytes, key_pem: bytes, password: str | None, source: str) -> None:
    """``SSLContext`` reads key material from files only: a private 0600 file, removed at once."""
    with tempfile.TemporaryDirectory(prefix="connect-engine-tls-") as directory:
        path = os.path.join(directory, "keystore.pem")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(key_pem.rstrip() + b"\n" + chain_pem)
        try:
            context.load_cert_chain(path, password=password or None)
        except (ssl.SSLError, ValueError, OSError) as exc:
            raise _bad(source, f"could not load the client key and certificate (wrong ssl.key.password?): "
                               f"{exc}") from None


def _keystore(context: ssl.SSLContext, props: Mapping[str, str]) -> None:
    inline_key, inline_chain = props.get("ssl.keystore.key"), props.get("ssl.keystore.certificate.chain")
    location = props.get("ssl.keystore.location")
    key_password = props.get("ssl.key.password")
    if inline_key or inline_chain:
        if not (inline_key and inline_chain):
            missing = "ssl.keystore.certificate.chain" if inline_key else "ssl.keystore.key"
            raise _bad(missing, "ssl.keystore.key and ssl.keystore.certificate.chain go together")
        if location:
            raise _bad("ssl.keystore.key", "set either ssl.keystore.key or ssl.keystore.location, not both")
        if _store_type(props, "ssl.keystore.type") != "PEM":
            raise _bad("ssl.keystore.key", "an inline key needs ssl.keystore.type=PEM")
        _load_chain(context, normalized_pem(inline_chain).encode(), normalized_pem(inline_key).encode(), key_password,
                    "ssl.keystore.key")
        return
    if not location:
        return
    kind = _store_type(props, "ssl.keystore.type")
    if kind == "PEM":  # one file with the private key and the certificate chain
        data = _read(props, "ssl.keystore.location")
        _load_chain(context, data, b"", key_password, "ssl.keystore.location")
        return
    from cryptography.hazmat.primitives.serialization import (
        BestAvailableEncryption,
        Encoding,
        NoEncryption,
        PrivateFormat,
    )

    key, cert, extra = _pkcs12(props, "ssl.keystore.location", "ssl.keystore.password", kind)
    if key is None or cert is None:
        raise _bad("ssl.keystore.location", f"'{location}' holds no private key with its certificate")
    secret = os.urandom(16).hex()
    key_pem = key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8,  # type: ignore[attr-defined]
                                BestAvailableEncryption(secret.encode()) if secret else NoEncryption())
    _load_chain(context, _pem_certs([cert, *extra]).encode(), key_pem, secret, "ssl.keystore.location")


def _versions(context: ssl.SSLContext, props: Mapping[str, str]) -> None:
    raw = props.get("ssl.enabled.protocols") or JAVA_DEFAULTS["ssl.enabled.protocols"]
    names = [p.strip() for p in raw.split(",") if p.strip()]
    unknown = [p for p in names if p not in _PROTOCOLS]
    if unknown or not names:
        raise _bad("ssl.enabled.protocols", f"unknown protocol(s) {', '.join(unknown) or '(none)'}; "
                                            f"choose from {', '.join(_PROTOCOLS)}")
    versions = sorted(_PROTOCOLS[p] for p in names)
    context.minimum_version, context.maximum_version = versions[0], versions[-1]
    protocol = (props.get("ssl.protocol") or JAVA_DEFAULTS["ssl.protocol"]).strip()
    if protocol not in (*_PROTOCOLS, "TLS"):
        raise _bad("ssl.protocol", f"unknown protocol '{protocol}'")


def ssl_context(props: Mapping[str, str]) -> ssl.SSLContext:
    """The context for ``security.protocol`` SSL or SASL_SSL from Java's ``ssl.*`` keys (already
    resolved: no ``${...}`` left). ``ssl.endpoint.identification.algorithm`` empty turns off the
    host name check, as in Java; the certificate itself is always verified."""
    for key in ("ssl.keymanager.algorithm", "ssl.trustmanager.algorithm"):
        value = props.get(key)
        if value is not None and value.strip() != JAVA_DEFAULTS[key]:
            raise _bad(key, f"only Java's default {JAVA_DEFAULTS[key]} is supported")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    algorithm = props.get("ssl.endpoint.identification.algorithm", JAVA_DEFAULTS[
        "ssl.endpoint.identification.algorithm"]).strip().lower()
    if algorithm not in ("", "https"):
        raise _bad("ssl.endpoint.identification.algorithm", f"'{algorithm}' is not supported (https, or empty)")
    context.check_hostname = algorithm == "https"
    context.verify_mode = ssl.CERT_REQUIRED
    _versions(context, props)
    _trust(context, props)
    _keystore(context, props)
    return context
