"""Every worker property the engine reads, with its default and a one-line doc.

The one table behind ``connect-engine standalone --help`` and ``distributed --help``. It only
describes: each key is still parsed where it is used (``WorkerConfig``, the store factory, the
cluster settings, the data plane, REST, config providers, Spark settings). A test scans the source
for every key those readers read and fails on one missing here, or listed here but read nowhere.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass

from engine.config.kafka_clients.keys import TABLES, UNSUPPORTED

REST = "REST and identity"
HTTPS = (
    "REST over HTTPS (ssl.* keys; when any listeners.https.ssl.* key is set, those replace the ssl.* "
    "keys altogether) and CORS"
)
STORES = "config log, stores and topics (memory unless a file or Kafka is named)"
LIFECYCLE = "lifecycle timeouts"
DATA = "data plane"
PLUGINS = "plugins and secrets"
SPARK = "Spark (engine.spark; nothing starts until a task runs a job)"
KAFKA = "Kafka clients (security and settings; docs/operating/kafka-clients.md)"
CLUSTER = "cluster (distributed workers)"
SECTIONS = (CLUSTER, REST, HTTPS, STORES, KAFKA, LIFECYCLE, DATA, PLUGINS, SPARK)


@dataclass(frozen=True, slots=True)
class WorkerKey:
    """One worker property. A name with ``<...>`` stands for a family (``spark.conf.<key>``)."""

    name: str
    default: str | None
    doc: str
    section: str
    distributed_only: bool = False

    @property
    def family(self) -> bool:
        return "<" in self.name


WORKER_KEYS: tuple[WorkerKey, ...] = (
    # cluster
    WorkerKey("group.id", None, "required: workers with the same id form one cluster", CLUSTER, True),
    WorkerKey("session.timeout.ms", "10000", "how soon a dead worker is noticed", CLUSTER, True),
    WorkerKey("heartbeat.interval.ms", "3000", "group heartbeats", CLUSTER, True),
    WorkerKey("rebalance.timeout.ms", "60000", "how long a rebalance may take", CLUSTER, True),
    WorkerKey(
        "request.timeout.ms", "40000", "bounds a group request the broker never answers", CLUSTER, True
    ),
    WorkerKey(
        "scheduled.rebalance.max.delay.ms",
        "300000",
        "how long a departed worker's work waits (0: reassign at once)",
        CLUSTER,
        True,
    ),
    WorkerKey(
        "worker.sync.timeout.ms",
        "3000",
        "how long a worker waits to catch up with the leader's config",
        CLUSTER,
        True,
    ),
    WorkerKey(
        "rest.advertised.listener.url",
        None,
        "overrides the advertised URL other workers forward to",
        CLUSTER,
        True,
    ),
    WorkerKey(
        "inter.worker.key.generation.algorithm",
        "HmacSHA256",
        "how the leader generates the session key that signs internal requests (KIP-507)",
        CLUSTER,
        True,
    ),
    WorkerKey(
        "inter.worker.key.size",
        None,
        "the session key's size in bits (default: the algorithm's)",
        CLUSTER,
        True,
    ),
    WorkerKey(
        "inter.worker.key.ttl.ms", "3600000", "the leader rotates the session key this often", CLUSTER, True
    ),
    WorkerKey(
        "inter.worker.signature.algorithm",
        "HmacSHA256",
        "the MAC this worker signs internal requests with",
        CLUSTER,
        True,
    ),
    WorkerKey(
        "inter.worker.verification.algorithms",
        "HmacSHA256",
        "the MACs accepted on internal requests (must include the signature algorithm)",
        CLUSTER,
        True,
    ),
    # REST and identity
    WorkerKey(
        "listeners",
        "http://127.0.0.1:8083",
        "REST listeners, http:// or https://, comma-separated (empty host: every interface; port 0: any "
        "free port)",
        REST,
    ),
    WorkerKey(
        "admin.listeners",
        None,
        "listeners that alone serve /admin/loggers (KIP-208; unset: every listener; empty: none); "
        "admin.listeners.https.ssl.* for their TLS",
        REST,
    ),
    WorkerKey(
        "rest.advertised.listener",
        None,
        "http | https: the advertised URL's protocol (default http when a listener is http)",
        REST,
    ),
    WorkerKey(
        "rest.advertised.host.name",
        None,
        "host of the advertised URL and worker id (the advertised protocol's first listener's)",
        REST,
    ),
    WorkerKey(
        "rest.advertised.port", None, "port of the advertised URL and worker id (that listener's)", REST
    ),
    WorkerKey("rest.request.timeout.ms", "90000", "how long a request waits for a plugin, then 500", REST),
    WorkerKey(
        "error.rest.response.message.detail.enabled",
        "true",
        "false: no traces in REST statuses and no details in 5xx messages (the log keeps them)",
        REST,
    ),
    WorkerKey(
        "rest.basic.auth.credentials.file",
        None,
        "user:hash lines (python -m engine.rest.auth hash USER): requests need basic auth",
        REST,
    ),
    # HTTPS and CORS
    WorkerKey("ssl.keystore.type", "JKS", "PKCS12 | PEM (JKS: a PKCS12 file, as Java reads it)", HTTPS),
    WorkerKey("ssl.keystore.location", None, "the HTTPS listeners' key and certificate chain", HTTPS),
    WorkerKey("ssl.keystore.password", None, "its password (PKCS12)", HTTPS),
    WorkerKey("ssl.key.password", None, "the private key's password (an encrypted PEM key)", HTTPS),
    WorkerKey("ssl.keystore.certificate.chain", None, "inline PEM chain instead of a file (type PEM)", HTTPS),
    WorkerKey("ssl.keystore.key", None, "inline PEM private key with it", HTTPS),
    WorkerKey("ssl.truststore.type", "JKS", "PKCS12 | PEM", HTTPS),
    WorkerKey(
        "ssl.truststore.location",
        None,
        "whom the forwarding client and client authentication trust (else the system CAs)",
        HTTPS,
    ),
    WorkerKey("ssl.truststore.password", None, "its password (PKCS12)", HTTPS),
    WorkerKey(
        "ssl.truststore.certificates", None, "inline PEM certificates instead of a file (type PEM)", HTTPS
    ),
    WorkerKey("ssl.protocol", "TLSv1.3", "TLS | TLSv1.2 | TLSv1.3: the highest version used", HTTPS),
    WorkerKey("ssl.enabled.protocols", "TLSv1.2,TLSv1.3", "TLS versions allowed (their range)", HTTPS),
    WorkerKey(
        "ssl.cipher.suites", None, "TLS 1.2 suites allowed, Java or OpenSSL names (default OpenSSL's)", HTTPS
    ),
    WorkerKey(
        "ssl.endpoint.identification.algorithm",
        "https",
        "https: the forwarding client checks host names; empty: it does not",
        HTTPS,
    ),
    WorkerKey("ssl.client.authentication", "none", "none | requested | required: client certificates", HTTPS),
    WorkerKey(
        "listeners.https.<ssl key>",
        None,
        "an ssl.* key for HTTPS only (any one set: only these count)",
        HTTPS,
    ),
    WorkerKey(
        "access.control.allow.origin",
        None,
        "CORS: allowed origins, comma-separated, * = any (empty: no CORS headers)",
        HTTPS,
    ),
    WorkerKey("access.control.allow.methods", None, "CORS: allowed methods (default GET,POST,HEAD)", HTTPS),
    # stores
    WorkerKey(
        "bootstrap.servers",
        None,
        "Kafka brokers: config log and topics (and in a cluster every store) on Kafka",
        STORES,
    ),
    WorkerKey("config.storage.file.filename", None, "connectors and target states in a file", STORES),
    WorkerKey(
        "config.storage.topic",
        "connect-configs",
        "the config log's topic: a cluster's, or a standalone worker's when named",
        STORES,
    ),
    WorkerKey("config.storage.replication.factor", "1", "its replication factor", STORES),
    WorkerKey("offset.storage.file.filename", None, "source offsets in a file", STORES),
    WorkerKey(
        "offset.storage.topic",
        "connect-offsets",
        "source offsets on Kafka (when set, or in a cluster)",
        STORES,
    ),
    WorkerKey("offset.storage.partitions", "25", "partitions of the offsets topic", STORES),
    WorkerKey("offset.storage.replication.factor", "1", "its replication factor (-1: the broker's)", STORES),
    WorkerKey("status.storage.file.filename", None, "statuses in a file", STORES),
    WorkerKey(
        "internal.topics.automatic.creation.enable",
        "true",
        "create the config, status and offsets topics when missing (KIP-1209); false: they must exist "
        "(connect-engine internal-topics create)",
        STORES,
    ),
    WorkerKey(
        "status.storage.topic", "connect-status", "statuses on Kafka (when set, or in a cluster)", STORES
    ),
    WorkerKey("status.storage.partitions", "5", "partitions of the status topic", STORES),
    WorkerKey("status.storage.replication.factor", "1", "its replication factor (-1: the broker's)", STORES),
    WorkerKey(
        "topics.storage.file.filename", None, "in-process topics kept in a file (survive a restart)", STORES
    ),
    WorkerKey(
        "topics.retention.ms", "604800000", "in-process topics: default retention.ms (-1: forever)", STORES
    ),
    WorkerKey(
        "topics.retention.bytes", "-1", "in-process topics: default retention.bytes per partition", STORES
    ),
    WorkerKey("topics.segment.bytes", "67108864", "in-process topics: default segment.bytes", STORES),
    WorkerKey(
        "topics.segment.ms",
        None,
        "in-process topics: default segment.ms (unset: a tenth of retention.ms, 1 s .. 7 days)",
        STORES,
    ),
    WorkerKey(
        "topics.retention.check.interval.ms",
        None,
        "how often in-process retention runs (unset: a tenth of topics.retention.ms, 1 s .. 300000)",
        STORES,
    ),
    # Kafka clients
    WorkerKey(
        "security.protocol",
        "PLAINTEXT",
        "PLAINTEXT | SSL | SASL_PLAINTEXT | SASL_SSL: the worker's own clients",
        KAFKA,
    ),
    WorkerKey(
        "ssl.<key>",
        None,
        "TLS for the worker's own Kafka clients: the ssl.* keys above (Connect shares them)",
        KAFKA,
    ),
    WorkerKey("sasl.<key>", None, "SASL for them: sasl.mechanism, sasl.jaas.config ...", KAFKA),
    WorkerKey(
        "producer.<key>",
        None,
        "connectors' producers (security keys too: Connect does not inherit them)",
        KAFKA,
    ),
    WorkerKey("consumer.<key>", None, "connectors' consumers (likewise)", KAFKA),
    WorkerKey("admin.<key>", None, "connectors' admin clients (over the top-level keys)", KAFKA),
    WorkerKey(
        "connector.client.config.override.policy",
        "All",
        "which <client>.override.* keys connectors may set: All | None | Principal | Allowlist",
        KAFKA,
    ),
    WorkerKey(
        "connector.client.config.override.allowlist",
        None,
        "the Allowlist policy's client keys connectors may override (KIP-1188; empty: none)",
        KAFKA,
    ),
    # lifecycle
    WorkerKey(
        "task.shutdown.graceful.timeout.ms",
        "5000",
        "how long a stopping task may take, then abandoned",
        LIFECYCLE,
    ),
    WorkerKey("connector.shutdown.graceful.timeout.ms", "5000", "the same for a connector", LIFECYCLE),
    WorkerKey(
        "connector.callback.timeout.ms", "30000", "bounds task_class(), task_configs(), validate()", LIFECYCLE
    ),
    WorkerKey("connector.deleted.timeout.ms", "30000", "bounds Connector.deleted()", LIFECYCLE),
    WorkerKey(
        "connector.deleted.retry.backoff.ms", "10000", "a failed deleted() is retried this often", LIFECYCLE
    ),
    WorkerKey("connector.deleted.max.retries", "10", "... this many times, then given up", LIFECYCLE),
    WorkerKey(
        "task.threads.max",
        "128",
        "threads for synchronous tasks' poll()/put() at once (ours: Java gives each task one)",
        LIFECYCLE,
    ),
    WorkerKey(
        "task.processes",
        "0",
        "task host processes this worker's tasks run in (0: in its own process; needs bootstrap.servers;"
        " connect-engine standalone and distributed on Kafka default to the machine's cores;"
        " docs/operating/task-processes.md)",
        LIFECYCLE,
    ),
    WorkerKey(
        "task.process.memory.max.bytes",
        "0",
        "a task host whose resident memory passes this is killed and its tasks FAILED (0: no ceiling; Linux)",
        LIFECYCLE,
    ),
    # data plane
    WorkerKey(
        "offset.flush.interval.ms", "60000", "how often source offsets and sink commits are made", DATA
    ),
    WorkerKey("offset.flush.timeout.ms", "5000", "how long an offset flush may take", DATA),
    WorkerKey("consumer.max.poll.records", "500", "records per sink put()", DATA),
    WorkerKey("consumer.session.timeout.ms", "10000", "sink consumers' session on Kafka", DATA),
    WorkerKey("key.converter", "JsonConverter", "default key converter (+ key.converter.<sub-config>)", DATA),
    WorkerKey(
        "value.converter", "JsonConverter", "default value converter (+ value.converter.<sub-config>)", DATA
    ),
    WorkerKey("header.converter", "SimpleHeaderConverter", "default header converter", DATA),
    WorkerKey("topic.creation.enable", "true", "let source connectors create topics (KIP-158)", DATA),
    WorkerKey("topic.tracking.enable", "true", "record each connector's active topics (KIP-558)", DATA),
    WorkerKey("topic.tracking.allow.reset", "true", "allow PUT /connectors/<c>/topics/reset", DATA),
    WorkerKey("exactly.once.source.support", "disabled", "disabled | preparing | enabled (KIP-618)", DATA),
    # plugins and secrets
    WorkerKey("plugin.path", None, "comma-separated directories searched for plugins", PLUGINS),
    WorkerKey(
        "config.providers",
        None,
        "config providers for ${name:path:key} references, e.g. file,env,dir",
        PLUGINS,
    ),
    WorkerKey("config.providers.<name>.class", None, "a provider's class (built-ins need none)", PLUGINS),
    WorkerKey("config.providers.<name>.param.<param>", None, "a provider's settings", PLUGINS),
    # Spark
    WorkerKey("spark.master", "local[*]", "the SparkSession's master", SPARK),
    WorkerKey("spark.remote", None, "a Spark Connect URL instead (a real cluster)", SPARK),
    WorkerKey("spark.app.name", "connect-engine", "the Spark application's name", SPARK),
    WorkerKey(
        "spark.server.timeout.ms",
        "10000",
        "how long the first Spark use waits for a spark:// master or sc:// server to answer",
        SPARK,
    ),
    WorkerKey("spark.conf.<key>", None, "passed to the session builder as <key>", SPARK),
)


def by_name() -> dict[str, WorkerKey]:
    return {key.name: key for key in WORKER_KEYS}


def help_epilog(*, distributed: bool) -> str:
    """The worker-properties part of a command's ``--help``, grouped by section."""
    shown = [k for k in WORKER_KEYS if distributed or not k.distributed_only]
    width = max(len(k.name) for k in shown)
    lines = ["worker properties (Java .properties):"]
    for section in SECTIONS:
        keys = [k for k in shown if k.section == section]
        if keys:
            lines.append(f"  {section}:")
            lines.extend(
                f"    {k.name:<{width}}  {k.doc}" + (f"; default {k.default}" if k.default else "")
                for k in keys
            )
    return "\n".join(lines)


def unknown_worker_keys(props: Mapping[str, str]) -> list[tuple[str, str | None]]:
    """The keys of ``props`` no reader takes: not in this table (a family's prefix counts), nor a Kafka
    client key (the worker hands those to its clients, as Connect does). Each with the nearest known
    name when one is close (a typo: ``listners``, ``offset.flush.intervall.ms``)."""
    names = [k.name for k in WORKER_KEYS if not k.family]
    exact = set(names)
    families = tuple(k.name.split("<", 1)[0] for k in WORKER_KEYS if k.family)
    clients = {key for table in TABLES.values() for key in table} | set(UNSUPPORTED)
    unknown = []
    for key in props:
        if key in exact or key in clients or key.startswith(families):
            continue
        close = difflib.get_close_matches(key, names, n=1, cutoff=0.85)
        unknown.append((key, close[0] if close else None))
    return unknown
