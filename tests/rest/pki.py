"""Certificates made per test session with ``cryptography``: a CA, a server certificate for
127.0.0.1/localhost and a client certificate, as PEM files, an encrypted PEM key and PKCS12 stores."""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

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


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _certificate(
    subject: str,
    key: ec.EllipticCurvePrivateKey,
    issuer: x509.Name,
    issuer_key: ec.EllipticCurvePrivateKey,
    *,
    ca: bool = False,
    server: bool = False,
    client: bool = False,
) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(issuer)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if ca:
        builder = builder.add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        builder = builder.add_extension(
            x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False
        )
    else:
        builder = builder.add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_key.public_key()), critical=False
        )
    if server:
        builder = builder.add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
    usages = ([ExtendedKeyUsageOID.SERVER_AUTH] if server else []) + (
        [ExtendedKeyUsageOID.CLIENT_AUTH] if client else []
    )
    if usages:
        builder = builder.add_extension(x509.ExtendedKeyUsage(usages), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def _pem_key(key: ec.EllipticCurvePrivateKey, password: str | None = None) -> bytes:
    encryption = (
        serialization.BestAvailableEncryption(password.encode()) if password else serialization.NoEncryption()
    )
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption)


def _pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def make_pki(directory: Path) -> Pki:
    directory.mkdir(parents=True, exist_ok=True)
    ca_key, other_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = _certificate("connect-engine test CA", ca_key, _name("connect-engine test CA"), ca_key, ca=True)
    other = _certificate("another CA", other_key, _name("another CA"), other_key, ca=True)
    server_key, client_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    # both workers of a test cluster use the server certificate, also as their client certificate
    server = _certificate("127.0.0.1", server_key, ca.subject, ca_key, server=True, client=True)
    client = _certificate("a REST client", client_key, ca.subject, ca_key, client=True)
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
    pki.ca_pem.write_bytes(_pem(ca))
    pki.other_ca_pem.write_bytes(_pem(other))
    pki.server_pem.write_bytes(_pem_key(server_key) + _pem(server) + _pem(ca))
    pki.server_key_encrypted.write_bytes(_pem_key(server_key, KEY_PASSWORD))
    pki.server_chain.write_bytes(_pem(server) + _pem(ca))
    pki.server_p12.write_bytes(
        pkcs12.serialize_key_and_certificates(
            b"server", server_key, server, [ca], serialization.BestAvailableEncryption(PASSWORD.encode())
        )
    )
    pki.truststore_p12.write_bytes(
        pkcs12.serialize_key_and_certificates(
            b"ca", None, None, [ca], serialization.BestAvailableEncryption(PASSWORD.encode())
        )
    )
    pki.client_pem.write_bytes(_pem_key(client_key) + _pem(client) + _pem(ca))
    pki.client_cert.write_bytes(_pem(client))
    pki.client_key.write_bytes(_pem_key(client_key))
    return pki
