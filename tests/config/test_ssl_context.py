"""``engine.config.ssl_context``: Kafka's ``ssl.*`` keys make TLS contexts that complete real
handshakes over loopback, and bad keys are refused naming the key as written."""

from __future__ import annotations

import asyncio
import ssl
from pathlib import Path

import pytest

from engine.config.ssl_context import prefixed_settings, ssl_context
from engine.errors import ConfigError
from tests.rest.pki import KEY_PASSWORD, PASSWORD, Pki, make_pki


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


async def handshake(server: ssl.SSLContext, client: ssl.SSLContext) -> tuple[str, str, bool]:
    """TLS version, cipher, and whether the server saw a client certificate; raises when refused."""
    seen: list[bool] = []

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.append(writer.get_extra_info("peercert") is not None)
        writer.write(await reader.readline())
        await writer.drain()
        writer.close()

    listening = await asyncio.start_server(answer, "127.0.0.1", 0, ssl=server)
    port = listening.sockets[0].getsockname()[1]
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=client)
        writer.write(b"ping\n")
        echoed = await asyncio.wait_for(reader.readline(), 10)
        if not echoed:  # TLS 1.3: a refused client certificate shows as the server hanging up
            raise ConnectionResetError("the server closed the connection")
        assert echoed == b"ping\n"
        tls = writer.get_extra_info("ssl_object")
        version, cipher = tls.version(), tls.cipher()[0]
        writer.close()
        return version, cipher, seen[0]
    finally:
        listening.close()


def server_pem(pki: Pki, **extra: str) -> ssl.SSLContext:
    return ssl_context(
        {"ssl.keystore.type": "PEM", "ssl.keystore.location": str(pki.server_pem), **extra}, "server"
    )


def client_trusting(pki: Pki, **extra: str) -> ssl.SSLContext:
    return ssl_context(
        {"ssl.truststore.type": "PEM", "ssl.truststore.location": str(pki.ca_pem), **extra}, "client"
    )


async def test_key_stores_as_pem_file_pkcs12_and_inline_pem(pki: Pki) -> None:
    client = client_trusting(pki)
    stores = [
        {"ssl.keystore.type": "PEM", "ssl.keystore.location": str(pki.server_pem)},
        {
            "ssl.keystore.type": "PKCS12",
            "ssl.keystore.location": str(pki.server_p12),
            "ssl.keystore.password": PASSWORD,
        },
        # Java's default type JKS reads a PKCS12 file too
        {"ssl.keystore.location": str(pki.server_p12), "ssl.keystore.password": PASSWORD},
        {
            "ssl.keystore.type": "PEM",
            "ssl.keystore.certificate.chain": pki.server_chain.read_text(),
            "ssl.keystore.key": pki.server_key_encrypted.read_text(),
            "ssl.key.password": KEY_PASSWORD,
        },
    ]
    for store in stores:
        version, _, _ = await handshake(ssl_context(store, "server"), client)
        assert version == "TLSv1.3"


async def test_trust_stores_as_pkcs12_and_inline_pem(pki: Pki) -> None:
    server = server_pem(pki)
    for trust in (
        {
            "ssl.truststore.type": "PKCS12",
            "ssl.truststore.location": str(pki.truststore_p12),
            "ssl.truststore.password": PASSWORD,
        },
        {"ssl.truststore.type": "PEM", "ssl.truststore.certificates": pki.ca_pem.read_text()},
    ):
        await handshake(server, ssl_context(trust, "client"))
    stranger = ssl_context(
        {"ssl.truststore.type": "PEM", "ssl.truststore.location": str(pki.other_ca_pem)}, "client"
    )
    with pytest.raises(ssl.SSLCertVerificationError):
        await handshake(server, stranger)


async def test_host_names_are_checked_unless_the_algorithm_is_empty(pki: Pki) -> None:
    server = server_pem(pki)

    async def to_localhost_by_another_name(client: ssl.SSLContext) -> None:
        listening = await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", 0, ssl=server)
        try:
            port = listening.sockets[0].getsockname()[1]
            _, writer = await asyncio.open_connection(
                "127.0.0.1", port, ssl=client, server_hostname="example.org"
            )
            writer.close()
        finally:
            listening.close()

    with pytest.raises(ssl.SSLCertVerificationError, match=r"example\.org"):
        await to_localhost_by_another_name(client_trusting(pki))
    await to_localhost_by_another_name(client_trusting(pki, **{"ssl.endpoint.identification.algorithm": ""}))


async def test_client_authentication(pki: Pki) -> None:
    trust = {"ssl.truststore.type": "PEM", "ssl.truststore.location": str(pki.ca_pem)}
    with_cert = client_trusting(
        pki, **{"ssl.keystore.type": "PEM", "ssl.keystore.location": str(pki.client_pem)}
    )
    without = client_trusting(pki)
    required = server_pem(pki, **trust, **{"ssl.client.authentication": "required"})
    assert (await handshake(required, with_cert))[2] is True
    with pytest.raises((ssl.SSLError, ConnectionError, asyncio.IncompleteReadError)):
        await handshake(required, without)
    requested = server_pem(pki, **trust, **{"ssl.client.authentication": "requested"})
    assert (await handshake(requested, without))[2] is False
    assert (await handshake(requested, with_cert))[2] is True
    assert (await handshake(server_pem(pki), with_cert))[2] is False  # none: never asked


