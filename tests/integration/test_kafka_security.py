"""Kafka client security against real TLS and a broker that requires SASL.

TLS: tansu behind an asyncio TLS terminator (tests/integration/tls.py) that advertises the
terminator's port, so every connection, bootstrap and metadata-directed alike, is TLS; the plain
port is never given to a client. A standalone engine and a 2-worker cluster move records through
it with Connect-style ``ssl.*`` keys; an untrusted certificate stops the worker, or fails a task,
with the reason and the setting to check.

SASL: tansu 0.6 with ``--authentication`` offers SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER, but
cannot be given a user while it requires authentication (``tansu user create`` is itself refused
with NotAuthenticated, and this build keeps users in memory only). So against tansu the SASL
exchanges run to its verdict, always a refusal, and the tests check the message. Logins that
succeed go through ``tests/integration/sasl_front.py``, a FAKE broker authenticator (PLAIN and
SCRAM, server side) between the TLS terminator and tansu: a standalone engine and a 2-worker
cluster move records over SASL_SSL, each client family with its own credentials, and a wrong
password is refused as a Kafka broker refuses it (error 58). noida-db has neither TLS nor SASL.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from engine import Engine
from engine.errors import EngineError
from engine.testing import eventually
from engine.testing.cluster import poll_until, request, worker_cluster
from tests.integration.brokers import Broker, free_port, running_broker
from tests.integration.sasl_front import SaslFront, fronting
from tests.integration.tls import PASSWORD, Certificates, TlsTerminator, make_certificates, terminating
from tests.worker.probes import SINK, SINKS, SOURCE, SOURCES, records

pytestmark = pytest.mark.integration

STRINGS = {"value.converter": "org.apache.kafka.connect.storage.StringConverter",
           "key.converter": "org.apache.kafka.connect.storage.StringConverter"}
# tansu answers a join after about half a session timeout: keep it short
TANSU_GROUP = {"session.timeout.ms": "4000", "heartbeat.interval.ms": "500", "rebalance.timeout.ms": "8000"}


@dataclass(frozen=True)
class TlsBroker:
    bootstrap: str  # the terminator: TLS only
    certs: Certificates
    proxy: TlsTerminator


@pytest.fixture(scope="module")
def tls_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TlsBroker]:
    certs = make_certificates(tmp_path_factory.mktemp("tls"))
    port = free_port()
    with running_broker("tansu", advertised_port=port) as broker:
        backend = int(broker.bootstrap.rsplit(":", 1)[1])
        with terminating(certs.server_chain, backend, port) as proxy:
            yield TlsBroker(f"127.0.0.1:{port}", certs, proxy)


@dataclass(frozen=True)
class SaslSslBroker:
    bootstrap: str  # TLS, then SASL (fake authenticator), then tansu
    certs: Certificates
    front: SaslFront


USERS = {"connect": "connect-secret", "producer": "producer-secret", "consumer": "consumer-secret",
         "alice": "alice-secret"}


@pytest.fixture(scope="module")
def sasl_ssl_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SaslSslBroker]:
    certs = make_certificates(tmp_path_factory.mktemp("tls"))
    tls_port, sasl_port = free_port(), free_port()
    with running_broker("tansu", advertised_port=tls_port) as broker:
        backend = int(broker.bootstrap.rsplit(":", 1)[1])
        with fronting(backend, sasl_port, USERS) as front, terminating(certs.server_chain, sasl_port, tls_port):
            yield SaslSslBroker(f"127.0.0.1:{tls_port}", certs, front)


def jaas(module: str, user: str, password: str | None = None) -> str:
    package = {"Plain": "plain", "Scram": "scram"}[module]
    return (f"org.apache.kafka.common.security.{package}.{module}LoginModule required "
            f'username="{user}" password="{USERS[user] if password is None else password}";')


def sasl_ssl_settings(broker: SaslSslBroker, *, connect_password: str | None = None) -> dict[str, str]:
    """Each client family its own login, as a secured cluster would hand them out."""
    trust = {"ssl.truststore.type": "PEM", "ssl.truststore.location": str(broker.certs.ca_pem)}
    return {
        "security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.jaas.config": jaas("Scram", "connect", connect_password), **trust,
        "producer.security.protocol": "SASL_SSL", "producer.sasl.mechanism": "SCRAM-SHA-256",
        "producer.sasl.jaas.config": jaas("Scram", "producer"), **{f"producer.{k}": v for k, v in trust.items()},
        "consumer.security.protocol": "SASL_SSL", "consumer.sasl.mechanism": "PLAIN",
        "consumer.sasl.jaas.config": jaas("Plain", "consumer"), **{f"consumer.{k}": v for k, v in trust.items()},
    }


async def test_a_standalone_worker_moves_records_over_sasl_ssl_each_client_with_its_login(
        sasl_ssl_broker: SaslSslBroker, tmp_path: Path) -> None:
    topic = f"orders-{uuid.uuid4().hex[:10]}"
    props = {"bootstrap.servers": sasl_ssl_broker.bootstrap, "config.storage.topic": f"configs-{uuid.uuid4().hex[:8]}",
             "offset.storage.file.filename": str(tmp_path / "offsets"), "consumer.session.timeout.ms": "4000",
             "connector.client.config.override.policy": "Principal", **sasl_ssl_settings(sasl_ssl_broker)}
    front = sasl_ssl_broker.front
    front.logins.clear()
    async with Engine(props) as engine:
        await engine.topics.create_topic(topic, 1)
        # Principal: a connector may log in as someone else, here alice over SCRAM-SHA-512
        await engine.create_connector("src", {"connector.class": SOURCE, **STRINGS,
                                              "producer.override.sasl.mechanism": "SCRAM-SHA-512",
                                              "producer.override.sasl.jaas.config": jaas("Scram", "alice")})
        await engine.create_connector("snk", {"connector.class": SINK, "topics": topic, **STRINGS})
        await engine.wait_for_state("src", "RUNNING", tasks=1)
        SOURCES["src"].feed.put_nowait(records(topic, ["a", "b", "c"]))
        await eventually(lambda: [r.value for r in SINKS["snk"].received] == ["a", "b", "c"], timeout=30)
    assert {("SCRAM-SHA-512", "connect"), ("SCRAM-SHA-256", "producer"), ("PLAIN", "consumer"),
            ("SCRAM-SHA-512", "alice")} <= set(front.logins)


async def test_a_wrong_password_stops_the_worker_as_a_kafka_broker_refuses_it(
        sasl_ssl_broker: SaslSslBroker, tmp_path: Path) -> None:
    props = {"bootstrap.servers": sasl_ssl_broker.bootstrap, "config.storage.topic": f"c-{uuid.uuid4().hex[:8]}",
             **sasl_ssl_settings(sasl_ssl_broker, connect_password="guess")}
    with pytest.raises(EngineError) as caught:
        async with Engine(props):
            pass
    message = str(caught.value)
    assert "SASL SCRAM-SHA-512 authentication as 'connect' was refused" in message
    assert "invalid credentials with SASL mechanism SCRAM-SHA-512" in message  # the broker's own words
    assert "check sasl.jaas.config" in message
    assert "guess" not in message


async def test_a_connector_with_a_wrong_override_password_fails_its_task(
        sasl_ssl_broker: SaslSslBroker, tmp_path: Path) -> None:
    topic = f"orders-{uuid.uuid4().hex[:10]}"
    props = {"bootstrap.servers": sasl_ssl_broker.bootstrap, "config.storage.topic": f"c-{uuid.uuid4().hex[:8]}",
             "offset.storage.file.filename": str(tmp_path / "offsets"), **sasl_ssl_settings(sasl_ssl_broker)}
    async with Engine(props) as engine:
        await engine.topics.create_topic(topic, 1)
        await engine.create_connector("snk", {"connector.class": SINK, "topics": topic, **STRINGS,
                                              "consumer.override.sasl.jaas.config": jaas("Plain", "alice", "nope")})

        async def task_failed() -> dict[str, Any] | None:
            body = await engine.connector_status("snk")
            tasks = body["tasks"]
            return body if tasks and tasks[0]["state"] == "FAILED" else None

        body = await poll_until(task_failed, timeout=40)
        trace = body["tasks"][0]["trace"]
        assert "SASL PLAIN authentication as 'alice' was refused" in trace
        assert "nope" not in trace


@pytest.fixture(scope="module")
def sasl_broker() -> Iterator[Broker]:
    with running_broker("tansu", extra=("--authentication",)) as broker:
        yield broker


@pytest.fixture(autouse=True)
def _fresh_probes() -> None:
    SOURCES.clear()
    SINKS.clear()


def tls_settings(tls: TlsBroker, tmp_path: Path) -> dict[str, str]:
    """Connect-style keys, each client family with its own flavour of trust store: the worker's own
    clients PKCS12 with the password from a config provider, producers a PEM file (and a PKCS12 client
    keystore), consumers inline PEM. Connect does not pass top-level security keys to connectors'
    producers and consumers, so they are repeated under producer.* and consumer.*."""
    secrets = tmp_path / "secrets.properties"
    secrets.write_text(f"truststore.password={PASSWORD}\n")
    certs = tls.certs
    return {
        "config.providers": "file", "config.providers.file.class": "FileConfigProvider",
        "security.protocol": "SSL", "ssl.truststore.type": "PKCS12", "ssl.truststore.location": str(certs.ca_p12),
        "ssl.truststore.password": f"${{file:{secrets}:truststore.password}}",
        "producer.security.protocol": "SSL", "producer.ssl.truststore.type": "PEM",
        "producer.ssl.truststore.location": str(certs.ca_pem), "producer.ssl.keystore.type": "PKCS12",
        "producer.ssl.keystore.location": str(certs.client_p12), "producer.ssl.keystore.password": PASSWORD,
        "consumer.security.protocol": "SSL", "consumer.ssl.truststore.type": "PEM",
        "consumer.ssl.truststore.certificates": certs.ca_pem.read_text(),
        "consumer.ssl.keystore.type": "PEM", "consumer.ssl.keystore.key": certs.client_key_pem,
        "consumer.ssl.keystore.certificate.chain": certs.client_chain_pem, "consumer.ssl.key.password": PASSWORD,
    }


def standalone(tls: TlsBroker, tmp_path: Path, **extra: str) -> dict[str, str]:
    return {"bootstrap.servers": tls.bootstrap, "config.storage.topic": f"configs-{uuid.uuid4().hex[:10]}",
            "offset.storage.file.filename": str(tmp_path / "offsets"), "consumer.session.timeout.ms": "4000",
            "task.shutdown.graceful.timeout.ms": "5000", **tls_settings(tls, tmp_path), **extra}


async def test_a_standalone_worker_moves_records_over_tls(tls_broker: TlsBroker, tmp_path: Path) -> None:
    topic = f"orders-{uuid.uuid4().hex[:10]}"
    handshakes = tls_broker.proxy.handshakes
    async with Engine(standalone(tls_broker, tmp_path)) as engine:
        await engine.topics.create_topic(topic, 1)
        # producer.override.*: this source gets a producer of its own, gzip and batched
        await engine.create_connector("src", {"connector.class": SOURCE, **STRINGS,
                                              "producer.override.compression.type": "gzip",
                                              "producer.override.linger.ms": "5"})
        await engine.create_connector("snk", {"connector.class": SINK, "topics": topic, **STRINGS,
                                              "consumer.override.max.poll.records": "2"})
        await engine.wait_for_state("src", "RUNNING", tasks=1)
        SOURCES["src"].feed.put_nowait(records(topic, ["a", "b", "c"]))
        await eventually(lambda: [r.value for r in SINKS["snk"].received] == ["a", "b", "c"], timeout=30)
        dedicated = list(engine.topics._dedicated.values())  # type: ignore[attr-defined]
        assert [(c._compression_type, c.client._security_protocol) for c in dedicated] == [("gzip", "SSL")]
        assert await engine.connector_active_topics("snk") == [topic]
    assert tls_broker.proxy.handshakes > handshakes  # the records did go through the TLS terminator


async def test_an_untrusted_broker_certificate_stops_the_worker_naming_the_truststore(
        tls_broker: TlsBroker, tmp_path: Path) -> None:
    props = standalone(tls_broker, tmp_path, **{"ssl.truststore.type": "PEM",
                                                "ssl.truststore.location": str(tls_broker.certs.other_ca_pem)})
    del props["ssl.truststore.password"]
    with pytest.raises(EngineError) as caught:
        async with Engine(props):
            pass
    message = str(caught.value)
    assert "CERTIFICATE_VERIFY_FAILED" in message
    assert "check ssl.truststore.*" in message
    assert tls_broker.bootstrap in message


async def test_a_connector_whose_override_distrusts_the_broker_fails_its_task_with_the_reason(
        tls_broker: TlsBroker, tmp_path: Path) -> None:
    topic = f"orders-{uuid.uuid4().hex[:10]}"
    async with Engine(standalone(tls_broker, tmp_path)) as engine:
        await engine.topics.create_topic(topic, 1)
        await engine.create_connector("snk", {"connector.class": SINK, "topics": topic, **STRINGS,
                                              "consumer.override.ssl.truststore.certificates":
                                                  tls_broker.certs.other_ca_pem.read_text()})

        async def task_failed() -> dict[str, Any] | None:
            body = await engine.connector_status("snk")
            tasks = body["tasks"]
            return body if tasks and tasks[0]["state"] == "FAILED" else None

        body = await poll_until(task_failed, timeout=40)
        trace = body["tasks"][0]["trace"]
        assert "CERTIFICATE_VERIFY_FAILED" in trace
        assert "check ssl.truststore.*" in trace


async def test_a_two_worker_cluster_moves_records_over_sasl_ssl(sasl_ssl_broker: SaslSslBroker,
                                                                 tmp_path: Path) -> None:
    """Group membership, the config log, status and offset stores and the tasks' clients all log in."""
    source, sink = tmp_path / "in.txt", tmp_path / "out.txt"
    source.write_text("".join(f"line-{n}\n" for n in range(20)))
    topic = f"lines-{uuid.uuid4().hex[:8]}"
    # written to .properties files: inline PEM the way Java's files carry it, with \\ continuations
    settings = {**sasl_ssl_settings(sasl_ssl_broker), "consumer.ssl.truststore.certificates":
                sasl_ssl_broker.certs.ca_pem.read_text()}
    del settings["consumer.ssl.truststore.location"]
    extra = {key: " \\\n".join(value.splitlines()) for key, value in settings.items()}
    extra = {**TANSU_GROUP, **extra, "offset.flush.interval.ms": "500", "admin.request.timeout.ms": "10000"}
    sasl_ssl_broker.front.logins.clear()
    with worker_cluster(sasl_ssl_broker.bootstrap, tmp_path, extra=extra) as cluster:
        first, second = cluster.start_worker(), cluster.start_worker()
        await cluster.started(first, second)
        status, body = await request(first, "POST", "/connectors", {"name": "file-in", "config": {
            "connector.class": "FileStreamSource", "file": str(source), "topic": topic, **STRINGS}})
        assert status == 201, body
        status, body = await request(second, "POST", "/connectors", {"name": "file-out", "config": {
            "connector.class": "FileStreamSink", "file": str(sink), "topics": topic, **STRINGS}})
        assert status == 201, body

        async def copied() -> list[str] | None:
            lines = sink.read_text().splitlines() if sink.exists() else []
            return lines if len(lines) >= 20 else None

        lines = await poll_until(copied, timeout=60)
        # unkeyed lines spread over the auto-created topic's partitions: order holds per partition only
        assert sorted(lines, key=lambda line: int(line.split("-")[1])) == [f"line-{n}" for n in range(20)]
        assert {("SCRAM-SHA-512", "connect"), ("SCRAM-SHA-256", "producer"), ("PLAIN", "consumer")} <= \
            set(sasl_ssl_broker.front.logins)


