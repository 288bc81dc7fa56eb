"""A throw-away certificate authority and a broker certificate for 127.0.0.1/localhost, as PEM files.

Kafka reads PEM stores directly (``ssl.keystore.type=PEM``: an unencrypted PKCS#8 key followed by
its chain in one file), and so does the engine's ``ssl.*`` handling, so one CA file serves as the
trust store of the broker, the workers and the tests alike.
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


@dataclass(frozen=True, slots=True)
class BrokerCertificates:
    ca: Path  # the CA certificate: every client's trust store
    broker: Path  # the broker's key and chain: its PEM key store
    client: Path  # a client key and chain signed by the same CA (for ssl.client.auth)


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _sign(
    subject: str,
    key: ec.EllipticCurvePrivateKey,
    ca_key: ec.EllipticCurvePrivateKey,
    *,
    ca: bool = False,
    server: bool = False,
) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(_name("connect-engine Kafka CA"))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=30))
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
    else:
        builder = builder.add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        usage = ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH
        builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    return builder.sign(ca_key, hashes.SHA256())


def _key_and_chain(key: ec.EllipticCurvePrivateKey, *chain: x509.Certificate) -> bytes:
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return pem + b"".join(cert.public_bytes(serialization.Encoding.PEM) for cert in chain)


def make_certificates(directory: Path) -> BrokerCertificates:
    directory.mkdir(parents=True, exist_ok=True)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = _sign("connect-engine Kafka CA", ca_key, ca_key, ca=True)
    broker_key, client_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    found = BrokerCertificates(directory / "ca.pem", directory / "broker.pem", directory / "client.pem")
    found.ca.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    found.broker.write_bytes(
        _key_and_chain(broker_key, _sign("localhost", broker_key, ca_key, server=True), ca)
    )
    found.client.write_bytes(_key_and_chain(client_key, _sign("client", client_key, ca_key), ca))
    return found
