"""An ``ssl.SSLContext`` from Kafka's ``ssl.*`` keys (``SslConfigs``), for a server or a client.

Kafka's semantics where Python can follow them: key stores as PKCS12 or PEM (a file, or inline
``ssl.keystore.certificate.chain`` + ``ssl.keystore.key``), trust stores likewise, Kafka's checks and
messages for which keys go together (``DefaultSslEngineFactory``), ``ssl.enabled.protocols`` as
the range of TLS versions, ``ssl.protocol`` capping it, ``ssl.cipher.suites`` by Java (IANA) or
OpenSSL names, ``ssl.endpoint.identification.algorithm`` (``https`` or empty) for clients and
``ssl.client.authentication`` for servers. Where Python cannot: a JKS file is refused with the
``keytool`` command that converts it; TLS 1.3 suites cannot be narrowed (OpenSSL keeps its own).

Every failure is a ``ConfigError`` that names the key as the user wrote it (``prefix`` + key),
never a secret's value. Python loads a certificate chain only from a file: a key that did not come
from a PEM file is written, encrypted with a one-off password, to a private temporary file that
is removed at once.
"""

from __future__ import annotations

import os
import re
import secrets
import ssl
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes
from cryptography.hazmat.primitives.serialization import pkcs12

from engine.errors import ConfigError

Purpose = Literal["server", "client"]

KEYSTORE_TYPE = "ssl.keystore.type"
KEYSTORE_LOCATION = "ssl.keystore.location"
KEYSTORE_PASSWORD = "ssl.keystore.password"
KEY_PASSWORD = "ssl.key.password"
KEYSTORE_CHAIN = "ssl.keystore.certificate.chain"
KEYSTORE_KEY = "ssl.keystore.key"
TRUSTSTORE_TYPE = "ssl.truststore.type"
TRUSTSTORE_LOCATION = "ssl.truststore.location"
TRUSTSTORE_PASSWORD = "ssl.truststore.password"
TRUSTSTORE_CERTIFICATES = "ssl.truststore.certificates"
PROTOCOL = "ssl.protocol"
ENABLED_PROTOCOLS = "ssl.enabled.protocols"
CIPHER_SUITES = "ssl.cipher.suites"
ENDPOINT_IDENTIFICATION = "ssl.endpoint.identification.algorithm"
CLIENT_AUTH = "ssl.client.authentication"
# Java's key and trust manager algorithms and random source: OpenSSL has one of each, so any
# value is accepted and means what Java's default means
JAVA_ONLY = ("ssl.keymanager.algorithm", "ssl.trustmanager.algorithm", "ssl.secure.random.implementation")
UNSUPPORTED = ("ssl.provider", "ssl.engine.factory.class")

SSL_DEFAULTS: dict[str, str] = {
    KEYSTORE_TYPE: "JKS",
    TRUSTSTORE_TYPE: "JKS",
    PROTOCOL: "TLSv1.3",
    ENABLED_PROTOCOLS: "TLSv1.2,TLSv1.3",
    ENDPOINT_IDENTIFICATION: "https",
    CLIENT_AUTH: "none",
}
KNOWN_KEYS = frozenset(
    {
        *SSL_DEFAULTS,
        KEYSTORE_LOCATION,
        KEYSTORE_PASSWORD,
        KEY_PASSWORD,
        KEYSTORE_CHAIN,
        KEYSTORE_KEY,
        TRUSTSTORE_LOCATION,
        TRUSTSTORE_PASSWORD,
        TRUSTSTORE_CERTIFICATES,
        CIPHER_SUITES,
        *JAVA_ONLY,
        *UNSUPPORTED,
    }
)

_VERSIONS = {
    "TLSv1": ssl.TLSVersion.TLSv1,
    "TLSv1.1": ssl.TLSVersion.TLSv1_1,
    "TLSv1.2": ssl.TLSVersion.TLSv1_2,
    "TLSv1.3": ssl.TLSVersion.TLSv1_3,
}
_PROTOCOL_CAPS = {
    "TLS": ssl.TLSVersion.TLSv1_3,
    "TLSv1.3": ssl.TLSVersion.TLSv1_3,
    "TLSv1.2": ssl.TLSVersion.TLSv1_2,
    "TLSv1.1": ssl.TLSVersion.TLSv1_1,
    "TLSv1": ssl.TLSVersion.TLSv1,
}
_CLIENT_AUTH = {"none": ssl.CERT_NONE, "requested": ssl.CERT_OPTIONAL, "required": ssl.CERT_REQUIRED}
_JKS_MAGIC = b"\xfe\xed\xfe\xed"
_PEM = b"-----BEGIN"
_PRIVATE_KEY = re.compile(rb"-----BEGIN ([A-Z ]*PRIVATE KEY)-----.*?-----END \1-----", re.DOTALL)


