"""The RabbitMQ sink's configuration and the names of what it declares."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from engine.api import ConfigDef, ConfigDefError, ConfigType, Importance, LambdaValidator, Range

URL = "rabbitmq.url"
EXCHANGE = "rabbitmq.exchange"
QUEUE_PREFIX = "rabbitmq.queue.prefix"
MAX_IN_FLIGHT = "rabbitmq.max.in.flight"
CONFIRM_TIMEOUT = "rabbitmq.confirm.timeout.ms"

CONNECT_TIMEOUT_S = (
    10  # a broker that does not answer fails the start (or the cleanup, retried) instead of hanging
)
MAX_NAME = 255  # AMQP 0-9-1 short strings: exchange and queue names


def _url(name: str, value: Any) -> None:
    if value is not None and urlsplit(str(value)).scheme not in ("amqp", "amqps"):
        raise ConfigDefError(
            f"Invalid value {value} for configuration {name}: expected amqp://user:pass@host:port/vhost",
            name=name,
            value=value,
        )


CONFIG_DEF = (
    ConfigDef()
    .define(
        URL,
        ConfigType.STRING,
        importance=Importance.HIGH,
        validator=LambdaValidator(_url, "amqp://..."),
        documentation="amqp://user:pass@host:port/vhost (amqps:// for TLS)",
    )
    .define(
        EXCHANGE,
        ConfigType.STRING,
        "",
        importance=Importance.HIGH,
        documentation="Direct exchange the records are published to (routing key: the topic); declared when "
        "missing and then deleted with the connector; an existing one is used and left alone. "
        "Default connect.<connector name>",
    )
    .define(
        QUEUE_PREFIX,
        ConfigType.STRING,
        "",
        importance=Importance.MEDIUM,
        documentation="Each topic gets a durable queue <prefix><topic> bound with the topic as routing key, "
        "declared when missing and deleted with the connector. Default <connector name>.",
    )
    .define(
        MAX_IN_FLIGHT,
        ConfigType.INT,
        5000,
        Range.at_least(1),
        Importance.LOW,
        "Messages published but not yet confirmed before put() waits for confirms",
    )
    .define(
        CONFIRM_TIMEOUT,
        ConfigType.INT,
        5000,
        Range.at_least(1),
        Importance.LOW,
        "How long an offset commit waits for outstanding publisher confirms; what is still unconfirmed "
        "then is committed at a later commit (or delivered again after a restart)",
    )
)


@dataclass(frozen=True, slots=True)
class RabbitConfig:
    name: str
    url: str
    exchange: str
    queue_prefix: str
    max_in_flight: int
    confirm_timeout_s: float

    @classmethod
    def parse(cls, props: dict[str, str]) -> RabbitConfig:
        values: dict[str, Any] = CONFIG_DEF.parse(props)
        name = props.get("name", "connector")
        return cls(
            name=name,
            url=values[URL],
            exchange=values[EXCHANGE] or f"connect.{name}",
            queue_prefix=values[QUEUE_PREFIX] or f"{name}.",
            max_in_flight=values[MAX_IN_FLIGHT],
            confirm_timeout_s=values[CONFIRM_TIMEOUT] / 1000,
        )

    def queue(self, topic: str) -> str:
        return self.queue_prefix + topic


def ledger_name(connector: str, incarnation: str | None) -> str:
    """The queue that records what one incarnation of a connector declared (fits AMQP's 255 bytes)."""
    name = f"connect-engine.provisioned.{connector}.{incarnation or 'none'}"
    if len(name.encode()) <= MAX_NAME:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:16]
    return f"connect-engine.provisioned.{digest}.{incarnation or 'none'}"
