"""Client keys Kafka 4.2-4.4 added, accepted where a Kafka client key is (they were refused as unknown):
``bootstrap.resolve.timeout.ms`` forced to 0 with Connect's warning, ``metadata.cluster.check.enable``,
``partitioner.rack.aware`` (only false: aiokafka's partitioner knows no racks),
``buffer.memory.allocation.strategy`` and the brokers' ``sasl.oauthbearer.allow.unverified.*``."""

from __future__ import annotations

import pytest
from structlog.testing import capture_logs

from engine.config.worker import WorkerConfig
from engine.errors import ConfigError

ACCEPTED = {
    "bootstrap.resolve.timeout.ms": "0",
    "admin.bootstrap.resolve.timeout.ms": "0",
    "metadata.cluster.check.enable": "true",
    "consumer.metadata.cluster.check.enable": "false",
    "producer.partitioner.rack.aware": "false",
    "producer.buffer.memory.allocation.strategy": "incremental",
    "sasl.oauthbearer.allow.unverified.audience": "true",
    "producer.sasl.oauthbearer.allow.unverified.issuer": "false",
}


@pytest.mark.parametrize(("key", "value"), ACCEPTED.items())
def test_the_new_keys_are_accepted_on_the_worker(key: str, value: str) -> None:
    WorkerConfig.parse({key: value})


def test_and_as_connector_overrides() -> None:
    clients = WorkerConfig.parse({}).kafka
    overrides = {
        "producer.override.partitioner.rack.aware": "false",
        "producer.override.buffer.memory.allocation.strategy": "full",
        "consumer.override.metadata.cluster.check.enable": "true",
    }
    assert clients.override_errors(overrides, "producer") == {}


def test_bootstrap_resolve_timeout_is_forced_to_0_with_connects_warning() -> None:
    with capture_logs() as logs:
        WorkerConfig.parse({"producer.bootstrap.resolve.timeout.ms": "5000"})
    assert {
        "component": "kafka-clients",
        "event": "kafka_clients.setting_ignored",
        "log_level": "warning",
        "key": "bootstrap.resolve.timeout.ms",
        "reason": "The value '5000' for the 'bootstrap.resolve.timeout.ms' property will be ignored as it cannot "
        "be overridden in Kafka Connect, which does not support asynchronous bootstrap resolution. The value "
        "'0' will be used instead.",
    } in logs


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        (
            "producer.partitioner.rack.aware",
            "true",
            "aiokafka's partitioner is not rack-aware: only false is supported",
        ),
        ("producer.buffer.memory.allocation.strategy", "all", "String must be one of: full, incremental"),
        ("metadata.cluster.check.enable", "yes", "Expected value to be either true or false"),
        ("consumer.bootstrap.resolve.timeout.ms", "soon", "Not a number of type INT"),
    ],
)
def test_values_they_cannot_take_are_refused_by_name(key: str, value: str, message: str) -> None:
    with pytest.raises(ConfigError) as refused:
        WorkerConfig.parse({key: value})
    assert refused.value.errors[key] == [f"Invalid value {value} for configuration {key}: {message}"]
