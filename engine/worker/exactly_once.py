"""Exactly-once source support (KIP-618): the worker switch and a connector's settings.

Connect allows it only in distributed mode; here any engine whose source offsets live on Kafka
(``group.id``, or ``offset.storage.topic`` with ``bootstrap.servers``) may enable it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.api.config_def import (
    CaseInsensitiveValidString,
    ConfigKey,
    ConfigType,
    Importance,
    LambdaValidator,
    Range,
    Width,
)
from engine.api.connector import Connector, SourceConnector
from engine.api.exactly_once import ConnectorTransactionBoundaries, ExactlyOnceSupport
from engine.errors import ConfigError

WORKER_KEY = "exactly.once.source.support"
SUPPORT_KEY = "exactly.once.support"
BOUNDARY_KEY = "transaction.boundary"
INTERVAL_KEY = "transaction.boundary.interval.ms"
WORKER_VALUES = ("disabled", "preparing", "enabled")

EXACTLY_ONCE_GROUP = "Exactly Once Support"
_AT_LEAST_ZERO = Range.at_least(0)


def _null_or_at_least_zero(name: str, value: Any) -> None:
    if value is not None:
        _AT_LEAST_ZERO(name, value)


def _exactly_once_keys() -> list[ConfigKey]:
    """A source connector's exactly-once keys (Connect's ``SourceConnectorConfig``), declared beside their
    reader; ``engine.validation.source_config`` lists and validates them with the other source keys."""
    # Kafka keeps CaseInsensitiveValidString's values in a HashSet, so its messages list them in
    # that set's order: REQUIRED, REQUESTED and INTERVAL, POLL, CONNECTOR.
    return [
        ConfigKey(SUPPORT_KEY, ConfigType.STRING, "requested",
                  CaseInsensitiveValidString.in_("required", "requested"), Importance.MEDIUM,
                  "Permitted values are requested, required. With \"required\", creating or validating the "
                  "connector runs a preflight check that it can provide exactly-once semantics with this "
                  "configuration (its exactly_once_support() must return SUPPORTED), and fails when the worker "
                  "does not have exactly-once source support enabled. With \"requested\" no check is made.",
                  EXACTLY_ONCE_GROUP, 2, Width.SHORT, "Exactly once support"),
        ConfigKey(BOUNDARY_KEY, ConfigType.STRING, "poll",
                  CaseInsensitiveValidString.in_("interval", "poll", "connector"), Importance.MEDIUM,
                  "Permitted values are: poll, interval, connector. 'poll' starts and commits a producer "
                  "transaction for every batch of records a task's poll() returns; 'connector' lets the connector "
                  "define the boundaries (not every connector can: creating one that cannot fails); 'interval' "
                  "commits after transaction.boundary.interval.ms.",
                  EXACTLY_ONCE_GROUP, 3, Width.SHORT, "Transaction Boundary"),
        ConfigKey(INTERVAL_KEY, ConfigType.LONG, None,
                  LambdaValidator(_null_or_at_least_zero, str(_AT_LEAST_ZERO)), Importance.LOW,
                  "With transaction.boundary=interval, how often tasks commit their producer transaction. "
                  "Unset: the worker's offset.flush.interval.ms. No effect with any other transaction.boundary.",
                  EXACTLY_ONCE_GROUP, 4, Width.SHORT, "Transaction boundary interval"),
    ]


EXACTLY_ONCE_KEYS = _exactly_once_keys()
_DEFAULTS: dict[str, Any] = {key.name: key.default for key in EXACTLY_ONCE_KEYS}

NO_PREFLIGHT = (
    "The connector does not implement the API required for preflight validation of exactly-once source "
    "support. Please consult the documentation for the connector to determine whether it supports exactly-once "
    "guarantees, and then consider reconfiguring the connector to use the value \"requested\" for this property "
    "(which will still permit the connector to be created, but without any guarantees that it will fail if the "
    "connector does not support exactly-once semantics).")
UNSUPPORTED = "The connector does not support exactly-once semantics with the provided configuration."
NO_BOUNDARIES = ("The connector does not support connector-defined transaction boundaries with the given "
                 "configuration. Please reconfigure it to use a different transaction boundary definition.")


def transactional_id(worker: Mapping[str, str] | Any, connector: str, task: int) -> str:
    """Connect's ``Worker.taskTransactionalId``: ``<group.id>-<connector>-<task>``."""
    group = str(worker.get("group.id", "") or "connect-engine").strip()
    return f"{group}-{connector}-{task}"


