"""The ``errors.*`` connector settings that drive retries, tolerance and reporting (KIP-298).

The keys are declared here, next to their one reader (``ErrorPolicy``), as ConfigDef keys of
Connect's "Error Handling" group: ``ERROR_KEYS`` for every connector (Connect's ``ConnectorConfig``),
``DLQ_KEYS`` for the dead letter queue (``SinkConnectorConfig``'s; sources accept them too, our
addition). ``engine.validation`` lists and validates them with the other framework keys.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal, cast

from engine.api.config_def import ConfigKey, ConfigType, Importance, ValidString, Width
from engine.api.errors import ConfigException
from engine.config.grouped_key import grouped_key

RETRY_TIMEOUT = "errors.retry.timeout"
RETRY_DELAY_MAX = "errors.retry.delay.max.ms"
TOLERANCE = "errors.tolerance"
LOG_ENABLE = "errors.log.enable"
LOG_INCLUDE_MESSAGES = "errors.log.include.messages"
DLQ_TOPIC = "errors.deadletterqueue.topic.name"
DLQ_REPLICATION_FACTOR = "errors.deadletterqueue.topic.replication.factor"
DLQ_CONTEXT_HEADERS = "errors.deadletterqueue.context.headers.enable"

ERROR_GROUP = "Error Handling"

_SHORT_MIN, _SHORT_MAX = -(2**15), 2**15 - 1


_key = partial(grouped_key, group=ERROR_GROUP)


def _error_keys() -> list[ConfigKey]:
    m, c = Importance.MEDIUM, ConfigType
    return [
        _key(
            1,
            RETRY_TIMEOUT,
            c.LONG,
            0,
            m,
            "The maximum duration in milliseconds that a failed operation will be reattempted. 0 means no "
            "retries, -1 infinite retries.",
            "Retry Timeout for Errors",
            width=Width.MEDIUM,
        ),
        _key(
            2,
            RETRY_DELAY_MAX,
            c.LONG,
            60000,
            m,
            "The maximum duration in milliseconds between consecutive retry attempts.",
            "Maximum Delay Between Retries for Errors",
            width=Width.MEDIUM,
        ),
        _key(
            3,
            TOLERANCE,
            c.STRING,
            "none",
            m,
            "Behavior for tolerating errors during connector operation. 'none' fails the task on the "
            "first error; 'all' skips problematic records.",
            "Error Tolerance",
            validator=ValidString.in_("none", "all"),
        ),
        _key(
            4,
            LOG_ENABLE,
            c.BOOLEAN,
            False,
            m,
            "If true, write each error and the details of the failed operation and problematic record to "
            "the log.",
            "Log Errors",
        ),
        _key(
            5,
            LOG_INCLUDE_MESSAGES,
            c.BOOLEAN,
            False,
            m,
            "Whether to include in the log the record that caused a failure.",
            "Log Error Details",
        ),
    ]


def _dlq_keys() -> list[ConfigKey]:
    m, c = Importance.MEDIUM, ConfigType
    return [
        _key(
            6,
            DLQ_TOPIC,
            c.STRING,
            "",
            m,
            "The name of the topic to be used as the dead letter queue (DLQ) for messages that result in "
            "an error when processed by this connector (a sink's records as consumed; a source's as its "
            "converters write them). Empty: no DLQ.",
            "Dead Letter Queue Topic Name",
            width=Width.MEDIUM,
        ),
        _key(
            7,
            DLQ_REPLICATION_FACTOR,
            c.SHORT,
            3,
            m,
            "Replication factor used to create the dead letter queue topic when it doesn't already exist.",
            "Dead Letter Queue Topic Replication Factor",
            width=Width.MEDIUM,
        ),
        _key(
            8,
            DLQ_CONTEXT_HEADERS,
            c.BOOLEAN,
            False,
            m,  # MEDIUM, as Connect
            "If true, add headers containing error context to the messages written to the dead letter queue.",
            "Enable Error Context Headers",
            width=Width.MEDIUM,
        ),
    ]


ERROR_KEYS = _error_keys()
DLQ_KEYS = _dlq_keys()
ERROR_DEFAULTS: dict[str, Any] = {key.name: key.default for key in (*ERROR_KEYS, *DLQ_KEYS)}


@dataclass(frozen=True)
class ErrorPolicy:
    """One connector's error handling; defaults are the declared keys' (Kafka's: no retry, no tolerance,
    no reporting)."""

    retry_timeout_ms: int = ERROR_DEFAULTS[RETRY_TIMEOUT]  # negative (-1): retry forever
    retry_delay_max_ms: int = ERROR_DEFAULTS[RETRY_DELAY_MAX]
    tolerance: Literal["none", "all"] = ERROR_DEFAULTS[TOLERANCE]
    log_enable: bool = ERROR_DEFAULTS[LOG_ENABLE]
    log_include_messages: bool = ERROR_DEFAULTS[LOG_INCLUDE_MESSAGES]
    dlq_topic: str = ERROR_DEFAULTS[DLQ_TOPIC]  # "": no dead letter queue
    dlq_replication_factor: int = ERROR_DEFAULTS[DLQ_REPLICATION_FACTOR]
    dlq_context_headers: bool = ERROR_DEFAULTS[DLQ_CONTEXT_HEADERS]

    @property
    def retries_forever(self) -> bool:
        return self.retry_timeout_ms < 0

    @classmethod
    def from_config(cls, props: Mapping[str, str]) -> ErrorPolicy:
        """Parse as Kafka's ``ConfigDef`` does (values trimmed, booleans case-insensitive).

        Stricter than Kafka in one place: a negative ``errors.retry.delay.max.ms`` is refused here,
        where Kafka accepts it and then fails the task at the first backoff.
        """
        delay_max = _long(props, RETRY_DELAY_MAX, ERROR_DEFAULTS[RETRY_DELAY_MAX])
        if delay_max < 0:
            raise ConfigException(RETRY_DELAY_MAX, delay_max, "Value must be at least 0")
        tolerance = _string(props, TOLERANCE, ERROR_DEFAULTS[TOLERANCE])
        if tolerance not in ("none", "all"):
            raise ConfigException(TOLERANCE, tolerance, "String must be one of: none, all")
        replication = _long(props, DLQ_REPLICATION_FACTOR, ERROR_DEFAULTS[DLQ_REPLICATION_FACTOR])
        if not _SHORT_MIN <= replication <= _SHORT_MAX:
            raise ConfigException(DLQ_REPLICATION_FACTOR, replication, "Value is out of range for a short")
        return cls(
            retry_timeout_ms=_long(props, RETRY_TIMEOUT, ERROR_DEFAULTS[RETRY_TIMEOUT]),
            retry_delay_max_ms=delay_max,
            tolerance=cast(Literal["none", "all"], tolerance),
            log_enable=_bool(props, LOG_ENABLE, ERROR_DEFAULTS[LOG_ENABLE]),
            log_include_messages=_bool(props, LOG_INCLUDE_MESSAGES, ERROR_DEFAULTS[LOG_INCLUDE_MESSAGES]),
            dlq_topic=_string(props, DLQ_TOPIC, ERROR_DEFAULTS[DLQ_TOPIC]),
            dlq_replication_factor=replication,
            dlq_context_headers=_bool(props, DLQ_CONTEXT_HEADERS, ERROR_DEFAULTS[DLQ_CONTEXT_HEADERS]),
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
