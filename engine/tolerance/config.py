"""The ``errors.*`` connector settings that drive retries, tolerance and reporting (KIP-298)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, cast

from engine.api.errors import ConfigException

RETRY_TIMEOUT = "errors.retry.timeout"
RETRY_DELAY_MAX = "errors.retry.delay.max.ms"
TOLERANCE = "errors.tolerance"
LOG_ENABLE = "errors.log.enable"
LOG_INCLUDE_MESSAGES = "errors.log.include.messages"
DLQ_TOPIC = "errors.deadletterqueue.topic.name"
DLQ_REPLICATION_FACTOR = "errors.deadletterqueue.topic.replication.factor"
DLQ_CONTEXT_HEADERS = "errors.deadletterqueue.context.headers.enable"

_SHORT_MIN, _SHORT_MAX = -(2**15), 2**15 - 1


@dataclass(frozen=True)
class ErrorPolicy:
    """One connector's error handling; defaults are Kafka's (no retry, no tolerance, no reporting)."""

    retry_timeout_ms: int = 0  # negative (-1): retry forever
    retry_delay_max_ms: int = 60000
    tolerance: Literal["none", "all"] = "none"
    log_enable: bool = False
    log_include_messages: bool = False
    dlq_topic: str = ""  # "": no dead letter queue
    dlq_replication_factor: int = 3
    dlq_context_headers: bool = False

    @property
    def retries_forever(self) -> bool:
        return self.retry_timeout_ms < 0

    @classmethod
    def from_config(cls, props: Mapping[str, str]) -> ErrorPolicy:
        """Parse as Kafka's ``ConfigDef`` does (values trimmed, booleans case-insensitive).

        Stricter than Kafka in one place: a negative ``errors.retry.delay.max.ms`` is refused here,
        where Kafka accepts it and then fails the task at the first backoff.
        """
        delay_max = _long(props, RETRY_DELAY_MAX, 60000)
        if delay_max < 0:
            raise ConfigException(RETRY_DELAY_MAX, delay_max, "Value must be at least 0")
        tolerance = _string(props, TOLERANCE, "none")
        if tolerance not in ("none", "all"):
            raise ConfigException(TOLERANCE, tolerance, "String must be one of: none, all")
        replication = _long(props, DLQ_REPLICATION_FACTOR, 3)
        if not _SHORT_MIN <= replication <= _SHORT_MAX:
            raise ConfigException(DLQ_REPLICATION_FACTOR, replication, "Value is out of range for a short")
        return cls(
            retry_timeout_ms=_long(props, RETRY_TIMEOUT, 0),
            retry_delay_max_ms=delay_max,
            tolerance=cast(Literal["none", "all"], tolerance),
            log_enable=_bool(props, LOG_ENABLE, False),
            log_include_messages=_bool(props, LOG_INCLUDE_MESSAGES, False),
            dlq_topic=_string(props, DLQ_TOPIC, ""),
            dlq_replication_factor=replication,
            dlq_context_headers=_bool(props, DLQ_CONTEXT_HEADERS, False),
        )


def _raw(props: Mapping[str, str], key: str) -> str | None:
    value = props.get(key)
    if value is None:
        return None
    return str(value).strip()


def _string(props: Mapping[str, str], key: str, default: str) -> str:
    value = _raw(props, key)
    return default if value is None else value


def _long(props: Mapping[str, str], key: str, default: int) -> int:
    value = _raw(props, key)
    if value is None:
        return default
    try:
        return int(value, 10)
    except ValueError:
        raise ConfigException(key, value, "Not a number of type LONG") from None


def _bool(props: Mapping[str, str], key: str, default: bool) -> bool:
    value = _raw(props, key)
    if value is None:
        return default
    lowered = value.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    raise ConfigException(key, value, "Expected value to be either true or false")
