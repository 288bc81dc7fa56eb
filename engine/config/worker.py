"""Worker configuration: which logs and stores to use, timeouts, and the worker's identity."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from engine.config.kafka_clients import KafkaClients
from engine.config.listeners import advertised_url
from engine.config.providers import ConfigTransformer
from engine.errors import ConfigError

_DEFAULTS: dict[str, str] = {
    "listeners": "http://127.0.0.1:8083",
    "task.shutdown.graceful.timeout.ms": "5000",
    # Connect hard-codes 5 s for connectors; configurable here so tests can shorten it.
    "connector.shutdown.graceful.timeout.ms": "5000",
    # Bounds Connector.deleted(): cleanup of external resources may be slow, but never endless.
    "connector.deleted.timeout.ms": "30000",
    # Bounds task_class()/task_configs()/validate(), which run on the herder's behalf.
    "connector.callback.timeout.ms": "30000",
    "connector.deleted.retry.backoff.ms": "10000",
    "connector.deleted.max.retries": "10",
    "config.storage.replication.factor": "1",
}


def _millis(props: Mapping[str, str], key: str) -> float:
    raw = props[key]
    try:
        value = int(raw.strip())
    except ValueError:
        raise ConfigError(
            f"Invalid value {raw} for configuration {key}: Not a number of type LONG",
            errors={key: ["Not a number of type LONG"]},
        ) from None
    if value < 0:
        raise ConfigError(
            f"Invalid value {raw} for configuration {key}: Value must be at least 0",
            errors={key: ["Value must be at least 0"]},
        )
    return value / 1000


def bool_setting(props: Mapping[str, str], key: str, default: str) -> bool:
    """A boolean worker property (case-insensitive; ``default`` as written in a file), with Connect's
    wording when it is neither."""
    raw = props.get(key, "").strip() or default
    if raw.lower() not in ("true", "false"):
        raise ConfigError(
            f"Invalid value {raw} for configuration {key}: Expected value to be either true or false",
            errors={key: ["Expected value to be either true or false"]},
        )
    return raw.lower() == "true"


def int_setting(props: Mapping[str, str], key: str, default: int, *, minimum: int = 0) -> int:
    """A whole-number worker property, with Connect's wording when it is not one or is too small."""
    raw = props.get(key, "").strip() or str(default)
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(
            f"Invalid value {raw} for configuration {key}: Not a number of type INT",
            errors={key: ["Not a number of type INT"]},
        ) from None
    if value < minimum:
        raise ConfigError(
            f"Invalid value {raw} for configuration {key}: Value must be at least {minimum}",
            errors={key: [f"Value must be at least {minimum}"]},
        )
    return value


@dataclass(frozen=True, slots=True)
class WorkerConfig:
    """The parsed worker properties the engine acts on; everything else is kept in ``raw``."""

    raw: dict[str, str]
    worker_id: str
    # the REST URL other workers forward to (Connect's RestServer.advertisedUrl)
    advertised_url: str
    task_shutdown_timeout: float
    connector_shutdown_timeout: float
    deleted_timeout: float
    callback_timeout: float
    # a failed or timed-out deleted() is retried this often, this many times, then given up
    deleted_retry_backoff: float
    deleted_max_retries: int
    # config.providers: resolves ${provider:path:key} when connectors and tasks start (KIP-297)
    transformer: ConfigTransformer
    # security.protocol, ssl.*, sasl.*, producer.*, consumer.*, admin.*, the override policy: checked here
    kafka: KafkaClients

    @classmethod
    def parse(cls, props: Mapping[str, str] | None) -> WorkerConfig:
        raw = {**_DEFAULTS, **{str(k): str(v) for k, v in (props or {}).items()}}
        transformer = ConfigTransformer.from_worker(raw)
        url = advertised_url(raw)
        return cls(
            raw=raw,
            worker_id=_worker_id(url),
            advertised_url=url,
            task_shutdown_timeout=_millis(raw, "task.shutdown.graceful.timeout.ms"),
            connector_shutdown_timeout=_millis(raw, "connector.shutdown.graceful.timeout.ms"),
            deleted_timeout=_millis(raw, "connector.deleted.timeout.ms"),
            callback_timeout=_millis(raw, "connector.callback.timeout.ms"),
            deleted_retry_backoff=_millis(raw, "connector.deleted.retry.backoff.ms"),
            deleted_max_retries=int_setting(raw, "connector.deleted.max.retries", 10),
            transformer=transformer,
            kafka=KafkaClients.from_worker(raw, transformer),
        )

    def get(self, key: str) -> str | None:
        value = self.raw.get(key)
        return value if value else None


def _worker_id(url: str) -> str:
    """Connect's worker id: the advertised REST URL's host:port."""
    parts = urlsplit(url)
    return parts.netloc
