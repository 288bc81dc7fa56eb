"""Throw-away certificates as PEM: a certificate authority, the certificates it issues for
127.0.0.1/localhost, and the broker's set (``make_certificates``).

Kafka reads PEM stores directly (``ssl.keystore.type=PEM``: an unencrypted PKCS#8 key followed by
its chain in one file), and so does the engine's ``ssl.*`` handling, so one CA file serves as the
trust store of the broker, the workers and the tests alike. The test suite's other certificates
(``tests/rest/pki.py``, ``tests/integration/tls.py``) are made with the same pieces.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

Key = ec.EllipticCurvePrivateKey


@dataclass(frozen=True, slots=True)
class BrokerCertificates:
    ca: Path  # the CA certificate: every client's trust store
    broker: Path  # the broker's key and chain: its PEM key store
    client: Path  # a client key and chain signed by the same CA (for ssl.client.auth)


def new_key() -> Key:
    return ec.generate_private_key(ec.SECP256R1())


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _builder(subject: str, key: Key, issuer: x509.Name) -> x509.CertificateBuilder:
    """Valid from an hour ago (a little clock skew) for 30 days: longer than any test session."""
    now = datetime.datetime.now(datetime.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(issuer)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=30))
    )


@dataclass(frozen=True, slots=True)
class CertificateAuthority:
    """A self-signed CA that issues leaf certificates for 127.0.0.1 and localhost."""

    key: Key
    certificate: x509.Certificate

    @classmethod
    def create(cls, name: str) -> CertificateAuthority:
        key = new_key()
        usage = x509.KeyUsage(
            digital_signature=True,
            key_cert_sign=True,
            crl_sign=True,
            content_commitment=False,
            key_encipherment=False,
            data_encipherment=False,
            key_agreement=False,
            encipher_only=False,
            decipher_only=False,
        )
        certificate = (
            _builder(name, key, _name(name))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(usage, critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .sign(key, hashes.SHA256())
        )
        return cls(key, certificate)

    def issue(
        self, subject: str, key: Key, *, server: bool = False, client: bool = False
    ) -> x509.Certificate:
        """A leaf for 127.0.0.1 and localhost; ``server``/``client`` are its extended key usages."""
        builder = (
            _builder(subject, key, self.certificate.subject)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(self.key.public_key()), critical=False
            )
            .add_extension(
                x509.SubjectAlternativeName(
                    [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
                ),
                critical=False,
            )
        )
        usages = [ExtendedKeyUsageOID.SERVER_AUTH] if server else []
        usages += [ExtendedKeyUsageOID.CLIENT_AUTH] if client else []
        if usages:
            builder = builder.add_extension(x509.ExtendedKeyUsage(usages), critical=False)
        return builder.sign(self.key, hashes.SHA256())


def pem(certificate: x509.Certificate) -> bytes:
    return certificate.public_bytes(serialization.Encoding.PEM)


def key_pem(key: Key, password: str | None = None) -> bytes:
    """PKCS#8 PEM, encrypted with ``password`` if one is given."""
    encryption = (
        serialization.BestAvailableEncryption(password.encode()) if password else serialization.NoEncryption()
    )
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption)


def key_and_chain(key: Key, *chain: x509.Certificate) -> bytes:
    """One PEM key store: the unencrypted key, then its certificate chain."""
    return key_pem(key) + b"".join(pem(certificate) for certificate in chain)


def make_certificates(directory: Path) -> BrokerCertificates:
    directory.mkdir(parents=True, exist_ok=True)
    ca = CertificateAuthority.create("connect-engine Kafka CA")
    broker_key, client_key = new_key(), new_key()
    found = BrokerCertificates(directory / "ca.pem", directory / "broker.pem", directory / "client.pem")
    found.ca.write_bytes(pem(ca.certificate))
    found.broker.write_bytes(
        key_and_chain(broker_key, ca.issue("localhost", broker_key, server=True), ca.certificate)
    )
    found.client.write_bytes(
        key_and_chain(client_key, ca.issue("client", client_key, client=True), ca.certificate)
    )
    return found
