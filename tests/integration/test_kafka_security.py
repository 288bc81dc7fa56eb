"""Kafka client security against a real Apache Kafka 4.1 (``engine.testing.kafka``): TLS, SASL PLAIN and
SCRAM-SHA-256/512 logins, wrong passwords and ACL denials.

Two brokers: the session's ``kafka41`` (every listener, no authorizer) for TLS and for clients that
cannot connect at all, and this module's ``secured`` node with ``StandardAuthorizer`` on, whose ACLs
prove who logged in: each client family has a principal of its own (the worker ``connect``, its
tasks' producers ``producer``, their consumers ``consumer``, a connector override ``alice``), and
the data topics are writable and readable only by the principal meant to use them, so records move
only if every client logged in as itself. ACLs are made with Kafka's own ``kafka-acls`` tool class
(``engine.testing.kafka.acls``: aiokafka has no ACL calls, and its CreateAcls versions are gone
from Kafka 4).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from cryptography import x509
from cryptography.hazmat.primitives.serialization import BestAvailableEncryption, pkcs12

from engine import Engine
from engine.errors import EngineError
from engine.testing import eventually
from engine.testing.cluster import poll_until, request, worker_cluster
from engine.testing.kafka import ApacheKafka, apache_kafka
from engine.testing.kafka.acls import add_acl
from tests.integration.tls import PASSWORD, Certificates, make_certificates
from tests.worker.probes import SINK, SINKS, SOURCE, SOURCES, records

# the first test of the module starts the secured broker and makes its ACLs (a JVM per kafka-acls call)
pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

STRINGS = {
    "value.converter": "org.apache.kafka.connect.storage.StringConverter",
    "key.converter": "org.apache.kafka.connect.storage.StringConverter",
}
USERS = {
    name: f"{name}-secret" for name in ("admin", "connect", "producer", "consumer", "creator", "alice", "bob")
}
MODULES = {
    "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
    "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
}


@pytest.fixture(autouse=True)
def _fresh_probes() -> None:
    SOURCES.clear()
    SINKS.clear()


@pytest.fixture(scope="module")
def secured() -> Iterator[ApacheKafka]:
    """Kafka 4.1 with the authorizer on. ``connect`` may do anything but read, write or create ``orders-*``,
    which ``creator`` creates;
    ``producer`` writes ``orders-a-*``, ``alice`` ``orders-b-*``, ``consumer`` reads ``orders-*`` in
    ``connect-*`` groups; ``bob`` may do anything but write ``denied-*`` or read ``locked-*``; ``alice``
    may also use ``alice-*`` topics, but create none."""
    with apache_kafka("4.1", users=USERS, authorizer=True) as kafka:
        for who in ("connect", "bob"):
            add_acl(kafka, f"User:{who}", ["All"], topics=["*"], groups=["*"], cluster=True)
        add_acl(
            kafka, "User:connect", ["Read", "Write", "Create"], topics=["orders-"], prefixed=True, deny=True
        )
        add_acl(kafka, "User:creator", ["Create"], topics=["orders-", "denied-"], prefixed=True)
        add_acl(kafka, "User:producer", ["Write"], topics=["orders-a-"], prefixed=True)
        add_acl(kafka, "User:alice", ["Write"], topics=["orders-b-"], prefixed=True)
        add_acl(kafka, "User:consumer", ["Read"], topics=["orders-"], groups=["connect-"], prefixed=True)
        add_acl(kafka, "User:bob", ["Write"], topics=["denied-"], prefixed=True, deny=True)
        add_acl(kafka, "User:bob", ["Read"], topics=["locked-"], prefixed=True, deny=True)
        add_acl(
            kafka,
            "User:alice",
            ["Read", "Write", "Describe", "DescribeConfigs"],
            topics=["alice-"],
            prefixed=True,
        )
        yield kafka


def jaas(user: str, mechanism: str, password: str | None = None) -> str:
    return f'{MODULES[mechanism]} required username="{user}" password="{USERS[user] if password is None else password}";'


def login(
    kafka: ApacheKafka,
    user: str,
    mechanism: str,
    *,
    prefix: str = "",
    password: str | None = None,
    listener: str = "SASL_SSL",
) -> dict[str, str]:
    settings = kafka.client_settings(
        listener, user=user, mechanism=mechanism, password=USERS[user] if password is None else password
    )
    return {prefix + k: v for k, v in settings.items() if k != "bootstrap.servers"}


def principal_override(user: str, mechanism: str, role: str = "producer") -> dict[str, str]:
    """The keys the ``Principal`` policy lets a connector override: who it logs in as, and how."""
    return {
        f"{role}.override.sasl.mechanism": mechanism,
        f"{role}.override.sasl.jaas.config": jaas(user, mechanism),
    }


def each_its_own(kafka: ApacheKafka, **extra: str) -> dict[str, str]:
    """The worker as ``connect`` (SCRAM-SHA-512), tasks' producers as ``producer`` (SCRAM-SHA-256), their
    consumers as ``consumer`` (PLAIN), connectors' admin clients (topic creation: the top level, then
    ``admin.*``) as ``creator`` (SCRAM-SHA-256), all over SASL_SSL: the credentials a secured cluster
    hands out."""
    return {
        "bootstrap.servers": kafka.bootstrap_servers("SASL_SSL"),
        **login(kafka, "connect", "SCRAM-SHA-512"),
        **login(kafka, "producer", "SCRAM-SHA-256", prefix="producer."),
        **login(kafka, "creator", "SCRAM-SHA-256", prefix="admin."),
        **login(kafka, "consumer", "PLAIN", prefix="consumer."),
        **extra,
    }


def standalone(tmp_path: Path, **props: str) -> dict[str, str]:
    return {
        "config.storage.topic": f"configs-{uuid.uuid4().hex[:10]}",
        "offset.storage.file.filename": str(tmp_path / "offsets"),
        "task.shutdown.graceful.timeout.ms": "5000",
        **props,
    }


async def failed_task(engine: Engine, connector: str, timeout: float = 45) -> str:
    """The trace of the connector's task 0 once it is FAILED (the connector itself keeps RUNNING)."""

    async def failed() -> dict[str, Any] | None:
        body = await engine.connector_status(connector)
        tasks = body["tasks"]
        return body if tasks and tasks[0]["state"] == "FAILED" else None

    body = await poll_until(failed, timeout=timeout, what=f"{connector}'s task FAILED")
    assert body["connector"]["state"] == "RUNNING"
    return str(body["tasks"][0]["trace"])