def prefixed_settings(properties: Mapping[str, str], prefix: str) -> tuple[dict[str, str], str]:
    """Kafka's ``AbstractConfig.valuesWithPrefixAllOrNothing``: when any key starts with ``prefix``,
    only those keys count (prefix removed); otherwise the plain ``ssl.*`` keys do.

    Returns the settings and the prefix their keys were written with (for error messages).
    """
    with_prefix = {k.removeprefix(prefix): v for k, v in properties.items() if k.startswith(prefix)}
    if with_prefix:
        return with_prefix, prefix
    return {k: v for k, v in properties.items() if k.startswith("ssl.")}, ""


def ssl_context(properties: Mapping[str, str], purpose: Purpose, *, prefix: str = "") -> ssl.SSLContext:
    """The TLS context ``properties`` (``ssl.*`` keys, unprefixed) describe, for a server or a client.

    ``prefix`` is only how the keys were written (``listeners.https.``), so errors name them exactly.
    """
    return _Builder(properties, prefix).build(purpose)


class _Builder:
    def __init__(self, properties: Mapping[str, str], prefix: str) -> None:
        # blank counts as unset, except for the endpoint identification algorithm (blank: off)
        self.properties = {k: (v or "").strip() for k, v in properties.items()}
        self.prefix = prefix

    def error(self, key: str, reason: str) -> ConfigError:
        name = self.prefix + key
        return ConfigError(f"Invalid value for configuration {name}: {reason}", errors={name: [reason]})

    def setting(self, key: str) -> str:
        return self.properties.get(key) or SSL_DEFAULTS[key]

    def build(self, purpose: Purpose) -> ssl.SSLContext:
        for key, value in self.properties.items():
            if key not in KNOWN_KEYS:
                raise self.error(key, "Unknown SSL configuration")
            if key in UNSUPPORTED and value:
                raise self.error(key, "Not supported: the engine's TLS is Python's ssl module (OpenSSL)")
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER if purpose == "server" else ssl.PROTOCOL_TLS_CLIENT)
        self._versions(context)
        self._ciphers(context)
        keystore = self._keystore()
        if keystore is not None:
            _load_chain(context, *keystore)
        elif purpose == "server":
            raise self.error(
                KEYSTORE_LOCATION,
                "An HTTPS listener needs a key store: set ssl.keystore.location "
                "or ssl.keystore.certificate.chain and ssl.keystore.key",
            )
        if purpose == "server":
            auth = self.setting(CLIENT_AUTH).lower()
            if auth not in _CLIENT_AUTH:
                raise self.error(CLIENT_AUTH, f"String must be one of: {', '.join(_CLIENT_AUTH)}")
            context.verify_mode = _CLIENT_AUTH[auth]
            if auth != "none":
                self._trust(context, ssl.Purpose.CLIENT_AUTH)
        else:
            algorithm = self.properties.get(ENDPOINT_IDENTIFICATION, "https")
            if algorithm.lower() not in ("https", ""):
                raise self.error(
                    ENDPOINT_IDENTIFICATION, "Only 'https' (verify the host name) or empty (do not)"
                )
            context.check_hostname = algorithm.lower() == "https"
            context.verify_mode = ssl.CERT_REQUIRED
            self._trust(context, ssl.Purpose.SERVER_AUTH)
        return context

    # ---- protocols and ciphers --------------------------------------------------------------

    def _versions(self, context: ssl.SSLContext) -> None:
        names = [n.strip() for n in self.setting(ENABLED_PROTOCOLS).split(",") if n.strip()]
        unknown = [n for n in names if n not in _VERSIONS]
        if unknown or not names:
            raise self.error(
                ENABLED_PROTOCOLS,
                f"Unsupported protocol {unknown[0] if unknown else '(none)'}; "
                f"supported: {', '.join(_VERSIONS)}",
            )
        protocol = self.setting(PROTOCOL)
        if protocol not in _PROTOCOL_CAPS:
            raise self.error(
                PROTOCOL, f"Unsupported protocol {protocol}; supported: {', '.join(_PROTOCOL_CAPS)}"
            )
        versions = sorted(_VERSIONS[n] for n in names)
        highest = min(versions[-1], _PROTOCOL_CAPS[protocol])
        if highest < versions[0]:
            raise self.error(PROTOCOL, f"{protocol} allows none of ssl.enabled.protocols {', '.join(names)}")
        try:
            context.minimum_version = versions[0]
            context.maximum_version = highest
        except (ValueError, ssl.SSLError) as exc:
            raise self.error(ENABLED_PROTOCOLS, f"OpenSSL refused the range: {exc}") from None

    def _ciphers(self, context: ssl.SSLContext) -> None:
        listed = [n.strip() for n in self.properties.get(CIPHER_SUITES, "").split(",") if n.strip()]
        if not listed:
            return
        known = _openssl_ciphers()
        tls12: list[str] = []
        tls13 = False
        for name in listed:
            openssl_name = name if name in known else _openssl_name(name)
            if openssl_name not in known:
                raise self.error(CIPHER_SUITES, f"Unsupported cipher suite {name}")
            if known[openssl_name] == "TLSv1.3":
                tls13 = True
            else:
                tls12.append(openssl_name)
        # as in Java, a protocol none of whose suites is listed cannot be negotiated
        if not tls12:
            context.minimum_version = ssl.TLSVersion.TLSv1_3
        elif not tls13:
            if context.minimum_version >= ssl.TLSVersion.TLSv1_3:
                raise self.error(CIPHER_SUITES, "No TLS 1.3 cipher suite listed, but only TLSv1.3 is enabled")
            context.maximum_version = min(context.maximum_version, ssl.TLSVersion.TLSv1_2)
        if tls12:
            context.set_ciphers(":".join(tls12))
        if not tls12 and context.maximum_version < ssl.TLSVersion.TLSv1_3:
            raise self.error(CIPHER_SUITES, "Only TLS 1.3 cipher suites listed, but TLSv1.3 is not enabled")

    # ---- key and trust stores ---------------------------------------------------------------

    def _keystore(self) -> tuple[PrivateKeyTypes, list[x509.Certificate]] | None:
        kind = self.setting(KEYSTORE_TYPE).upper()
        path = self.properties.get(KEYSTORE_LOCATION) or None
        password = self.properties.get(KEYSTORE_PASSWORD) or None
        key_password = self.properties.get(KEY_PASSWORD) or None
        chain = self.properties.get(KEYSTORE_CHAIN) or None
        key = self.properties.get(KEYSTORE_KEY) or None
        if key is not None:
            if kind != "PEM":
                raise self.error(
                    KEYSTORE_KEY,
                    f"SSL private key can be specified only for PEM, but key store type is {kind}.",
                )
            if chain is None:
                raise self.error(
                    KEYSTORE_CHAIN, "SSL private key is specified, but certificate chain is not specified."
                )
            if path is not None:
                raise self.error(
                    KEYSTORE_LOCATION, "Both SSL key store location and separate private key are specified."
                )
            if password is not None:
                raise self.error(
                    KEYSTORE_PASSWORD,
                    "SSL key store password cannot be specified with PEM format, "
                    "only key password may be specified.",
                )
            return self._pem_key(key.encode(), KEYSTORE_KEY, key_password), self._pem_certs(
                chain.encode(), KEYSTORE_CHAIN
            )
        if chain is not None:
            raise self.error(
                KEYSTORE_KEY, "SSL certificate chain is specified, but private key is not specified"
            )
        if path is None:
            if password is not None:
                raise self.error(
                    KEYSTORE_LOCATION, "SSL key store is not specified, but key store password is specified."
                )
            return None
        data = self._read(KEYSTORE_LOCATION, path)
        if kind == "PEM":
            if password is not None:
                raise self.error(
                    KEYSTORE_PASSWORD,
                    "SSL key store password cannot be specified with PEM format, "
                    "only key password may be specified",
                )
            return self._pem_key(data, KEYSTORE_LOCATION, key_password), self._pem_certs(
                data, KEYSTORE_LOCATION
            )
        if password is None:
            raise self.error(
                KEYSTORE_PASSWORD, "SSL key store is specified, but key store password is not specified."
            )
        self._check_binary_store(KEYSTORE_TYPE, kind, data, path)
        return self._pkcs12_key(data, path, kind, password, key_password)

    def _check_binary_store(self, type_key: str, kind: str, data: bytes, path: str) -> None:
        if kind not in ("JKS", "PKCS12"):
            raise self.error(
                type_key,
                f"Unsupported store type {kind}; supported: PKCS12, PEM (and JKS files "
                f"that are PKCS12, as Java reads them)",
            )
        if data.startswith(_JKS_MAGIC):
            raise self.error(
                type_key,
                f"{path} is a Java JKS store, which Python cannot read: convert it with "
                f"keytool -importkeystore -srckeystore {path} -destkeystore {path}.p12 "
                f"-deststoretype PKCS12, then set {self.prefix}{type_key}=PKCS12",
            )
        if data.lstrip().startswith(_PEM):
            raise self.error(type_key, f"{path} is a PEM file: set {self.prefix}{type_key}=PEM")

    def _pkcs12_key(
        self, data: bytes, path: str, kind: str, password: str, key_password: str | None
    ) -> tuple[PrivateKeyTypes, list[x509.Certificate]]:
        loaded = None
        for candidate in dict.fromkeys([password, key_password or password]):
            try:
                loaded = pkcs12.load_key_and_certificates(data, candidate.encode())
                break
            except ValueError:
                continue
        if loaded is None:
            raise self.error(
                KEYSTORE_PASSWORD,
                f"Failed to load SSL keystore {path} of type {kind}: the password "
                f"is wrong or the file is not a key store",
            )
        key, cert, extra = loaded
        if key is None or cert is None:
            raise self.error(
                KEYSTORE_LOCATION,
                f"Failed to load SSL keystore {path} of type {kind}: it holds no "
                f"private key with its certificate",
            )
        return key, [cert, *extra]

    def _pem_key(self, data: bytes, key: str, key_password: str | None) -> PrivateKeyTypes:
        found = [m.group(0) for m in _PRIVATE_KEY.finditer(data)]
        if not found:
            raise self.error(key, "Private key not provided")
        if len(found) != 1:
            raise self.error(key, f"Expected one private key, but found {len(found)}")
        encrypted = b"ENCRYPTED" in found[0]
        try:
            return serialization.load_pem_private_key(
                found[0], key_password.encode() if key_password else None
            )
        except TypeError:
            reason = (
                "it is encrypted and no key password is set"
                if encrypted
                else "it is not encrypted, but a key password is set"
            )
            raise self.error(KEY_PASSWORD, f"Private key could not be loaded: {reason}") from None
        except ValueError:
            if encrypted:
                raise self.error(
                    KEY_PASSWORD, "Private key could not be loaded: wrong key password"
                ) from None
            raise self.error(key, "Private key could not be loaded: malformed key") from None

    def _pem_certs(self, data: bytes, key: str) -> list[x509.Certificate]:
        try:
            certs = x509.load_pem_x509_certificates(data)
        except ValueError:
            certs = []
        if not certs:
            raise self.error(key, "At least one certificate expected, but none found")
        return certs

    def _trust(self, context: ssl.SSLContext, purpose: ssl.Purpose) -> None:
        """Whom to trust; no trust store means the system's CAs (Java's would be its cacerts)."""
        kind = self.setting(TRUSTSTORE_TYPE).upper()
        path = self.properties.get(TRUSTSTORE_LOCATION) or None
        password = self.properties.get(TRUSTSTORE_PASSWORD) or None
        certs_text = self.properties.get(TRUSTSTORE_CERTIFICATES) or None
        if certs_text is not None:
            if kind != "PEM":
                raise self.error(
                    TRUSTSTORE_CERTIFICATES,
                    f"SSL trust store certs can be specified only for PEM, but trust store type is {kind}.",
                )
            if path is not None:
                raise self.error(
                    TRUSTSTORE_LOCATION,
                    "Both SSL trust store location and separate trust certificates are specified.",
                )
            if password is not None:
                raise self.error(
                    TRUSTSTORE_PASSWORD, "SSL trust store password cannot be specified for PEM format."
                )
            certs = self._pem_certs(certs_text.encode(), TRUSTSTORE_CERTIFICATES)
        elif path is None:
            if password is not None:
                raise self.error(
                    TRUSTSTORE_LOCATION,
                    "SSL trust store is not specified, but trust store password is specified.",
                )
            context.load_default_certs(purpose)
            return
        else:
            data = self._read(TRUSTSTORE_LOCATION, path)
            if kind == "PEM":
                if password is not None:
                    raise self.error(
                        TRUSTSTORE_PASSWORD, "SSL trust store password cannot be specified for PEM format."
                    )
                certs = self._pem_certs(data, TRUSTSTORE_LOCATION)
            else:
                self._check_binary_store(TRUSTSTORE_TYPE, kind, data, path)
                certs = self._pkcs12_certs(data, path, kind, password)
        context.load_verify_locations(
            cadata=b"".join(c.public_bytes(serialization.Encoding.DER) for c in certs)
        )

    def _pkcs12_certs(
        self, data: bytes, path: str, kind: str, password: str | None
    ) -> list[x509.Certificate]:
        try:
            store = pkcs12.load_pkcs12(data, password.encode() if password else None)
        except ValueError:
            raise self.error(
                TRUSTSTORE_PASSWORD,
                f"Failed to load SSL truststore {path} of type {kind}: the "
                f"password is wrong or the file is not a trust store",
            ) from None
        certs = [c.certificate for c in store.additional_certs]
        if store.cert is not None:
            certs.insert(0, store.cert.certificate)
        if not certs:
            raise self.error(
                TRUSTSTORE_LOCATION, f"Failed to load SSL truststore {path}: no certificates in it"
            )
        return certs

    def _read(self, key: str, path: str) -> bytes:
        try:
            return Path(path).read_bytes()
        except OSError as exc:
            raise self.error(key, f"Cannot read {path}: {exc.strerror or exc}") from None


