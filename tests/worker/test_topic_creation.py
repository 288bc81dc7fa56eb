"""KIP-158 groups decide each created topic's replication factor, as Connect's TopicCreationGroup does:
a group without one takes the default group's; -1 is the broker's default; 0 or less than -1 is
refused with Connect's message. (On a 3-node broker: tests/integration/test_kafka_replication.py.)"""

from __future__ import annotations

import pytest

from engine.api.errors import ConfigException
from engine.worker.topic_creation import TopicCreation


def creation(**keys: str) -> TopicCreation:
    made = TopicCreation.from_config({f"topic.creation.{k.replace('__', '.')}": v for k, v in keys.items()}, {})
    assert made is not None
    return made


def test_a_group_takes_its_own_replication_factor_or_the_default_groups() -> None:
    made = creation(groups="wide,narrow", wide__include="wide-.*", wide__replication__factor="2",
                    narrow__include="narrow-.*", default__partitions="1", default__replication__factor="3")
    assert made.group_for("wide-a").replication_factor == 2
    assert made.group_for("narrow-a").replication_factor == 3
    assert made.group_for("other").replication_factor == 3


def test_without_a_default_replication_factor_the_broker_decides() -> None:
    assert creation(default__partitions="4").group_for("t").replication_factor == -1
    assert creation(default__replication__factor="-1").group_for("t").replication_factor == -1


@pytest.mark.parametrize("value", ["0", "-2"])
def test_a_replication_factor_below_one_is_refused(value: str) -> None:
    with pytest.raises(ConfigException) as refused:
        creation(default__replication__factor=value)
    assert str(refused.value) == (
        f"Invalid value {value} for configuration topic.creation.default.replication.factor: Replication factor "
        "must be positive and not larger than the number of brokers in the Kafka cluster, or -1 to use the "
        "broker's default")