# ---- logins --------------------------------------------------------------------------------------


async def test_a_standalone_worker_moves_records_each_client_logged_in_as_itself(
    secured: ApacheKafka, tmp_path: Path
) -> None:
    """``creator`` (admin.*) may create orders-*, ``producer`` write only orders-a-*, ``alice`` (a
    connector's override, policy Principal) only orders-b-*, ``consumer`` read them, and the worker's
    ``connect`` none of it: both topics arrive."""
    mine, theirs = f"orders-a-{uuid.uuid4().hex[:8]}", f"orders-b-{uuid.uuid4().hex[:8]}"
    props = standalone(
        tmp_path, **each_its_own(secured, **{"connector.client.config.override.policy": "Principal"})
    )
    async with Engine(props) as engine:
        for topic in (mine, theirs):
            await engine.topics.create_topic(topic, 1)  # connectors' admin client: as creator (admin.*)
        await engine.create_connector("src", {"connector.class": SOURCE, **STRINGS})
        await engine.create_connector(
            "src-alice",
            {"connector.class": SOURCE, **STRINGS, **principal_override("alice", "SCRAM-SHA-512")},
        )
        await engine.create_connector(
            "snk", {"connector.class": SINK, "topics": f"{mine},{theirs}", **STRINGS}
        )
        await engine.wait_for_state("src", "RUNNING", tasks=1)
        await engine.wait_for_state("src-alice", "RUNNING", tasks=1)
        SOURCES["src"].feed.put_nowait(records(mine, ["a", "b"]))
        SOURCES["src-alice"].feed.put_nowait(records(theirs, ["c"]))
        await eventually(
            lambda: sorted(r.value for r in SINKS["snk"].received) == ["a", "b", "c"], timeout=60
        )
        status = await engine.connector_status("snk")
        assert status["tasks"][0]["state"] == "RUNNING"


