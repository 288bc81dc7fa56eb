"""A running Apache Kafka (one KRaft node, or several), and the client settings to reach it.

``with apache_kafka() as kafka:`` formats and starts a node on free ports of 127.0.0.1 and stops it
(and removes its files) afterwards; ``nodes=3`` starts a three-node quorum with replication factor
3 and ``min.insync.replicas`` 2 for the internal topics. :meth:`ApacheKafka.client_settings` gives
the worker (or connector override) keys for each listener, user and SASL mechanism, in Kafka's own
key names, which the engine reads as Connect does.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from engine.testing.kafka.classpath import DEFAULT_VERSION, KafkaUnavailable, full_version, kafka_classpath
from engine.testing.kafka.node import (
    QUICK_JVM,
    KafkaNode,
    format_storage,
    free_port,
    random_cluster_id,
    server_properties,
    write_properties,
)
from engine.testing.kafka.tls import BrokerCertificates, make_certificates

START_TIMEOUT_S = 120.0
# Users made at format time (SCRAM-SHA-256/512) and known to the PLAIN login module.
DEFAULT_USERS: Mapping[str, str] = {"admin": "admin-secret", "alice": "alice-secret", "bob": "bob-secret"}
AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"


@dataclass
class ApacheKafka:
    """The nodes of one cluster, their certificates and users."""

    version: str
    nodes: list[KafkaNode]
    certificates: BrokerCertificates
    users: Mapping[str, str]
    directory: Path
    started_in_s: float = field(default=0.0)

    def bootstrap_servers(self, listener: str = "PLAINTEXT") -> str:
        return ",".join(node.bootstrap(listener) for node in self.nodes)

    def client_settings(
        self,
        listener: str = "PLAINTEXT",
        *,
        user: str | None = None,
        mechanism: str = "PLAIN",
        password: str | None = None,
    ) -> dict[str, str]:
        """``bootstrap.servers`` and the ``security.protocol``/``sasl.*``/``ssl.*`` keys for ``listener``.

        SASL listeners need ``user`` (its password from :attr:`users` unless ``password`` is given);
        ``mechanism`` is ``PLAIN``, ``SCRAM-SHA-256`` or ``SCRAM-SHA-512``.
        """
        settings = {"bootstrap.servers": self.bootstrap_servers(listener), "security.protocol": listener}
        if listener.endswith("SSL"):
            settings |= {"ssl.truststore.type": "PEM", "ssl.truststore.location": str(self.certificates.ca)}
        if listener.startswith("SASL"):
            if user is None:
                raise ValueError(f"listener {listener} needs a user (one of {', '.join(self.users)})")
            secret = password if password is not None else self.users[user]
            module = (
                "org.apache.kafka.common.security.plain.PlainLoginModule"
                if mechanism == "PLAIN"
                else "org.apache.kafka.common.security.scram.ScramLoginModule"
            )
            settings |= {
                "sasl.mechanism": mechanism,
                "sasl.jaas.config": f'{module} required username="{user}" password="{secret}";',
            }
        return settings

    def worker_settings(
        self,
        listener: str = "PLAINTEXT",
        *,
        user: str | None = None,
        mechanism: str = "PLAIN",
        password: str | None = None,
    ) -> dict[str, str]:
        """:meth:`client_settings` as a worker needs them: top level for the worker's own clients, and
        again under ``producer.`` and ``consumer.`` for its tasks' clients (Connect passes top-level
        security keys to neither)."""
        settings = self.client_settings(listener, user=user, mechanism=mechanism, password=password)
        security = {k: v for k, v in settings.items() if k != "bootstrap.servers"}
        return {
            **settings,
            **{f"{prefix}{k}": v for prefix in ("producer.", "consumer.") for k, v in security.items()},
        }

    def node(self, node_id: int) -> KafkaNode:
        return next(n for n in self.nodes if n.node_id == node_id)

    def start_node(self, node_id: int, timeout: float = START_TIMEOUT_S) -> None:
        """Start a stopped or killed node again on its own data."""
        node = self.node(node_id)
        node.start()
        node.wait_serving(timeout)

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()

    def wait_ready(self, timeout: float = START_TIMEOUT_S) -> None:
        """Every running node serves, and the cluster's metadata lists every running broker."""
        deadline = time.monotonic() + timeout
        for node in self.nodes:
            if node.running:
                node.wait_serving(max(1.0, deadline - time.monotonic()))
        expected = {n.node_id for n in self.nodes if n.running}
        while True:
            seen = _brokers_in_metadata(self.bootstrap_servers())
            if expected <= seen:
                return
            if time.monotonic() > deadline:
                raise KafkaUnavailable(
                    f"the cluster's metadata lists brokers {sorted(seen)}, not {sorted(expected)}"
                )
            time.sleep(0.2)