async def test_protocols_and_cipher_suites(pki: Pki) -> None:
    client = client_trusting(pki)
    assert (await handshake(server_pem(pki, **{"ssl.protocol": "TLSv1.2"}), client))[0] == "TLSv1.2"
    assert (await handshake(server_pem(pki, **{"ssl.enabled.protocols": "TLSv1.2"}), client))[0] == "TLSv1.2"
    # a Java (IANA) suite name; no TLS 1.3 suite listed means no TLS 1.3, as in Java
    version, cipher, _ = await handshake(
        server_pem(pki, **{"ssl.cipher.suites": "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"}), client
    )
    assert (version, cipher) == ("TLSv1.2", "ECDHE-ECDSA-AES256-GCM-SHA384")
    version, cipher, _ = await handshake(
        server_pem(pki, **{"ssl.cipher.suites": "ECDHE-ECDSA-CHACHA20-POLY1305"}), client
    )
    assert (version, cipher) == ("TLSv1.2", "ECDHE-ECDSA-CHACHA20-POLY1305")
    assert (await handshake(server_pem(pki, **{"ssl.cipher.suites": "TLS_AES_128_GCM_SHA256"}), client))[
        0
    ] == "TLSv1.3"


def test_listeners_https_keys_replace_the_plain_ones_altogether() -> None:
    worker = {
        "ssl.keystore.location": "/plain.p12",
        "ssl.keystore.password": "x",
        "listeners": "https://:1",
        "listeners.https.ssl.keystore.type": "PEM",
        "listeners.https.ssl.keystore.location": "/https.pem",
    }
    assert prefixed_settings(worker, "listeners.https.") == (
        {"ssl.keystore.type": "PEM", "ssl.keystore.location": "/https.pem"},
        "listeners.https.",
    )
    plain = {k: v for k, v in worker.items() if not k.startswith("listeners.https.")}
    assert prefixed_settings(plain, "listeners.https.") == (
        {"ssl.keystore.location": "/plain.p12", "ssl.keystore.password": "x"},
        "",
    )


def refusal(properties: dict[str, str], purpose: str = "server", prefix: str = "") -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        ssl_context(properties, purpose, prefix=prefix)  # type: ignore[arg-type]
    return caught.value


def test_bad_settings_name_the_key_as_written(pki: Pki, tmp_path: Path) -> None:
    p12 = {"ssl.keystore.type": "PKCS12", "ssl.keystore.location": str(pki.server_p12)}
    missing = refusal(
        {**p12, "ssl.keystore.location": str(tmp_path / "nope.p12"), "ssl.keystore.password": "x"},
        prefix="listeners.https.",
    )
    assert str(missing).startswith(
        "Invalid value for configuration listeners.https.ssl.keystore.location: Cannot "
        f"read {tmp_path / 'nope.p12'}: No such file or directory"
    )
    assert set(missing.errors) == {"listeners.https.ssl.keystore.location"}
    wrong = refusal({**p12, "ssl.keystore.password": "wrong"})
    assert set(wrong.errors) == {"ssl.keystore.password"}
    assert "Failed to load SSL keystore" in str(wrong)
    assert "wrong" not in str(wrong).replace("the password is wrong", "")  # never the secret itself
    assert set(refusal(p12).errors) == {"ssl.keystore.password"}  # Kafka: store given, password not
    assert "SSL key store is specified, but key store password is not specified." in str(refusal(p12))
    encrypted = {
        "ssl.keystore.type": "PEM",
        "ssl.keystore.certificate.chain": pki.server_chain.read_text(),
        "ssl.keystore.key": pki.server_key_encrypted.read_text(),
    }
    assert set(refusal(encrypted).errors) == {"ssl.key.password"}
    assert set(refusal({**encrypted, "ssl.key.password": "nope"}).errors) == {"ssl.key.password"}
    assert "only for PEM" in str(refusal({**encrypted, "ssl.keystore.type": "PKCS12"}))
    jks = tmp_path / "store.jks"
    jks.write_bytes(b"\xfe\xed\xfe\xed" + bytes(60))
    assert "keytool -importkeystore" in str(
        refusal({"ssl.keystore.location": str(jks), "ssl.keystore.password": "x"})
    )
    assert "set ssl.keystore.type=PEM" in str(
        refusal({"ssl.keystore.location": str(pki.server_pem), "ssl.keystore.password": "x"})
    )
    assert set(refusal({}).errors) == {"ssl.keystore.location"}  # a server needs a key store
    pem = {"ssl.keystore.type": "PEM", "ssl.keystore.location": str(pki.server_pem)}
    assert set(refusal({**pem, "ssl.client.authentication": "sometimes"}).errors) == {
        "ssl.client.authentication"
    }
    assert set(refusal({**pem, "ssl.enabled.protocols": "TLSv1.2,SSLv3"}).errors) == {"ssl.enabled.protocols"}
    assert set(refusal({**pem, "ssl.protocol": "TLSv9"}).errors) == {"ssl.protocol"}
    assert set(refusal({**pem, "ssl.cipher.suites": "TLS_FOO_WITH_BAR"}).errors) == {"ssl.cipher.suites"}
    assert set(refusal({**pem, "ssl.keystore.locaton": "x"}).errors) == {"ssl.keystore.locaton"}
    assert set(refusal({**pem, "ssl.provider": "SunJSSE"}).errors) == {"ssl.provider"}
    assert set(refusal({"ssl.endpoint.identification.algorithm": "ldaps"}, "client").errors) == {
        "ssl.endpoint.identification.algorithm"
    }
    assert set(
        refusal(
            {
                "ssl.truststore.type": "PEM",
                "ssl.truststore.location": str(pki.ca_pem),
                "ssl.truststore.password": "x",
            },
            "client",
        ).errors
    ) == {"ssl.truststore.password"}