@pytest.mark.timeout(240)  # two worker processes start, join and rebalance over SASL_SSL
async def test_a_two_worker_cluster_moves_records_each_client_logged_in_as_itself(
    secured: ApacheKafka, tmp_path: Path
) -> None:
    """Group membership, the config, status and offset topics (``connect``) and the tasks' clients
    (``producer``, ``consumer``) all log in, from .properties files."""
    source, sink = tmp_path / "in.txt", tmp_path / "out.txt"
    source.write_text("".join(f"line-{n}\n" for n in range(20)))
    topic = f"orders-a-{uuid.uuid4().hex[:8]}"
    extra = {k: v for k, v in each_its_own(secured).items() if k != "bootstrap.servers"}
    extra = {**extra, "offset.flush.interval.ms": "500"}
    # made beforehand (over PLAINTEXT: User:ANONYMOUS is a super user): the broker would auto-create it
    # only for a principal with CREATE, and producer has WRITE alone
    admin = AIOKafkaAdminClient(bootstrap_servers=secured.bootstrap_servers())
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, 1, 1)])
    finally:
        await admin.close()
    with worker_cluster(secured.bootstrap_servers("SASL_SSL"), tmp_path, extra=extra) as cluster:
        first, second = cluster.start_worker(), cluster.start_worker()
        await cluster.started(first, second)
        status, body = await request(
            first,
            "POST",
            "/connectors",
            {
                "name": "file-in",
                "config": {
                    "connector.class": "FileStreamSource",
                    "file": str(source),
                    "topic": topic,
                    **STRINGS,
                },
            },
        )
        assert status == 201, body
        status, body = await request(
            second,
            "POST",
            "/connectors",
            {
                "name": "file-out",
                "config": {
                    "connector.class": "FileStreamSink",
                    "file": str(sink),
                    "topics": topic,
                    **STRINGS,
                },
            },
        )
        assert status == 201, body

        async def copied() -> list[str] | None:
            lines = sink.read_text().splitlines() if sink.exists() else []
            return lines if len(lines) >= 20 else None

        lines = await poll_until(copied, timeout=90)
        assert sorted(lines, key=lambda line: int(line.split("-")[1])) == [f"line-{n}" for n in range(20)]


# ---- refusals: one clear error naming the principal, the resource and the setting ---------------


