"""One Apache Kafka process in KRaft combined mode (broker and controller), formatted and started here.

Its listeners, all on 127.0.0.1: ``PLAINTEXT``, ``SSL``, ``SASL_PLAINTEXT`` and ``SASL_SSL`` for
clients (PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512; SCRAM users are written at format time, as
``kafka-storage.sh format --add-scram`` does) and ``CONTROLLER`` for the quorum; brokers talk to each
other over ``PLAINTEXT``. The process is ``java ... kafka.Kafka server.properties``, its own PID (no
wrapper script), so :meth:`KafkaNode.kill` is a real kill -9 and :meth:`KafkaNode.start` after it
restarts the same node on the same data.
"""

from __future__ import annotations

import os
import socket
import struct
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from engine.testing.kafka.classpath import KafkaUnavailable, java
from engine.testing.kafka.jvm import kill_jvm, last_output, start_jvm, stop_jvm
from engine.testing.kafka.tls import BrokerCertificates

HOST = "127.0.0.1"
CLIENT_LISTENERS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
# A small, quick-starting JVM: a test node holds little data. Benchmarks pass their own options.
QUICK_JVM = (
    "-Xms128m",
    "-Xmx768m",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-XX:-UsePerfData",
    "-Djava.awt.headless=true",
)
_RESOURCES = Path(__file__).parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


