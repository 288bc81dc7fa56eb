"""The translation table: Kafka's Java client keys -> aiokafka keyword arguments, per client role.

Each supported key names its aiokafka argument and how its text becomes a value. Keys Kafka's
clients know that aiokafka cannot honour are listed as unsupported, so they are refused by name
rather than ignored; anything else is unknown, and refused too. The security keys
(``security.protocol``, ``ssl.*``, ``sasl.*``) are translated together by ``translate``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import structlog

from engine.config.kafka_clients.tls import SSL_KEYS
from engine.config.ssl_context import UNSUPPORTED as UNSUPPORTED_SSL

log = structlog.get_logger(component="kafka-clients")

Role = Literal["producer", "consumer", "admin"]
ROLES: tuple[Role, ...] = ("producer", "consumer", "admin")


class BadValue(ValueError):
    """A value a converter refuses; the message says what is expected."""


def _int(text: str) -> int:
    try:
        value = int(text.strip())
    except ValueError:
        raise BadValue("Not a number of type INT") from None
    if value < 0:
        raise BadValue("Value must be at least 0")
    return value


def _bool(text: str) -> bool:
    value = text.strip().lower()
    if value not in ("true", "false"):
        raise BadValue("Expected value to be either true or false")
    return value == "true"


def _text(text: str) -> str:
    if not text.strip():
        raise BadValue("must not be empty")
    return text.strip()


def _choice(*allowed: str, mapped: Mapping[str, Any] | None = None) -> Callable[[str], Any]:
    def convert(text: str) -> Any:
        value = text.strip().lower()
        if value not in allowed:
            raise BadValue(f"String must be one of: {', '.join(allowed)}")
        return (mapped or {}).get(value, value)

    return convert


def _metadata_recovery(text: str) -> None:
    """KIP-899 ``metadata.recovery.strategy``: aiokafka never goes back to ``bootstrap.servers`` once it knows
    the cluster's brokers, which is ``none``; ``rebootstrap`` is refused rather than accepted and not done."""
    value = text.strip().lower()
    if value == "none":
        return
    if value == "rebootstrap":
        raise BadValue(
            "aiokafka cannot re-bootstrap (once it knows the cluster's brokers it never returns to "
            "bootstrap.servers): only none is supported"
        )
    raise BadValue("String must be one of (case insensitive): none, rebootstrap")


def _bootstrap_resolve_timeout(text: str) -> None:
    """Kafka 4.4's ``bootstrap.resolve.timeout.ms``: Connect forces it to 0 (``ConnectUtils
    .enforceSynchronousBootstrapResolution``), warning in these words; aiokafka resolves at once too."""
    value = _int(text)
    if value != 0:
        log.warning(
            "kafka_clients.setting_ignored",
            key=BOOTSTRAP_RESOLVE_TIMEOUT,
            reason=f"The value '{text.strip()}' for the '{BOOTSTRAP_RESOLVE_TIMEOUT}' property will be ignored "
            "as it cannot be overridden in Kafka Connect, which does not support asynchronous bootstrap "
            "resolution. The value '0' will be used instead.",
        )


def _rack_aware(text: str) -> None:
    """``partitioner.rack.aware`` (Kafka 4.4, default false): aiokafka's partitioner knows no racks."""
    if _bool(text):
        raise BadValue("aiokafka's partitioner is not rack-aware: only false is supported")


def _only(*accepted: str) -> Callable[[str], None]:
    """Keys Connect sets itself, accepted at the value it uses (copied configs often carry them)."""

    def convert(text: str) -> None:
        if text.strip() not in accepted and text.strip().rsplit(".", 1)[-1] not in accepted:
            raise BadValue(
                f"only {accepted[0]} is supported: the engine moves bytes and converts them itself"
            )

    return convert


def _assignors(text: str) -> tuple[Any, ...]:
    from aiokafka.coordinator.assignors.range import RangePartitionAssignor
    from aiokafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
    from aiokafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor

    known = {
        "RangeAssignor": RangePartitionAssignor,
        "RoundRobinAssignor": RoundRobinPartitionAssignor,
        "StickyAssignor": StickyPartitionAssignor,
    }
    chosen = []
    for name in (n.strip() for n in text.split(",") if n.strip()):
        simple = name.rsplit(".", 1)[-1]
        if simple not in known:
            raise BadValue(
                f"'{name}' is not supported (aiokafka has {', '.join(known)}; no cooperative protocol)"
            )
        chosen.append(known[simple])
    if not chosen:
        raise BadValue("must name at least one assignor")
    return tuple(chosen)