def _load_chain(context: ssl.SSLContext, key: PrivateKeyTypes, chain: list[x509.Certificate]) -> None:
    """``load_cert_chain`` reads files only: the key goes in encrypted with a one-off password."""
    password = secrets.token_urlsafe(24).encode()
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(password),
    )
    pem += b"".join(c.public_bytes(serialization.Encoding.PEM) for c in chain)
    descriptor, name = tempfile.mkstemp(prefix="connect-engine-tls-", suffix=".pem")  # mode 0600
    try:
        with os.fdopen(descriptor, "wb") as out:
            out.write(pem)
        context.load_cert_chain(name, password=password)
    finally:
        os.unlink(name)


def _openssl_ciphers() -> dict[str, str]:
    """Every cipher suite this OpenSSL offers: its name -> the protocol it belongs to."""
    probe = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    probe.set_ciphers("ALL:@SECLEVEL=0")
    return {c["name"]: c["protocol"] for c in probe.get_ciphers()}


_AEAD = re.compile(r"AES_(\d+)_(GCM|CCM)_(SHA\d+)")
_CBC = re.compile(r"AES_(\d+)_CBC_(SHA\d*)")


def _openssl_name(iana: str) -> str:
    """Java's (IANA) suite name as OpenSSL spells it: TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 ->
    ECDHE-RSA-AES128-GCM-SHA256 (TLS 1.3 suites have the same name in both)."""
    if "_WITH_" not in iana:
        return iana
    exchange, _, cipher = iana.removeprefix("TLS_").partition("_WITH_")
    if m := _AEAD.fullmatch(cipher):
        cipher = f"AES{m[1]}-{m[2]}-{m[3]}" if m[2] == "GCM" else f"AES{m[1]}-CCM"
    elif m := _CBC.fullmatch(cipher):
        cipher = f"AES{m[1]}-{m[2]}"
    elif cipher == "CHACHA20_POLY1305_SHA256":
        cipher = "CHACHA20-POLY1305"
    else:
        cipher = cipher.replace("_", "-")
    return cipher if exchange == "RSA" else f"{exchange.replace('_', '-')}-{cipher}"
