"""Every transform and predicate of Kafka 3.7 (docs section 8) resolves by its Kafka class name and is
listed as a plugin, so connector configs written for Kafka work unchanged."""

from __future__ import annotations

import pytest

from engine.api.transforms import Predicate, Transformation
from engine.plugins.discovery import PluginType, process_registry
from engine.transforms.resolve import find_class

KEY_VALUE = [
    "Cast",
    "ExtractField",
    "Flatten",
    "HeaderFrom",
    "HoistField",
    "InsertField",
    "MaskField",
    "ReplaceField",
    "SetSchemaMetadata",
    "TimestampConverter",
]
SINGLE = ["DropHeaders", "Filter", "InsertHeader", "RegexRouter", "TimestampRouter", "ValueToKey"]
KAFKA_NAMES = [f"{n}${v}" for n in KEY_VALUE for v in ("Key", "Value")] + SINGLE
PREDICATES = ["HasHeaderKey", "RecordIsTombstone", "TopicNameMatches"]


def test_there_are_sixteen_transforms() -> None:
    assert len(KEY_VALUE) + len(SINGLE) == 16


@pytest.mark.parametrize("name", KAFKA_NAMES)
def test_each_transform_resolves_by_its_kafka_name(name: str) -> None:
    found = find_class(f"org.apache.kafka.connect.transforms.{name}", "transformation")
    assert found is not None
    assert issubclass(found, Transformation)
    assert find_class(name, "transformation") is found


@pytest.mark.parametrize("name", PREDICATES)
def test_each_predicate_resolves_by_its_kafka_name(name: str) -> None:
    found = find_class(f"org.apache.kafka.connect.transforms.predicates.{name}", "predicate")
    assert found is not None
    assert issubclass(found, Predicate)


def test_every_variant_is_listed_as_a_plugin() -> None:
    listed = {d.cls for d in process_registry().plugins([PluginType.TRANSFORMATION])}
    for name in KAFKA_NAMES:
        assert find_class(name, "transformation") in listed, name
    predicates = {d.cls for d in process_registry().plugins([PluginType.PREDICATE])}
    assert {find_class(n, "predicate") for n in PREDICATES} <= predicates
