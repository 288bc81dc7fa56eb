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
    CompositeValidator,
    ConfigDef,
    ConfigDefError,
    ConfigKey,
    ConfigType,
    Importance,
    LambdaValidator,
    NonEmptyString,
    NonNullValidator,
    Width,
)
from engine.worker.exactly_once import EXACTLY_ONCE_KEYS

TOPIC_CREATION_GROUP = "Topic Creation"
OFFSETS_TOPIC_GROUP = "offsets.topic"


def unique_aliases(name: str, value: Any) -> None:
    """A LIST of aliases may not name one twice (``transforms``, ``predicates``, ``topic.creation.groups``)."""
    if isinstance(value, list) and len(value) > len(set(value)):
        raise ConfigDefError.invalid(name, value, "Duplicate alias provided.")


def _source_keys() -> list[ConfigKey]:
    return [
        ConfigKey("topic.creation.groups", ConfigType.LIST, "",
                  CompositeValidator.of(NonNullValidator(),
                                        LambdaValidator(unique_aliases, "unique topic creation groups")),
                  Importance.LOW, "Groups of configurations for topics created by source connectors.",
                  TOPIC_CREATION_GROUP, 1, Width.LONG, "Topic Creation Groups"),
        *EXACTLY_ONCE_KEYS,  # declared beside their reader, engine/worker/exactly_once.py
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
