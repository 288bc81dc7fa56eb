"""Certificates for the TLS tests, made with ``cryptography``: a CA, a certificate it signed, client key
stores in every flavour the engine reads (PKCS12, PEM files, inline and encrypted PEM) and a second
CA nobody trusts. The broker side is Apache Kafka's own SSL listener (``engine.testing.kafka``).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import ipaddress
import ssl
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import NameOID

from tests.integration.loopback_proxy import LoopbackProxy, pipe

PASSWORD = "changeit"


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def _key_pem(key: ec.EllipticCurvePrivateKey, password: str | None = None) -> bytes:
    encryption = (serialization.BestAvailableEncryption(password.encode()) if password
                  else serialization.NoEncryption())
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption)


def _cert(subject: str, key: ec.EllipticCurvePrivateKey, issuer: str, issuer_key: ec.EllipticCurvePrivateKey, *,
          ca: bool) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    builder = (x509.CertificateBuilder().subject_name(_name(subject)).issuer_name(_name(issuer))
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=2))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if not ca:
        builder = builder.add_extension(x509.SubjectAlternativeName(
            [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


@dataclass(frozen=True)
class Certificates:
    """A test CA, a broker certificate it signed, a client key pair, and a second CA nobody uses."""

    directory: Path
    ca_pem: Path  # the truststore, PEM
    ca_p12: Path  # the truststore, PKCS12 (password PASSWORD)
    other_ca_pem: Path  # a CA that did not sign the broker: "untrusted"
    server_chain: Path  # a server key + certificate signed by the CA
    client_p12: Path  # a client keystore, PKCS12 (password PASSWORD)
    client_key_pem: str  # inline PEM (encrypted with PASSWORD)
    client_chain_pem: str


def make_certificates(directory: Path) -> Certificates:
    directory.mkdir(parents=True, exist_ok=True)
    ca_key, other_key, server_key, client_key = (ec.generate_private_key(ec.SECP256R1()) for _ in range(4))
    ca = _cert("connect-engine test CA", ca_key, "connect-engine test CA", ca_key, ca=True)
    other = _cert("some other CA", other_key, "some other CA", other_key, ca=True)
    server = _cert("broker", server_key, "connect-engine test CA", ca_key, ca=False)
    client = _cert("client", client_key, "connect-engine test CA", ca_key, ca=False)
    paths = {name: directory / name for name in ("ca.pem", "ca.p12", "other-ca.pem", "server.pem", "client.p12")}
    paths["ca.pem"].write_bytes(_pem(ca))
    paths["other-ca.pem"].write_bytes(_pem(other))
    paths["server.pem"].write_bytes(_key_pem(server_key) + _pem(server))
    encryption = serialization.BestAvailableEncryption(PASSWORD.encode())
    paths["ca.p12"].write_bytes(pkcs12.serialize_key_and_certificates(b"ca", None, None, [ca], encryption))
    paths["client.p12"].write_bytes(
        pkcs12.serialize_key_and_certificates(b"client", client_key, client, [ca], encryption))
    return Certificates(directory, paths["ca.pem"], paths["ca.p12"], paths["other-ca.pem"], paths["server.pem"],
                        paths["client.p12"], _key_pem(client_key, PASSWORD).decode(),
                        (_pem(client) + _pem(ca)).decode())


class TlsTerminator(LoopbackProxy):
    """Accepts TLS on ``port`` and pipes the plaintext to ``backend_port`` (the schema registry's TLS test
    puts one in front of the registry)."""

    name = "TLS terminator"

    def __init__(self, certificate_chain: Path, backend_port: int, port: int) -> None:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(certificate_chain)
        super().__init__(backend_port, port, context)
        self.handshakes = 0

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.handshakes += 1
        backend = await self._backend(writer)
        if backend is None:
            return
        backend_reader, backend_writer = backend
        try:
            await asyncio.gather(pipe(reader, backend_writer), pipe(backend_reader, writer))
        finally:
            self._writers -= {writer, backend_writer}


@contextlib.contextmanager
def terminating(certificate_chain: Path, backend_port: int, port: int) -> Iterator[TlsTerminator]:
    proxy = TlsTerminator(certificate_chain, backend_port, port)
    proxy.start()
    try:
        yield proxy
    finally:
        proxy.stop()
