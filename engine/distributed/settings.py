"""The worker properties distributed mode acts on (Kafka's ``DistributedConfig``), checked once at start."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.config.worker import WorkerConfig, int_setting
from engine.configlog.factory import DEFAULT_TOPIC
from engine.distributed.request_signing import SigningSettings
from engine.errors import ConfigError

REQUIRED = ("group.id", "bootstrap.servers")


def check_required(worker: Mapping[str, str]) -> None:
    """Connect's ``ConfigException`` for the keys a distributed worker cannot start without."""
    missing = [key for key in REQUIRED if not worker.get(key, "").strip()]
    if missing:
        raise ConfigError(
            f'Missing required configuration "{missing[0]}" which has no default value.',
            errors={key: ["Missing required configuration"] for key in missing},
        )


@dataclass(frozen=True, slots=True)
class ClusterSettings:
    worker_id: str
    url: str  # this worker's REST URL, as the others reach it (forwarding)
    bootstrap_servers: str
    group_id: str
    config_topic: str
    session_timeout_ms: int
    heartbeat_interval_ms: int
    rebalance_timeout_ms: int
    request_timeout_ms: int
    scheduled_rebalance_max_delay_ms: int
    sync_timeout_s: float
    # the worker's security settings for the group membership client (KafkaClients.own())
    client_args: Mapping[str, Any] = field(default_factory=dict)
    # KIP-507: the inter.worker.* keys (session key generation, rotation, signing, verification)
    signing: SigningSettings = field(default_factory=SigningSettings)

    @classmethod
    def from_worker(cls, worker: WorkerConfig) -> ClusterSettings:
        raw = worker.raw
        check_required(raw)
        return cls(
            worker_id=worker.worker_id,
            url=raw.get("rest.advertised.listener.url", "").strip() or worker.advertised_url,
            bootstrap_servers=raw["bootstrap.servers"],
            group_id=raw["group.id"].strip(),
            config_topic=raw.get("config.storage.topic", "").strip() or DEFAULT_TOPIC,
            session_timeout_ms=int_setting(raw, "session.timeout.ms", 10_000, minimum=1),
            heartbeat_interval_ms=int_setting(raw, "heartbeat.interval.ms", 3_000, minimum=1),
            rebalance_timeout_ms=int_setting(raw, "rebalance.timeout.ms", 60_000, minimum=1),
            # bounds a JoinGroup the broker never answers (seen on noida 0.2.3 mid-rebalance)
            request_timeout_ms=int_setting(raw, "request.timeout.ms", 40_000, minimum=1),
            scheduled_rebalance_max_delay_ms=int_setting(raw, "scheduled.rebalance.max.delay.ms", 300_000),
            sync_timeout_s=int_setting(raw, "worker.sync.timeout.ms", 3_000, minimum=1) / 1000,
            client_args=worker.kafka.own(),
            signing=SigningSettings.parse(raw),
        )
