"""Certificates made per test session (``engine.testing.kafka.tls``): a CA, a server certificate for
127.0.0.1/localhost and a client certificate, as PEM files, an encrypted PEM key and PKCS12 stores."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs12

from engine.testing.kafka.tls import CertificateAuthority, key_and_chain, key_pem, new_key, pem

PASSWORD = "changeit"  # the stores' and the encrypted key's password
KEY_PASSWORD = "key-secret"


@dataclass(frozen=True)
class Pki:
    directory: Path
    ca_pem: Path  # the CA certificate: the trust store
    server_pem: Path  # server key + chain, one unencrypted PEM file (type PEM keystore)
    server_p12: Path  # the same as PKCS12, password PASSWORD
    server_key_encrypted: Path  # the server key alone, encrypted with KEY_PASSWORD
    server_chain: Path  # the server certificate chain alone
    client_pem: Path  # client key + chain
    client_cert: Path
    client_key: Path
    truststore_p12: Path  # the CA as a PKCS12 trust store, password PASSWORD
    other_ca_pem: Path  # a CA that signed nothing here


def make_pki(directory: Path) -> Pki:
    directory.mkdir(parents=True, exist_ok=True)
    ca, other = (
        CertificateAuthority.create("connect-engine test CA"),
        CertificateAuthority.create("another CA"),
    )
    server_key, client_key = new_key(), new_key()
    # both workers of a test cluster use the server certificate, also as their client certificate
    server = ca.issue("127.0.0.1", server_key, server=True, client=True)
    client = ca.issue("a REST client", client_key, client=True)
    pki = Pki(
        directory,
        directory / "ca.pem",
        directory / "server.pem",
        directory / "server.p12",
        directory / "server-key.pem",
        directory / "server-chain.pem",
        directory / "client.pem",
        directory / "client-cert.pem",
        directory / "client-key.pem",
        directory / "truststore.p12",
        directory / "other-ca.pem",
    )
    pki.ca_pem.write_bytes(pem(ca.certificate))
    pki.other_ca_pem.write_bytes(pem(other.certificate))
    pki.server_pem.write_bytes(key_and_chain(server_key, server, ca.certificate))
    pki.server_key_encrypted.write_bytes(key_pem(server_key, KEY_PASSWORD))
    pki.server_chain.write_bytes(pem(server) + pem(ca.certificate))
    encryption = serialization.BestAvailableEncryption(PASSWORD.encode())
    pki.server_p12.write_bytes(
        pkcs12.serialize_key_and_certificates(b"server", server_key, server, [ca.certificate], encryption)
    )
    pki.truststore_p12.write_bytes(
        pkcs12.serialize_key_and_certificates(b"ca", None, None, [ca.certificate], encryption)
    )
    pki.client_pem.write_bytes(key_and_chain(client_key, client, ca.certificate))
    pki.client_cert.write_bytes(pem(client))
    pki.client_key.write_bytes(key_pem(client_key))
    return pki
