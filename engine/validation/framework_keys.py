"""The framework's own connector keys (Connect's ``ConnectorConfig``, ``SinkConnectorConfig`` and, from
``source_config``, ``SourceConnectorConfig``).

Every connector accepts these keys whatever its own ``config()`` says; REST shows them next to
the connector's keys so UIs can render one form, and the reference page is generated from them.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from engine.api.config_def import (
    NO_DEFAULT,
    ConfigDef,
    ConfigDefError,
    ConfigKey,
    ConfigType,
    Importance,
    LambdaValidator,
    Range,
    ValidList,
    ValidString,
    Width,
)
from engine.api.connector import Connector, SinkConnector
from engine.config.grouped_key import grouped_key
from engine.herder.restart_policy import RESTART_KEYS
from engine.plugins.versions import InvalidVersionSpecification, requirement
from engine.tolerance.config import DLQ_KEYS, ERROR_KEYS
from engine.validation.source_config import SOURCE_KEYS, unique_aliases
from engine.worker.offset_identity import OFFSET_IDENTITY_KEYS
from engine.worker.rate_limit import RATE_KEYS

COMMON_GROUP = "Common"
TRANSFORMS_GROUP = "Transforms"
PREDICATES_GROUP = "Predicates"


def _non_empty_without_control_chars(name: str, value: Any) -> None:
    if value is None:
        return  # a missing name is reported as a missing required configuration
    if value == "":
        raise ConfigDefError.invalid(name, value, "String may not be empty")
    illegal = [str(ord(ch)) for ch in value if ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F]
    if illegal:
        raise ConfigDefError.invalid(
            name,
            value,
            "String may not contain control sequences but had the following ASCII chars: "
            + ", ".join(illegal),
        )


def _version_spec(name: str, value: Any) -> None:
    """Connect's ``PluginVersionValidator``: a Maven version or range (KIP-891)."""
    try:
        requirement(value)
    except InvalidVersionSpecification as exc:
        raise ConfigDefError.invalid(name, value, str(exc)) from None


VERSION_SPEC = LambdaValidator(_version_spec, "a version or a Maven version range")


_common = partial(grouped_key, group=COMMON_GROUP)