def worker_enabled(worker: Mapping[str, str]) -> bool:
    """``exactly.once.source.support`` is ``enabled``; checked against the stores it needs."""
    value = worker.get(WORKER_KEY, "disabled").strip().lower()
    if value not in WORKER_VALUES:
        message = f"Invalid value {value} for configuration {WORKER_KEY}: String must be one of: {', '.join(WORKER_VALUES)}"
        raise ConfigError(message, errors={WORKER_KEY: [message]})
    if value != "enabled":
        return False
    kafka_offsets = worker.get("group.id", "").strip() or worker.get("offset.storage.topic", "").strip()
    if not worker.get("bootstrap.servers", "").strip() or not kafka_offsets:
        message = (f"{WORKER_KEY}=enabled needs records and source offsets on Kafka: set bootstrap.servers and "
                   "group.id (a distributed worker) or offset.storage.topic")
        raise ConfigError(message, errors={WORKER_KEY: [message]})
    return True


@dataclass(frozen=True, slots=True)
class TransactionSettings:
    boundary: str
    interval_s: float

    @classmethod
    def parse(cls, config: Mapping[str, str], worker: Mapping[str, str]) -> TransactionSettings:
        boundary = config.get(BOUNDARY_KEY, _DEFAULTS[BOUNDARY_KEY]).strip().lower() or _DEFAULTS[BOUNDARY_KEY]
        interval = config.get(INTERVAL_KEY, "").strip() or worker.get("offset.flush.interval.ms", "60000")
        return cls(boundary, int(interval) / 1000)


def check_connector(cls: type[Connector], config: Mapping[str, str]) -> None:
    """The exactly-once checks of Connect's validation (``DistributedHerder``), per key.

    The keys' values were validated already (``engine.validation.source_config``).
    """
    if not issubclass(cls, SourceConnector):
        return
    errors: dict[str, list[str]] = {}
    support = config.get(SUPPORT_KEY, _DEFAULTS[SUPPORT_KEY]).strip().lower()
    boundary = config.get(BOUNDARY_KEY, _DEFAULTS[BOUNDARY_KEY]).strip().lower()
    if config.get(INTERVAL_KEY, "").strip() and boundary != "interval":
        errors[INTERVAL_KEY] = [f"{INTERVAL_KEY} may only be set when {BOUNDARY_KEY} is interval"]
    if not errors:
        instance = cls()
        if support == "required":
            declared = instance.exactly_once_support(dict(config))
            if declared is None:
                errors[SUPPORT_KEY] = [NO_PREFLIGHT]
            elif declared is not ExactlyOnceSupport.SUPPORTED:
                errors[SUPPORT_KEY] = [UNSUPPORTED]
        if boundary == "connector" and \
                instance.can_define_transaction_boundaries(dict(config)) is not ConnectorTransactionBoundaries.SUPPORTED:
            errors[BOUNDARY_KEY] = [NO_BOUNDARIES]
    if errors:
        count = sum(len(v) for v in errors.values())
        lines = "\n".join(m for ms in errors.values() for m in ms)
        raise ConfigError(
            f"Connector configuration is invalid and contains the following {count} error(s):\n{lines}\n"
            "You can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`",
            errors=errors)


async def fence_producers(worker: Mapping[str, str], producer_settings: Mapping[str, object], connector: str,
                          tasks: int) -> None:
    """Fence out the transactional producers of the connector's tasks ``0..tasks-1`` (Connect's
    ``Worker.fenceZombies`` with ``Admin.fenceProducers``): each transactional id's InitProducerId bumps
    its epoch, so a zombie instance of an earlier generation can no longer commit."""
    from aiokafka import AIOKafkaProducer

    settings = {k: v for k, v in producer_settings.items() if k != "enable_idempotence"}
    for task in range(tasks):
        txn_id = transactional_id(worker, connector, task)
        producer = AIOKafkaProducer(**{"bootstrap_servers": worker["bootstrap.servers"], **settings,
                                       "client_id": f"connect-engine-fencing-{txn_id}",
                                       "transactional_id": txn_id, "acks": "all"})
        try:
            await producer.start()
        finally:
            await producer.stop()
