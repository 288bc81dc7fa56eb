"""Certificates for the TLS tests, made with ``engine.testing.kafka.tls``: a CA, a certificate it
signed, client key stores in every flavour the engine reads (PKCS12, PEM files, inline and encrypted
PEM) and a second CA nobody trusts. The broker side is Apache Kafka's own SSL listener
(``engine.testing.kafka``).
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs12

from engine.testing.kafka.tls import CertificateAuthority, key_and_chain, key_pem, new_key, pem
from tests.integration.loopback_proxy import LoopbackProxy, pipe

PASSWORD = "changeit"


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
    ca, other = (
        CertificateAuthority.create("connect-engine test CA"),
        CertificateAuthority.create("some other CA"),
    )
    server_key, client_key = new_key(), new_key()
    server = ca.issue("broker", server_key, server=True)
    client = ca.issue("client", client_key, client=True)
    paths = {
        name: directory / name for name in ("ca.pem", "ca.p12", "other-ca.pem", "server.pem", "client.p12")
    }
    paths["ca.pem"].write_bytes(pem(ca.certificate))
    paths["other-ca.pem"].write_bytes(pem(other.certificate))
    paths["server.pem"].write_bytes(key_and_chain(server_key, server))
    encryption = serialization.BestAvailableEncryption(PASSWORD.encode())
    paths["ca.p12"].write_bytes(
        pkcs12.serialize_key_and_certificates(b"ca", None, None, [ca.certificate], encryption)
    )
    paths["client.p12"].write_bytes(
        pkcs12.serialize_key_and_certificates(b"client", client_key, client, [ca.certificate], encryption)
    )
    return Certificates(
        directory,
        paths["ca.pem"],
        paths["ca.p12"],
        paths["other-ca.pem"],
        paths["server.pem"],
        paths["client.p12"],
        key_pem(client_key, PASSWORD).decode(),
        (pem(client) + pem(ca.certificate)).decode(),
    )


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