def _connector_keys() -> list[ConfigKey]:
    name_check = LambdaValidator(
        _non_empty_without_control_chars, "non-empty string without ISO control characters"
    )
    aliases = LambdaValidator(unique_aliases)
    h, lo = Importance.HIGH, Importance.LOW
    c = ConfigType
    return [
        _common(
            1,
            "name",
            c.STRING,
            NO_DEFAULT,
            h,
            "Globally unique name to use for this connector.",
            "Connector name",
            validator=name_check,
            width=Width.MEDIUM,
        ),
        _common(
            2,
            "connector.class",
            c.STRING,
            NO_DEFAULT,
            h,
            "Name or alias of the class for this connector. Must be a subclass of SourceConnector or "
            "SinkConnector. Either the full dotted name or an alias such as 'RecordingSource' may be used.",
            "Connector class",
            width=Width.LONG,
        ),
        _common(
            2,
            "connector.plugin.version",
            c.STRING,
            None,
            h,
            "Version of the connector: a version or a version range (KIP-891); the installed version must "
            "be in it.",
            "Connector version",
            validator=VERSION_SPEC,
        ),
        _common(
            3,
            "tasks.max",
            c.INT,
            1,
            h,
            "Maximum number of tasks to use for this connector.",
            "Tasks max",
            validator=Range.at_least(1),
        ),
        _common(
            4,
            "tasks.max.enforce",
            c.BOOLEAN,
            True,
            lo,
            "(Deprecated) Whether to enforce that the tasks.max property is respected by the connector. "
            "When false, the connector may create more tasks than tasks.max.",
            "Enforce tasks max",
        ),
        _common(
            5,
            "key.converter",
            c.CLASS,
            None,
            lo,
            "Converter class used to convert between Kafka Connect format and the serialized form that is "
            "written to Kafka. Overrides the worker's key.converter.",
            "Key converter class",
        ),
        _common(
            5,
            "key.converter.plugin.version",
            c.STRING,
            None,
            lo,
            "Version of the key converter: a version or a version range (KIP-891).",
            "Key converter version",
            validator=VERSION_SPEC,
        ),
        _common(
            6,
            "value.converter",
            c.CLASS,
            None,
            lo,
            "Converter class used to convert between Kafka Connect format and the serialized form that is "
            "written to Kafka. Overrides the worker's value.converter.",
            "Value converter class",
        ),
        _common(
            5,
            "value.converter.plugin.version",
            c.STRING,
            None,
            lo,
            "Version of the value converter: a version or a version range (KIP-891).",
            "Value converter version",
            validator=VERSION_SPEC,
        ),
        _common(
            7,
            "header.converter",
            c.CLASS,
            None,
            lo,
            "HeaderConverter class used to convert between Kafka Connect format and the serialized form "
            "that is written to Kafka. Overrides the worker's header.converter.",
            "Header converter class",
        ),
        _common(
            5,
            "header.converter.plugin.version",
            c.STRING,
            None,
            lo,
            "Version of the header converter: a version or a version range (KIP-891).",
            "Header converter version",
            validator=VERSION_SPEC,
        ),
        _common(
            8,
            "transforms",
            c.LIST,
            "",
            lo,
            "Aliases for the transformations to be applied to records.",
            "Transforms",
            group=TRANSFORMS_GROUP,
            validator=aliases,
            width=Width.LONG,
        ),
        _common(
            9,
            "predicates",
            c.LIST,
            "",
            lo,
            "Aliases for the predicates used by transformations.",
            "Predicates",
            group=PREDICATES_GROUP,
            validator=aliases,
            width=Width.LONG,
        ),
        _common(
            10,
            "config.action.reload",
            c.STRING,
            "restart",
            lo,
            "The action to take when a change in the connector's configuration provider values is "
            "detected: 'restart' restarts the connector, 'none' does nothing.",
            "Reload Action",
            validator=ValidString.in_("none", "restart"),
            width=Width.MEDIUM,
        ),
        _common(
            11,
            "offsets.reset.on.delete",
            c.BOOLEAN,
            False,
            lo,
            "Drops the connector's source offsets when the connector is deleted, so that a connector "
            "re-created under the same name starts afresh.",
            "Reset offsets on delete",
        ),
        *ERROR_KEYS,  # errors.*: declared beside their reader, engine/tolerance/config.py
    ]


def _sink_keys() -> list[ConfigKey]:
    h = Importance.HIGH
    c = ConfigType
    return [
        _common(
            4,
            "topics",
            c.LIST,
            "",
            h,
            "List of topics to consume, separated by commas.",
            "Topics",
            validator=ValidList.any_non_duplicate_values(True, False),  # KIP-1161 (Kafka 4.2)
            width=Width.LONG,
        ),
        _common(
            4,
            "topics.regex",
            c.STRING,
            "",
            h,
            "Regular expression giving topics to consume. Only one of topics or topics.regex may be set.",
            "Topics regex",
            width=Width.LONG,
        ),
        *DLQ_KEYS,
    ]


def _config_def(keys: list[ConfigKey]) -> ConfigDef:
    config_def = ConfigDef()
    for key in keys:
        config_def.define_key(key)
    return config_def


# our additions, listed last: a source's errors.deadletterqueue.*; RESTART_KEYS (restart.policy and its
# backoff, engine/herder/restart_policy.py); RATE_KEYS (records/bytes.per.second.max, engine/worker/rate_limit.py);
# a sink's OFFSET_IDENTITY_KEYS (offsets.identity.mismatch, engine/worker/offset_identity.py)
SOURCE_CONFIG_DEF = _config_def([*_connector_keys(), *SOURCE_KEYS, *DLQ_KEYS, *RESTART_KEYS, *RATE_KEYS])
SINK_CONFIG_DEF = _config_def(
    [*_connector_keys(), *_sink_keys(), *RESTART_KEYS, *RATE_KEYS, *OFFSET_IDENTITY_KEYS]
)


def framework_config_def(cls: type[Connector]) -> ConfigDef:
    """The framework keys for this kind of connector (a copy: callers may extend it)."""
    return ConfigDef(SINK_CONFIG_DEF if issubclass(cls, SinkConnector) else SOURCE_CONFIG_DEF)
