"""The framework keys only source connectors have (Connect's ``SourceConnectorConfig.configDef()``).

Validated with every source connector's config, at create and update as in
``PUT /connector-plugins/{p}/config/validate``, and listed by ``GET /connector-plugins/{p}/config``.
Like Connect, only ``topic.creation.groups`` itself is defined here: the per-group
``topic.creation.<group>.*`` keys are read when a task creates topics, not when a config is validated.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.api.config_def import (
    CaseInsensitiveValidString,
    CompositeValidator,
    ConfigDef,
    ConfigDefError,
    ConfigKey,
    ConfigType,
    Importance,
    LambdaValidator,
    NonEmptyString,
    NonNullValidator,
    Range,
    Width,
)

TOPIC_CREATION_GROUP = "Topic Creation"
EXACTLY_ONCE_GROUP = "Exactly Once Support"
OFFSETS_TOPIC_GROUP = "offsets.topic"


def unique_aliases(name: str, value: Any) -> None:
    """A LIST of aliases may not name one twice (``transforms``, ``predicates``, ``topic.creation.groups``)."""
    if isinstance(value, list) and len(value) > len(set(value)):
        raise ConfigDefError.invalid(name, value, "Duplicate alias provided.")


_AT_LEAST_ZERO = Range.at_least(0)


def _null_or_at_least_zero(name: str, value: Any) -> None:
    if value is not None:
        _AT_LEAST_ZERO(name, value)


def _source_keys() -> list[ConfigKey]:
    # Kafka keeps CaseInsensitiveValidString's values in a HashSet, so its messages list them in
    # that set's order: REQUIRED, REQUESTED and INTERVAL, POLL, CONNECTOR.
    return [
        ConfigKey("topic.creation.groups", ConfigType.LIST, "",
                  CompositeValidator.of(NonNullValidator(),
                                        LambdaValidator(unique_aliases, "unique topic creation groups")),
                  Importance.LOW, "Groups of configurations for topics created by source connectors.",
                  TOPIC_CREATION_GROUP, 1, Width.LONG, "Topic Creation Groups"),
        ConfigKey("exactly.once.support", ConfigType.STRING, "requested",
                  CaseInsensitiveValidString.in_("required", "requested"), Importance.MEDIUM,
                  "Permitted values are requested, required. With \"required\", creating or validating the "
                  "connector runs a preflight check that it can provide exactly-once semantics with this "
                  "configuration (its exactly_once_support() must return SUPPORTED), and fails when the worker "
                  "does not have exactly-once source support enabled. With \"requested\" no check is made.",
                  EXACTLY_ONCE_GROUP, 2, Width.SHORT, "Exactly once support"),
        ConfigKey("transaction.boundary", ConfigType.STRING, "poll",
                  CaseInsensitiveValidString.in_("interval", "poll", "connector"), Importance.MEDIUM,
                  "Permitted values are: poll, interval, connector. 'poll' starts and commits a producer "
                  "transaction for every batch of records a task's poll() returns; 'connector' lets the connector "
                  "define the boundaries (not every connector can: creating one that cannot fails); 'interval' "
                  "commits after transaction.boundary.interval.ms.",
                  EXACTLY_ONCE_GROUP, 3, Width.SHORT, "Transaction Boundary"),
        ConfigKey("transaction.boundary.interval.ms", ConfigType.LONG, None,
                  LambdaValidator(_null_or_at_least_zero, str(_AT_LEAST_ZERO)), Importance.LOW,
                  "With transaction.boundary=interval, how often tasks commit their producer transaction. "
                  "Unset: the worker's offset.flush.interval.ms. No effect with any other transaction.boundary.",
                  EXACTLY_ONCE_GROUP, 4, Width.SHORT, "Transaction boundary interval"),
        ConfigKey("offsets.storage.topic", ConfigType.STRING, None, NonEmptyString(), Importance.LOW,
                  "The name of a separate offsets topic for this connector (Connect's key, validated as Connect "
                  "does). This engine keeps every connector's offsets in the worker's offset store.",
                  OFFSETS_TOPIC_GROUP, 1, Width.LONG, "Offsets topic"),
    ]


SOURCE_KEYS = _source_keys()
SOURCE_ONLY_DEF = ConfigDef()
for _key in SOURCE_KEYS:
    SOURCE_ONLY_DEF.define_key(_key)


def source_key_errors(props: Mapping[str, str]) -> dict[str, list[str]]:
    """The errors Connect's validation finds in these keys, by key (nothing for a valid config)."""
    return {name: value.errors for name, value in SOURCE_ONLY_DEF.validate_all(props).items() if value.errors}
