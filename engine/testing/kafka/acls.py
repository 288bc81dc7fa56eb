"""ACLs on a running Apache Kafka (``authorizer=True``), made by Kafka's own ``kafka-acls`` tool class.

aiokafka's admin client has no ACL calls, and its protocol module knows only CreateAcls v0/v1,
which Kafka 4.0 removed (KIP-896); so the tool runs from the same classpath as the broker,
``org.apache.kafka.tools.AclCommand`` on 4.x and ``kafka.admin.AclCommand`` on 3.x. It connects to
the ``PLAINTEXT`` listener, whose unauthenticated principal ``User:ANONYMOUS`` is a super user of
every node :func:`~engine.testing.kafka.apache_kafka` starts with the authorizer on.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from typing import TYPE_CHECKING

from engine.testing.kafka.classpath import KafkaUnavailable, java, kafka_classpath, major

if TYPE_CHECKING:
    from engine.testing.kafka.cluster import ApacheKafka

TOOL_JVM = ("-Xmx128m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-XX:-UsePerfData")


def acl_command_class(version: str) -> str:
    return "org.apache.kafka.tools.AclCommand" if major(version) >= 4 else "kafka.admin.AclCommand"


def kafka_acls(kafka: ApacheKafka, *args: str) -> str:
    """Run ``kafka-acls --bootstrap-server <PLAINTEXT> *args`` and return its output; a refusal raises
    :class:`KafkaUnavailable` with the tool's words."""
    argv = [
        java(),
        *TOOL_JVM,
        "-cp",
        kafka_classpath(kafka.version),
        acl_command_class(kafka.version),
        "--bootstrap-server",
        kafka.bootstrap_servers(),
        *args,
    ]
    done = subprocess.run(
        argv,
        capture_output=True,
        text=True,
        check=False,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "KAFKA_LOG4J_OPTS": ""},
        timeout=120,
    )
    if done.returncode != 0:
        raise KafkaUnavailable(f"kafka-acls {' '.join(args)} failed:\n{(done.stdout + done.stderr)[-3000:]}")
    return done.stdout


def add_acl(
    kafka: ApacheKafka,
    principal: str,
    operations: Sequence[str],
    *,
    topics: Sequence[str] = (),
    groups: Sequence[str] = (),
    cluster: bool = False,
    deny: bool = False,
    prefixed: bool = False,
) -> None:
    """Allow (or, ``deny=True``, deny) ``principal`` (``User:alice``) ``operations`` (``Read``, ``Write``,
    ``All``, ...) on the given topics and groups (``*`` for every one) and the cluster. A deny wins
    over any allow, so ``All`` on ``*`` plus one deny takes exactly one right away."""
    args = ["--add", "--deny-principal" if deny else "--allow-principal", principal, "--force"]
    for operation in operations:
        args += ["--operation", operation]
    for topic in topics:
        args += ["--topic", topic]
    for group in groups:
        args += ["--group", group]
    if cluster:
        args.append("--cluster")
    if prefixed:
        args += ["--resource-pattern-type", "prefixed"]
    kafka_acls(kafka, *args)
