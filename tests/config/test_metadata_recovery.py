"""KIP-899 ``metadata.recovery.strategy``: ``none`` (aiokafka's own behaviour) is accepted wherever a
Kafka client key is; ``rebootstrap``, which aiokafka cannot do, is refused by name, never ignored."""

from __future__ import annotations

import pytest

from engine.config.worker import WorkerConfig
from engine.errors import ConfigError

REFUSED = (
    "Invalid value rebootstrap for configuration {key}: aiokafka cannot re-bootstrap (once it knows the "
    "cluster's brokers it never returns to bootstrap.servers): only none is supported"
)


@pytest.mark.parametrize(
    "key",
    [
        "metadata.recovery.strategy",
        "producer.metadata.recovery.strategy",
        "consumer.metadata.recovery.strategy",
        "admin.metadata.recovery.strategy",
    ],
)
def test_none_is_accepted_on_the_worker_in_any_case(key: str) -> None:
    clients = WorkerConfig.parse({key: "NONE"}).kafka
    assert "metadata_recovery_strategy" not in clients.own()  # nothing to pass: aiokafka never re-bootstraps


@pytest.mark.parametrize(
    "key",
    [
        "metadata.recovery.strategy",
        "producer.metadata.recovery.strategy",
        "consumer.metadata.recovery.strategy",
    ],
)
def test_rebootstrap_on_the_worker_stops_the_start_naming_the_key(key: str) -> None:
    with pytest.raises(ConfigError) as caught:
        WorkerConfig.parse({key: "rebootstrap"})
    assert REFUSED.format(key=key) in caught.value.errors[key]


def test_a_connector_override_is_checked_the_same_way() -> None:
    clients = WorkerConfig.parse({}).kafka
    assert clients.override_errors({"producer.override.metadata.recovery.strategy": "none"}, "producer") == {}
    key = "consumer.override.metadata.recovery.strategy"
    assert clients.override_errors({key: "rebootstrap"}, "consumer") == {key: [REFUSED.format(key=key)]}
    assert clients.override_errors({key: "sometimes"}, "consumer") == {
        key: [
            f"Invalid value sometimes for configuration {key}: String must be one of (case insensitive): none, "
            "rebootstrap"
        ]
    }


def test_the_rebootstrap_trigger_is_refused_as_unsupported() -> None:
    with pytest.raises(ConfigError, match=r"metadata\.recovery\.rebootstrap\.trigger\.ms.*not supported"):
        WorkerConfig.parse({"producer.metadata.recovery.rebootstrap.trigger.ms": "300000"})