def _brokers_in_metadata(bootstrap: str) -> set[int]:
    """The broker ids a metadata request returns (asked from a thread: the caller may run an event loop)."""
    found: set[int] = set()

    async def ask() -> None:
        from aiokafka.admin import AIOKafkaAdminClient

        admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=5000)
        try:
            await admin.start()
            description = await admin.describe_cluster()
            found.update(int(b["node_id"]) for b in description["brokers"])
        finally:
            await admin.close()

    def run() -> None:
        with contextlib.suppress(Exception):
            asyncio.run(ask())

    thread = threading.Thread(target=run, name="kafka-metadata-probe")
    thread.start()
    thread.join()
    return found


@contextlib.contextmanager
def apache_kafka(
    version: str = DEFAULT_VERSION,
    *,
    nodes: int = 1,
    users: Mapping[str, str] = DEFAULT_USERS,
    authorizer: bool = False,
    super_users: tuple[str, ...] = ("admin",),
    broker_config: Mapping[str, str] | None = None,
    jvm_options: tuple[str, ...] = QUICK_JVM,
    directory: Path | None = None,
) -> Iterator[ApacheKafka]:
    """Format and start Apache Kafka ``version`` (``4.1``, ``3.9`` or a full version) with ``nodes`` nodes.

    ``authorizer=True`` turns on KRaft's ``StandardAuthorizer`` with ``super_users`` (and the
    unauthenticated inter-broker principal) as super users; ``broker_config`` overrides any
    ``server.properties`` key on every node. Missing Java or Maven, or a node that will not start,
    raise :class:`KafkaUnavailable`.
    """
    started = time.monotonic()
    classpath = kafka_classpath(version)
    work = directory or Path(tempfile.mkdtemp(prefix="apache-kafka-"))
    cluster: ApacheKafka | None = None
    try:
        certificates = make_certificates(work / "tls")
        members = [
            KafkaNode(
                i,
                work / f"node-{i}",
                classpath,
                full_version(version),
                {
                    name: free_port()
                    for name in ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL", "CONTROLLER")
                },
                jvm_options,
            )
            for i in range(1, nodes + 1)
        ]
        voters = ",".join(f"{n.node_id}@127.0.0.1:{n.ports['CONTROLLER']}" for n in members)
        overrides = dict(broker_config or {})
        if authorizer:
            overrides = {
                "authorizer.class.name": AUTHORIZER,
                "super.users": ";".join(f"User:{u}" for u in ("ANONYMOUS", *super_users)),
                **overrides,
            }
        cluster_id = random_cluster_id(classpath)
        for node in members:
            node.directory.mkdir(parents=True, exist_ok=True)
            write_properties(
                node.properties_file, server_properties(node, voters, nodes, certificates, users, overrides)
            )
            format_storage(node, cluster_id, users)
        cluster = ApacheKafka(full_version(version), members, certificates, dict(users), work)
        for node in members:
            node.start()
        cluster.wait_ready()
        cluster.started_in_s = time.monotonic() - started
        yield cluster
    finally:
        if cluster is not None:
            for node in cluster.nodes:
                node.kill() if nodes > 1 else node.stop()
        if directory is None:
            shutil.rmtree(work, ignore_errors=True)