@dataclass
class KafkaNode:
    """A formatted node; ``ports`` maps each listener name (and ``CONTROLLER``) to its port."""

    node_id: int
    directory: Path
    classpath: str
    version: str
    ports: dict[str, int]
    jvm_options: tuple[str, ...] = QUICK_JVM
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def properties_file(self) -> Path:
        return self.directory / "server.properties"

    @property
    def log_file(self) -> Path:
        return self.directory / "server.log"

    def bootstrap(self, listener: str = "PLAINTEXT") -> str:
        return f"{HOST}:{self.ports[listener]}"

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self) -> None:
        """Start the process (again, after :meth:`kill` or :meth:`stop`); returns once it answers Kafka requests."""
        if self.running:
            return
        self.process = start_jvm(
            classpath=self.classpath,
            version=self.version,
            main_class="kafka.Kafka",
            args=[str(self.properties_file)],
            jvm_options=self.jvm_options,
            directory=self.directory,
            log4j2=_RESOURCES / "log4j2.properties",
            log4j=_RESOURCES / "log4j.properties",
        )

    def wait_serving(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not answers_kafka(self.ports["PLAINTEXT"]):
            if self.process is None or self.process.poll() is not None:
                code = None if self.process is None else self.process.returncode
                raise KafkaUnavailable(
                    f"Kafka node {self.node_id} exited with code {code} before serving "
                    f"{self.bootstrap()}:\n{self.tail()}"
                )
            if time.monotonic() > deadline:
                raise KafkaUnavailable(
                    f"Kafka node {self.node_id} did not answer on {self.bootstrap()} within "
                    f"{timeout:g} s:\n{self.tail()}"
                )
            time.sleep(0.1)

    def kill(self) -> None:
        """kill -9: no shutdown, nothing flushed beyond what the OS already has."""
        kill_jvm(self.process)

    def stop(self, timeout: float = 30.0) -> None:
        """A controlled shutdown (SIGTERM), then a kill if it takes longer than ``timeout``."""
        stop_jvm(self.process, timeout)

    def tail(self, lines: int = 25) -> str:
        return last_output(self.directory, self.log_file, lines)


def server_properties(
    node: KafkaNode,
    voters: str,
    nodes: int,
    certificates: BrokerCertificates,
    users: Mapping[str, str],
    overrides: Mapping[str, str],
) -> dict[str, str]:
    """The node's ``server.properties``: every listener, SASL per listener, PEM stores, small internal topics."""
    replication = str(min(3, nodes))
    min_isr = str(min(2, nodes))
    listeners = [f"{name}://{HOST}:{node.ports[name]}" for name in CLIENT_LISTENERS]
    plain_users = " ".join(f'user_{name}="{password}"' for name, password in users.items())
    props = {
        "process.roles": "broker,controller",
        "node.id": str(node.node_id),
        "controller.quorum.voters": voters,
        "controller.listener.names": "CONTROLLER",
        "listeners": ",".join([*listeners, f"CONTROLLER://{HOST}:{node.ports['CONTROLLER']}"]),
        "advertised.listeners": ",".join(listeners),
        "listener.security.protocol.map": ",".join(f"{n}:{n}" for n in CLIENT_LISTENERS)
        + ",CONTROLLER:PLAINTEXT",
        "inter.broker.listener.name": "PLAINTEXT",
        "log.dirs": str(node.directory / "data"),
        "num.partitions": "1",
        "default.replication.factor": replication,
        "offsets.topic.replication.factor": replication,
        "offsets.topic.num.partitions": "10",
        "transaction.state.log.replication.factor": replication,
        "transaction.state.log.min.isr": min_isr,
        "transaction.state.log.num.partitions": "10",
        "share.coordinator.state.topic.replication.factor": replication,
        "share.coordinator.state.topic.min.isr": min_isr,
        "group.initial.rebalance.delay.ms": "0",
        "log.cleaner.dedupe.buffer.size": "2097152",  # the default allocates 128 MiB of heap per cleaner
        "sasl.enabled.mechanisms": ",".join(SASL_MECHANISMS),
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": str(certificates.broker),
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(certificates.ca),
    }
    for listener in ("sasl_plaintext", "sasl_ssl"):
        props[f"listener.name.{listener}.plain.sasl.jaas.config"] = (
            f"org.apache.kafka.common.security.plain.PlainLoginModule required {plain_users};"
        )
        for mechanism in ("scram-sha-256", "scram-sha-512"):
            props[f"listener.name.{listener}.{mechanism}.sasl.jaas.config"] = (
                "org.apache.kafka.common.security.scram.ScramLoginModule required;"
            )
    props.update(overrides)
    return props


def write_properties(path: Path, props: Mapping[str, str]) -> None:
    """Java properties: ``\\``, ``=``, ``:`` and leading spaces escaped in keys; values keep their spaces."""

    def escape(text: str, key: bool) -> str:
        text = text.replace("\\", "\\\\").replace("\n", "\\n")
        return text.replace("=", "\\=").replace(":", "\\:").replace(" ", "\\ ") if key else text

    path.write_text(
        "".join(f"{escape(k, True)}={escape(v, False)}\n" for k, v in props.items()), encoding="utf-8"
    )


def format_storage(node: KafkaNode, cluster_id: str, users: Mapping[str, str]) -> None:
    """``kafka-storage.sh format``, with every user as SCRAM-SHA-256 and SCRAM-SHA-512 credentials."""
    scram = []
    for name, password in users.items():
        for mechanism in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
            scram += ["--add-scram", f"{mechanism}=[name={name},password={password}]"]
    argv = [
        java(),
        "-Xmx256m",
        "-XX:TieredStopAtLevel=1",
        "-XX:+UseSerialGC",
        "-cp",
        node.classpath,
        "kafka.tools.StorageTool",
        "format",
        "-t",
        cluster_id,
        "-c",
        str(node.properties_file),
        "--ignore-formatted",
        *scram,
    ]
    done = subprocess.run(
        argv,
        capture_output=True,
        text=True,
        check=False,
        cwd=node.directory,
        env={**os.environ, "KAFKA_LOG4J_OPTS": ""},
    )
    if done.returncode != 0:
        raise KafkaUnavailable(
            f"formatting Kafka node {node.node_id} failed:\n{(done.stdout + done.stderr)[-3000:]}"
        )


def random_cluster_id(classpath: str) -> str:
    done = subprocess.run(
        [
            java(),
            "-Xmx64m",
            "-XX:TieredStopAtLevel=1",
            "-cp",
            classpath,
            "kafka.tools.StorageTool",
            "random-uuid",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise KafkaUnavailable(f"kafka-storage random-uuid failed:\n{done.stderr[-2000:]}")
    return done.stdout.strip().splitlines()[-1]


def answers_kafka(port: int) -> bool:
    """True once the port answers a Kafka ApiVersions v0 request (a bare TCP accept is not enough)."""
    client_id = b"connect-engine"
    body = struct.pack(">hhih", 18, 0, 1, len(client_id)) + client_id
    try:
        with socket.create_connection((HOST, port), timeout=2) as sock:
            sock.sendall(struct.pack(">i", len(body)) + body)
            header = b""
            while len(header) < 10:
                chunk = sock.recv(10 - len(header))
                if not chunk:
                    return False
                header += chunk
    except OSError:
        return False
    _, correlation_id, error_code = struct.unpack(">iih", header)
    return bool(correlation_id == 1 and error_code == 0)