def _cli(props: dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    worker = tmp_path / "worker.properties"
    worker.write_text("".join(f"{k}={v}\n" for k, v in {**props, "listeners": "http://127.0.0.1:0"}.items()))
    return subprocess.run(
        [sys.executable, "-m", "engine", "--log-level", "CRITICAL", "standalone", str(worker)],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
        check=False,
    )


async def test_a_wrong_worker_password_is_one_line_from_the_cli(secured: ApacheKafka, tmp_path: Path) -> None:
    props = standalone(
        tmp_path, **{**each_its_own(secured), **login(secured, "connect", "SCRAM-SHA-256", password="guess")}
    )
    done = await asyncio.to_thread(_cli, props, tmp_path)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "SASL SCRAM-SHA-256 authentication as 'connect' was refused" in lines[0]
    assert "check sasl.jaas.config" in lines[0]
    assert "guess" not in done.stderr


async def test_a_worker_denied_read_on_its_config_topic_stops_naming_principal_topic_and_setting(
    secured: ApacheKafka, tmp_path: Path
) -> None:
    topic = f"locked-configs-{uuid.uuid4().hex[:8]}"
    props = standalone(
        tmp_path,
        **{
            "bootstrap.servers": secured.bootstrap_servers("SASL_SSL"),
            **login(secured, "bob", "SCRAM-SHA-512"),
            "config.storage.topic": topic,
        },
    )
    with pytest.raises(EngineError) as caught:
        async with asyncio.timeout(120), Engine(props):  # never a hang
            pass
    message = str(caught.value)
    assert "principal User:bob is not authorized to READ topic" in message
    assert f"config.storage.topic={topic}" in message
    assert f"kafka-acls --add --allow-principal User:bob --operation Read --topic {topic}" in message
    assert "check sasl.jaas.config" in message
    done = await asyncio.to_thread(_cli, props, tmp_path)
    assert done.returncode == 1
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "principal User:bob is not authorized to READ topic" in done.stderr


async def test_a_worker_that_may_not_create_topics_uses_the_ones_an_administrator_made(
    secured: ApacheKafka, tmp_path: Path
) -> None:
    """Connect's TopicAdmin: a create refused by the ACLs falls back to assuming the topic exists."""
    made, missing = f"alice-configs-{uuid.uuid4().hex[:8]}", f"alice-missing-{uuid.uuid4().hex[:8]}"
    admin = AIOKafkaAdminClient(bootstrap_servers=secured.bootstrap_servers())  # User:ANONYMOUS, a super user
    await admin.start()
    try:
        await admin.create_topics([NewTopic(made, 1, 1, topic_configs={"cleanup.policy": "compact"})])
    finally:
        await admin.close()
    worker = {
        "bootstrap.servers": secured.bootstrap_servers("SASL_SSL"),
        **login(secured, "alice", "SCRAM-SHA-256"),
    }
    async with Engine(standalone(tmp_path, **worker, **{"config.storage.topic": made})) as engine:
        await engine.create_connector("src", {"connector.class": SOURCE, **STRINGS})
        await engine.wait_for_state("src", "RUNNING", tasks=1)
    with pytest.raises(EngineError) as caught:
        async with Engine(standalone(tmp_path, **worker, **{"config.storage.topic": missing})):
            pass
    message = str(caught.value)
    assert f"Could not create config topic '{missing}', and it does not exist" in message
    assert f"principal User:alice is not authorized to CREATE topic '{missing}'" in message
    assert "check sasl.jaas.config" in message


@pytest.mark.parametrize(
    ("who", "override", "setting"),
    [
        (
            "producer",
            False,
            "check producer.sasl.jaas.config",
        ),  # the worker's producer.*: may write orders-a-* only
        (
            "bob",
            True,
            "check producer.override.sasl.jaas.config",
        ),  # a connector's own login, denied WRITE on denied-*
    ],
)
async def test_a_task_denied_write_on_its_topic_fails_naming_principal_topic_and_setting(
    secured: ApacheKafka, tmp_path: Path, who: str, override: bool, setting: str
) -> None:
    topic = f"orders-b-{uuid.uuid4().hex[:8]}" if not override else f"denied-{uuid.uuid4().hex[:8]}"
    props = standalone(
        tmp_path, **each_its_own(secured, **{"connector.client.config.override.policy": "Principal"})
    )
    config = {"connector.class": SOURCE, **STRINGS}
    if override:
        config |= principal_override("bob", "PLAIN")
    async with Engine(props) as engine:
        await engine.topics.create_topic(topic, 1)
        await engine.create_connector("src", config)
        await engine.wait_for_state("src", "RUNNING", tasks=1)
        SOURCES["src"].feed.put_nowait(records(topic, ["x"]))
        trace = await failed_task(engine, "src")
    assert f"principal User:{who} is not authorized to WRITE topic '{topic}'" in trace
    assert f"kafka-acls --add --allow-principal User:{who} --operation Write --topic {topic}" in trace
    assert setting in trace
    assert USERS[who] not in trace


async def test_a_sink_task_denied_read_on_its_group_fails_naming_principal_group_and_setting(
    secured: ApacheKafka, tmp_path: Path
) -> None:
    """``consumer`` may read in ``connect-*`` groups only; this sink's group is its own choice."""
    topic, group = f"orders-a-{uuid.uuid4().hex[:8]}", f"elsewhere-{uuid.uuid4().hex[:8]}"
    async with Engine(standalone(tmp_path, **each_its_own(secured))) as engine:
        await engine.topics.create_topic(topic, 1)
        await engine.create_connector(
            "snk", {"connector.class": SINK, "topics": topic, **STRINGS, "consumer.override.group.id": group}
        )
        trace = await failed_task(engine, "snk")
    assert f"principal User:consumer is not authorized to READ group '{group}'" in trace
    assert f"kafka-acls --add --allow-principal User:consumer --operation Read --group {group}" in trace
    assert "check consumer.override.sasl.jaas.config (or consumer.sasl.jaas.config" in trace


async def test_an_exactly_once_task_denied_its_transactional_id_fails_naming_it(secured: ApacheKafka) -> None:
    """``producer`` has no ACL on transactional ids: InitProducerId is refused, which is not "no transactions"."""
    tag = uuid.uuid4().hex[:8]
    props = {
        **each_its_own(secured),
        "config.storage.topic": f"configs-{tag}",
        "offset.storage.topic": f"offsets-{tag}",
        "exactly.once.source.support": "enabled",
        "task.shutdown.graceful.timeout.ms": "5000",
    }
    async with Engine(props) as engine:
        await engine.create_connector("src", {"connector.class": SOURCE, **STRINGS})
        trace = await failed_task(engine, "src")
    assert "principal User:producer is not authorized to WRITE transactional id" in trace
    assert "--operation Write --transactional-id" in trace
    assert "check producer.sasl.jaas.config" in trace
    assert "does not support transactions" not in trace


async def test_a_connector_with_a_wrong_override_password_fails_its_task(
    secured: ApacheKafka, tmp_path: Path
) -> None:
    topic = f"orders-a-{uuid.uuid4().hex[:8]}"
    props = standalone(tmp_path, **each_its_own(secured))
    async with Engine(props) as engine:
        await engine.topics.create_topic(topic, 1)
        await engine.create_connector(
            "snk",
            {
                "connector.class": SINK,
                "topics": topic,
                **STRINGS,
                **login(secured, "consumer", "SCRAM-SHA-512", password="nope", prefix="consumer.override."),
            },
        )
        trace = await failed_task(engine, "snk")
    assert "SASL SCRAM-SHA-512 authentication as 'consumer' was refused" in trace
    assert "nope" not in trace


# ---- a connector's clients without the worker's security settings (issue 24 "while here") -------


@pytest.mark.parametrize(("connector", "role"), [("src", "producer"), ("snk", "consumer")])
async def test_only_top_level_security_fails_the_task_naming_the_missing_settings(
    kafka41: ApacheKafka, tmp_path: Path, connector: str, role: str
) -> None:
    """Connect passes the top-level keys to the worker's own clients and connectors' admins, never to
    their producers and consumers: the worker starts, the task fails saying what to set."""
    topic = f"orders-{uuid.uuid4().hex[:8]}"
    top_level = kafka41.client_settings("SASL_SSL", user="alice", mechanism="SCRAM-SHA-512")
    async with Engine(standalone(tmp_path, **top_level)) as engine:
        await engine.topics.create_topic(topic, 1)  # the worker's own admin client logs in
        config = {"connector.class": SOURCE if role == "producer" else SINK, **STRINGS}
        await engine.create_connector(
            connector, config if role == "producer" else {**config, "topics": topic}
        )
        trace = await failed_task(engine, connector)
        # a connector that brings its own settings (policy All) runs on the same worker
        await engine.create_connector(
            "fixed",
            {
                **config,
                "topics": topic,
                **login(kafka41, "alice", "SCRAM-SHA-512", prefix=f"{role}.override."),
            },
        )
        await engine.wait_for_state("fixed", "RUNNING", tasks=1)
    assert "the broker closed the connection" in trace
    assert "security.protocol=PLAINTEXT" in trace
    assert "during the SASL handshake" not in trace
    for key in ("security.protocol", "sasl.mechanism", "sasl.jaas.config", "ssl.truststore.location"):
        assert f"{role}.{key}" in trace
    assert "alice-secret" not in trace


# ---- TLS on the broker's SSL listener -------------------------------------------------------------


@pytest.fixture(scope="module")
def stores(kafka41: ApacheKafka, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Certificates]:
    """The broker's CA as a PKCS12 trust store (password PASSWORD), and client key stores of every flavour
    (the SSL listener does not ask for a client certificate: they are read, checked and offered only)."""
    directory = tmp_path_factory.mktemp("stores")
    ca = x509.load_pem_x509_certificate(kafka41.certificates.ca.read_bytes())
    p12 = directory / "kafka-ca.p12"
    p12.write_bytes(
        pkcs12.serialize_key_and_certificates(
            b"ca", None, None, [ca], BestAvailableEncryption(PASSWORD.encode())
        )
    )
    return p12, make_certificates(directory / "client")


def tls_settings(kafka: ApacheKafka, stores: tuple[Path, Certificates], tmp_path: Path) -> dict[str, str]:
    """Each client family its own flavour of trust store: the worker's own clients PKCS12 with the password
    from a config provider, producers a PEM file (and a PKCS12 key store), consumers inline PEM."""
    ca_p12, client = stores
    secrets = tmp_path / "secrets.properties"
    secrets.write_text(f"truststore.password={PASSWORD}\n")
    return {
        "bootstrap.servers": kafka.bootstrap_servers("SSL"),
        "config.providers": "file",
        "config.providers.file.class": "FileConfigProvider",
        "security.protocol": "SSL",
        "ssl.truststore.type": "PKCS12",
        "ssl.truststore.location": str(ca_p12),
        "ssl.truststore.password": f"${{file:{secrets}:truststore.password}}",
        "producer.security.protocol": "SSL",
        "producer.ssl.truststore.type": "PEM",
        "producer.ssl.truststore.location": str(kafka.certificates.ca),
        "producer.ssl.keystore.type": "PKCS12",
        "producer.ssl.keystore.location": str(client.client_p12),
        "producer.ssl.keystore.password": PASSWORD,
        "consumer.security.protocol": "SSL",
        "consumer.ssl.truststore.type": "PEM",
        "consumer.ssl.truststore.certificates": kafka.certificates.ca.read_text(),
        "consumer.ssl.keystore.type": "PEM",
        "consumer.ssl.keystore.key": client.client_key_pem,
        "consumer.ssl.keystore.certificate.chain": client.client_chain_pem,
        "consumer.ssl.key.password": PASSWORD,
    }


async def test_a_standalone_worker_moves_records_over_tls(
    kafka41: ApacheKafka, stores: tuple[Path, Certificates], tmp_path: Path
) -> None:
    topic = f"orders-{uuid.uuid4().hex[:10]}"
    async with Engine(standalone(tmp_path, **tls_settings(kafka41, stores, tmp_path))) as engine:
        await engine.topics.create_topic(topic, 1)
        # producer.override.*: this source gets a producer of its own, gzip and batched
        await engine.create_connector(
            "src",
            {
                "connector.class": SOURCE,
                **STRINGS,
                "producer.override.compression.type": "gzip",
                "producer.override.linger.ms": "5",
            },
        )
        await engine.create_connector(
            "snk",
            {"connector.class": SINK, "topics": topic, **STRINGS, "consumer.override.max.poll.records": "2"},
        )
        await engine.wait_for_state("src", "RUNNING", tasks=1)
        SOURCES["src"].feed.put_nowait(records(topic, ["a", "b", "c"]))
        await eventually(lambda: [r.value for r in SINKS["snk"].received] == ["a", "b", "c"], timeout=30)
        dedicated = list(engine.topics._dedicated.values())  # type: ignore[attr-defined]
        assert [(c._compression_type, c.client._security_protocol) for c in dedicated] == [("gzip", "SSL")]
        assert await engine.connector_active_topics("snk") == [topic]


async def test_an_untrusted_broker_certificate_stops_the_worker_naming_the_truststore(
    kafka41: ApacheKafka, stores: tuple[Path, Certificates], tmp_path: Path
) -> None:
    props = standalone(
        tmp_path,
        **{
            **tls_settings(kafka41, stores, tmp_path),
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": str(stores[1].other_ca_pem),
        },
    )
    del props["ssl.truststore.password"]
    with pytest.raises(EngineError) as caught:
        async with Engine(props):
            pass
    message = str(caught.value)
    assert "CERTIFICATE_VERIFY_FAILED" in message
    assert "check ssl.truststore.*" in message
    assert kafka41.bootstrap_servers("SSL") in message


async def test_a_connector_whose_override_distrusts_the_broker_fails_its_task_with_the_reason(
    kafka41: ApacheKafka, stores: tuple[Path, Certificates], tmp_path: Path
) -> None:
    topic = f"orders-{uuid.uuid4().hex[:10]}"
    async with Engine(standalone(tmp_path, **tls_settings(kafka41, stores, tmp_path))) as engine:
        await engine.topics.create_topic(topic, 1)
        await engine.create_connector(
            "snk",
            {
                "connector.class": SINK,
                "topics": topic,
                **STRINGS,
                "consumer.override.ssl.truststore.certificates": stores[1].other_ca_pem.read_text(),
            },
        )
        trace = await failed_task(engine, "snk")
    assert "CERTIFICATE_VERIFY_FAILED" in trace
    assert "check ssl.truststore.*" in trace


async def test_a_validate_refuses_overrides_the_worker_policy_forbids(
    kafka41: ApacheKafka, stores: tuple[Path, Certificates], tmp_path: Path
) -> None:
    """Policy Principal: a connector may change its credentials, not its batching."""
    async with Engine(
        standalone(
            tmp_path,
            **tls_settings(kafka41, stores, tmp_path),
            **{"connector.client.config.override.policy": "Principal"},
        )
    ) as engine:
        with pytest.raises(EngineError) as caught:
            await engine.create_connector(
                "src",
                {
                    "connector.class": SOURCE,
                    "producer.override.linger.ms": "5",
                    "producer.override.security.protocol": "SSL",
                },
            )
        assert (
            "The 'Principal' policy does not allow 'linger.ms' to be overridden in the connector "
            "configuration."
        ) in str(caught.value)
        assert "security.protocol" not in json.dumps(getattr(caught.value, "errors", {}))