async def test_a_validate_refuses_overrides_the_worker_policy_forbids(tls_broker: TlsBroker, tmp_path: Path) -> None:
    """The same worker, policy Principal: a connector may change its credentials, not its batching."""
    async with Engine(standalone(tls_broker, tmp_path, **{
            "connector.client.config.override.policy": "Principal"})) as engine:
        with pytest.raises(EngineError) as caught:
            await engine.create_connector("src", {"connector.class": SOURCE, "producer.override.linger.ms": "5",
                                                  "producer.override.security.protocol": "SSL"})
        assert ("The 'Principal' policy does not allow 'linger.ms' to be overridden in the connector "
                "configuration.") in str(caught.value)
        assert "security.protocol" not in json.dumps(getattr(caught.value, "errors", {}))


def sasl_worker(broker: Broker, mechanism: str, jaas: str, **extra: str) -> dict[str, str]:
    return {"bootstrap.servers": broker.bootstrap, "config.storage.topic": f"configs-{uuid.uuid4().hex[:10]}",
            "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": mechanism, "sasl.jaas.config": jaas, **extra}


SCRAM = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="wrong";'


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
async def test_a_refused_scram_login_stops_the_worker_naming_the_jaas_config(
        sasl_broker: Broker, mechanism: str) -> None:
    with pytest.raises(EngineError) as caught:
        async with Engine(sasl_worker(sasl_broker, mechanism, SCRAM)):
            pass
    message = str(caught.value)
    assert f"SASL {mechanism} authentication as 'alice' was refused" in message
    assert "check sasl.jaas.config" in message
    assert "wrong" not in message  # the password is never repeated


async def test_a_mechanism_the_broker_does_not_offer_stops_the_worker_naming_it(sasl_broker: Broker) -> None:
    """tansu closes the connection on a mechanism it lacks, rather than answering the handshake."""
    jaas = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="p";'
    with pytest.raises(EngineError) as caught:
        async with Engine(sasl_worker(sasl_broker, "PLAIN", jaas)):
            pass
    assert ("the broker closed the connection during the SASL handshake" in str(caught.value))
    assert ("does it offer sasl.mechanism=PLAIN on a security.protocol=SASL_PLAINTEXT listener?" in str(caught.value))


async def test_an_unsecured_oauthbearer_token_is_sent_and_refused_naming_the_jaas_config(sasl_broker: Broker) -> None:
    """tansu offers OAUTHBEARER and validates the token: Kafka's unsecured (unsigned) token is refused."""
    jaas = ("org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
            'unsecuredLoginStringClaim_sub="alice";')
    with pytest.raises(EngineError) as caught:
        async with Engine(sasl_worker(sasl_broker, "OAUTHBEARER", jaas)):
            pass
    assert "SASL OAUTHBEARER authentication was refused" in str(caught.value)
    assert "check sasl.jaas.config" in str(caught.value)