@dataclass(frozen=True, slots=True)
class Translation:
    """One supported key: the aiokafka argument (None: read by the engine itself) and its converter."""

    argument: str | None
    convert: Callable[[str], Any]


_COMMON: dict[str, Translation] = {
    "bootstrap.servers": Translation("bootstrap_servers", _text),
    "client.id": Translation("client_id", _text),
    "request.timeout.ms": Translation("request_timeout_ms", _int),
    "retry.backoff.ms": Translation("retry_backoff_ms", _int),
    "metadata.max.age.ms": Translation("metadata_max_age_ms", _int),
    "connections.max.idle.ms": Translation("connections_max_idle_ms", _int),
    "metadata.recovery.strategy": Translation(None, _metadata_recovery),  # aiokafka's behaviour is none
    # Kafka 4.4: a misrouted-connection check that only applies when re-bootstrapping (never, here)
    "metadata.cluster.check.enable": Translation(None, _bool),
}
BOOTSTRAP_RESOLVE_TIMEOUT = "bootstrap.resolve.timeout.ms"  # Kafka 4.4; Connect forces it to 0
_COMMON[BOOTSTRAP_RESOLVE_TIMEOUT] = Translation(None, _bootstrap_resolve_timeout)
_PRODUCER: dict[str, Translation] = {
    "acks": Translation("acks", _choice("all", "-1", "0", "1", mapped={"-1": "all", "0": 0, "1": 1})),
    "compression.type": Translation(
        "compression_type", _choice("none", "gzip", "snappy", "lz4", "zstd", mapped={"none": None})
    ),
    "batch.size": Translation("max_batch_size", _int),
    "linger.ms": Translation("linger_ms", _int),
    "max.request.size": Translation("max_request_size", _int),
    "enable.idempotence": Translation("enable_idempotence", _bool),
    "transactional.id": Translation("transactional_id", _text),
    "transaction.timeout.ms": Translation("transaction_timeout_ms", _int),
    "partitioner.rack.aware": Translation(None, _rack_aware),  # Kafka 4.4
    # Kafka 4.4: how batches take memory from buffer.memory (a pool aiokafka does not have)
    "buffer.memory.allocation.strategy": Translation(None, _choice("full", "incremental")),
    "key.serializer": Translation(None, _only("ByteArraySerializer")),
    "value.serializer": Translation(None, _only("ByteArraySerializer")),
}
_CONSUMER: dict[str, Translation] = {
    # the sink's group: read by the sink loop (consumer.override.group.id), passed as group_id
    "group.id": Translation(None, _text),
    "auto.offset.reset": Translation("auto_offset_reset", _choice("earliest", "latest", "none")),
    "enable.auto.commit": Translation(None, _choice("false")),  # Connect commits itself
    "isolation.level": Translation("isolation_level", _choice("read_uncommitted", "read_committed")),
    "max.poll.records": Translation("max_poll_records", _int),
    "fetch.min.bytes": Translation("fetch_min_bytes", _int),
    "fetch.max.bytes": Translation("fetch_max_bytes", _int),
    "fetch.max.wait.ms": Translation("fetch_max_wait_ms", _int),
    "max.partition.fetch.bytes": Translation("max_partition_fetch_bytes", _int),
    "session.timeout.ms": Translation("session_timeout_ms", _int),
    "heartbeat.interval.ms": Translation("heartbeat_interval_ms", _int),
    "max.poll.interval.ms": Translation("max_poll_interval_ms", _int),
    "auto.commit.interval.ms": Translation("auto_commit_interval_ms", _int),
    "check.crcs": Translation("check_crcs", _bool),
    "client.rack": Translation("client_rack", _text),
    "group.instance.id": Translation("group_instance_id", _text),
    "exclude.internal.topics": Translation("exclude_internal_topics", _bool),
    "partition.assignment.strategy": Translation("partition_assignment_strategy", _assignors),
    "key.deserializer": Translation(None, _only("ByteArrayDeserializer")),
    "value.deserializer": Translation(None, _only("ByteArrayDeserializer")),
}
TABLES: dict[Role, dict[str, Translation]] = {
    "producer": {**_COMMON, **_PRODUCER},
    "consumer": {**_COMMON, **_CONSUMER},
    "admin": dict(_COMMON),
}

SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
# the security keys translate_security reads (ssl.* into an SSLContext, sasl.* into sasl_* arguments)
SECURITY_KEYS = frozenset(
    {
        "security.protocol",
        "sasl.mechanism",
        "sasl.jaas.config",
        "sasl.login.callback.handler.class",
        "sasl.oauthbearer.token.endpoint.url",
        # Kafka 4.4: brokers' JWT validation settings, in every client's SaslConfigs; nothing for a client to do
        "sasl.oauthbearer.allow.unverified.audience",
        "sasl.oauthbearer.allow.unverified.issuer",
        *SSL_KEYS,
    }
)
# the secret ones: masked in logs, never answered resolved (Kafka types them PASSWORD)
SECRET_KEYS = frozenset(
    {
        "sasl.jaas.config",
        "ssl.truststore.password",
        "ssl.keystore.password",
        "ssl.key.password",
        "ssl.keystore.key",
        "ssl.truststore.certificates",
    }
)

# Known to Kafka's clients, no aiokafka equivalent: refused by name, with this reason
UNSUPPORTED: dict[str, str] = {
    **dict.fromkeys(
        (
            "buffer.memory",
            "max.block.ms",
            "retries",
            "delivery.timeout.ms",
            "max.in.flight.requests.per.connection",
            "partitioner.class",
            "partitioner.ignore.keys",
            "partitioner.adaptive.partitioning.enable",
            "partitioner.availability.timeout.ms",
            "compression.gzip.level",
            "compression.lz4.level",
            "compression.zstd.level",
            "metadata.max.idle.ms",
        ),
        "aiokafka has no such setting",
    ),
    "metadata.recovery.rebootstrap.trigger.ms": "aiokafka cannot re-bootstrap (metadata.recovery.strategy=none)",
    **dict.fromkeys(
        (
            "reconnect.backoff.ms",
            "reconnect.backoff.max.ms",
            "retry.backoff.max.ms",
            "send.buffer.bytes",
            "receive.buffer.bytes",
            "socket.connection.setup.timeout.ms",
            "socket.connection.setup.timeout.max.ms",
            "client.dns.lookup",
            "default.api.timeout.ms",
            "allow.auto.create.topics",
            "group.protocol",
            "group.remote.assignor",
            "interceptor.classes",
            "metric.reporters",
            "metrics.num.samples",
            "metrics.sample.window.ms",
            "metrics.recording.level",
            "auto.include.jmx.reporter",
            "enable.metrics.push",
            "security.providers",
        ),
        "aiokafka has no such setting",
    ),
    **dict.fromkeys(
        UNSUPPORTED_SSL, "TLS comes from Python's ssl module (OpenSSL); no Java security provider"
    ),
    **dict.fromkeys(
        (
            "sasl.kerberos.service.name",
            "sasl.kerberos.kinit.cmd",
            "sasl.kerberos.min.time.before.relogin",
            "sasl.kerberos.ticket.renew.jitter",
            "sasl.kerberos.ticket.renew.window.factor",
        ),
        "GSSAPI (Kerberos) is not supported",
    ),
    **dict.fromkeys(
        (
            "sasl.client.callback.handler.class",
            "sasl.login.class",
            "sasl.login.refresh.window.factor",
            "sasl.login.refresh.window.jitter",
            "sasl.login.refresh.min.period.seconds",
            "sasl.login.refresh.buffer.seconds",
            "sasl.login.connect.timeout.ms",
            "sasl.login.read.timeout.ms",
            "sasl.login.retry.backoff.ms",
            "sasl.login.retry.backoff.max.ms",
            "sasl.oauthbearer.scope.claim.name",
            "sasl.oauthbearer.sub.claim.name",
            "sasl.oauthbearer.jwks.endpoint.url",
            "sasl.oauthbearer.expected.audience",
            "sasl.oauthbearer.expected.issuer",
            "sasl.oauthbearer.clock.skew.seconds",
            "sasl.oauthbearer.jwks.endpoint.refresh.ms",
            "sasl.oauthbearer.header.urlencode",
        ),
        "not supported: tokens are renewed shortly before they expire",
    ),
}


def _a(role: str) -> str:
    return f"an {role}" if role[0] in "aeiou" else f"a {role}"


def describe_key(key: str, role: Role) -> Translation | str | None:
    """The translation of ``key`` for ``role``; a reason when Kafka knows it and we cannot; None: unknown."""
    found = TABLES[role].get(key)
    if found is not None:
        return found
    if key in UNSUPPORTED:
        return f"not supported ({UNSUPPORTED[key]})"
    for other in ROLES:
        if other != role and key in TABLES[other]:
            return f"not {_a(role)} setting (it is {_a(other)} setting)"
    return None
