"""The framework's own connector settings (Connect's ``ConnectorConfig``, ``SinkConnectorConfig`` and, from
``source_config``, ``SourceConnectorConfig``) and the ``ConfigInfos`` answer of
``PUT /connector-plugins/{p}/config/validate``.

Every connector accepts these keys whatever its own ``config()`` says; REST shows them next to
the connector's keys so UIs can render one form.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from functools import partial
from typing import Any

from engine.api._invoke import invoke
from engine.api.config_def import (
    NO_DEFAULT,
    ConfigDef,
    ConfigDefError,
    ConfigKey,
    ConfigType,
    ConfigValue,
    Importance,
    LambdaValidator,
    Password,
    Range,
    ValidString,
    Width,
)
from engine.api.connector import Config, Connector, SinkConnector, SourceConnector
from engine.api.errors import ConfigException
from engine.config.grouped_key import grouped_key
from engine.config.kafka_clients import NO_SETTINGS, OVERRIDE_PREFIXES, KafkaClients
from engine.config.masking import is_secret_key
from engine.converters.factory import converter_class
from engine.errors import ConfigError
from engine.herder.restart_policy import RESTART_KEYS, restart_key_errors
from engine.observability.request_stage import enter_stage
from engine.plugins.classes import qualified_name
from engine.plugins.discovery import PluginRegistry, PluginType, process_registry
from engine.plugins.loading import load_connector_class
from engine.plugins.versions import (
    PLUGIN_VERSION,
    InvalidVersionSpecification,
    requirement,
)
from engine.tolerance.config import DLQ_KEYS, DLQ_TOPIC, ERROR_KEYS
from engine.transforms.chain import (
    NEGATE_CONFIG,
    PREDICATE_CONFIG,
    PREDICATES_CONFIG,
    TRANSFORMS_CONFIG,
    TYPE_CONFIG,
    negate_without_predicate,
    unknown_predicate,
)
from engine.transforms.resolve import Kind, check_concrete, find_class
from engine.validation.connector import (
    VALIDATING,
    _validator_instance,
    client_override_errors,
    java_map,
    plugin_version_errors,
)
from engine.validation.source_config import SOURCE_KEYS, unique_aliases
from engine.worker.rate_limit import RATE_KEYS

COMMON_GROUP = "Common"
TRANSFORMS_GROUP = "Transforms"
PREDICATES_GROUP = "Predicates"

CONFIG_DEF_STAGE = "retrieving the configuration definition from the connector"
NULL_VALUE = "Null value can not be supplied as the configuration value."


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
# backoff, engine/herder/restart_policy.py); RATE_KEYS (records/bytes.per.second.max, engine/worker/rate_limit.py)
SOURCE_CONFIG_DEF = _config_def([*_connector_keys(), *SOURCE_KEYS, *DLQ_KEYS, *RESTART_KEYS, *RATE_KEYS])
SINK_CONFIG_DEF = _config_def([*_connector_keys(), *_sink_keys(), *RESTART_KEYS, *RATE_KEYS])


CONVERTER_KEYS = ("key.converter", "value.converter", "header.converter")


def framework_config_def(cls: type[Connector]) -> ConfigDef:
    """The framework keys for this kind of connector (a copy: callers may extend it)."""
    return ConfigDef(SINK_CONFIG_DEF if issubclass(cls, SinkConnector) else SOURCE_CONFIG_DEF)


def _sink_checks(props: Mapping[str, str | None], values: dict[str, ConfigValue]) -> None:
    """``SinkConnectorConfig.validate``: exactly one of topics / topics.regex, and the DLQ is not consumed."""
    topics, regex = props.get("topics") or "", props.get("topics.regex") or ""
    dlq = (props.get(DLQ_TOPIC) or "").strip()
    problems: list[tuple[str, str]] = []
    if topics.strip() and regex.strip():
        both = "topics and topics.regex are mutually exclusive options, but both are set."
        problems += [("topics", both), ("topics.regex", both)]
    if not topics.strip() and not regex.strip():
        neither = "Must configure one of topics or topics.regex"
        problems += [("topics", neither), ("topics.regex", neither)]
    if dlq and topics.strip():
        listed = [t.strip() for t in topics.split(",") if t.strip()]
        if dlq in listed:
            problems.append(
                (
                    "topics",
                    f"The DLQ topic '{dlq}' may not be included in the list of topics "
                    f"('topics=[{', '.join(listed)}]') consumed by the connector",
                )
            )
    if dlq and regex.strip():
        try:
            matches = re.fullmatch(regex, dlq) is not None
        except re.error:
            matches = False
        if matches:
            problems.append(
                (
                    "topics.regex",
                    f"The DLQ topic '{dlq}' may not be included in the regex matching "
                    f"the topics ('topics.regex={regex}') consumed by the connector",
                )
            )
    for key, message in problems:
        values.setdefault(key, ConfigValue(key, props.get(key))).add_error_message(message)


# ---- transforms.<a>.* / predicates.<p>.* (ConnectorConfig.enrich) --------------------------------

_KINDS: dict[Kind, tuple[str, str, PluginType]] = {
    "transformation": (TRANSFORMS_CONFIG, TRANSFORMS_GROUP, PluginType.TRANSFORMATION),
    "predicate": (PREDICATES_CONFIG, PREDICATES_GROUP, PluginType.PREDICATE),
}


def _unique_list(props: Mapping[str, str | None], name: str) -> list[str]:
    raw = props.get(name)
    if raw is None:
        return []
    parsed = ConfigDef.parse_type(name, raw, ConfigType.LIST)
    return list(dict.fromkeys(str(a) for a in parsed))


def _plugin_config_def(kind: Kind, type_key: str, cls: type) -> ConfigDef:
    """``getConfigDefFromConfigProvidingClass``: a fresh instance's ``config()``; ConfigException on failure."""
    check_concrete(cls, kind)
    try:
        own = cls().config()
    except Exception as exc:
        raise ConfigException(
            type_key,
            qualified_name(cls),
            f"Error getting config definition from "
            f"{'Transformation' if kind == 'transformation' else 'Predicate'}: {exc}",
        ) from exc
    if not isinstance(own, ConfigDef):
        raise ConfigException(f"{qualified_name(cls)}.config() must return a ConfigDef that is not null.")
    return own


def _alias_def(kind: Kind, cls: type, type_key: str) -> ConfigDef:
    """The keys embedded under the alias prefix: the implicit ``predicate``/``negate`` and the plugin's own."""
    child = ConfigDef()
    if kind == "transformation":
        child.define(
            PREDICATE_CONFIG,
            ConfigType.STRING,
            None,
            importance=Importance.MEDIUM,
            documentation="The alias of a predicate used to determine whether to apply this transformation.",
        )
        child.define(
            NEGATE_CONFIG,
            ConfigType.BOOLEAN,
            False,
            importance=Importance.MEDIUM,
            documentation="Whether the configured predicate should be negated.",
        )
    child.define(
        PLUGIN_VERSION,
        ConfigType.STRING,
        None,
        validator=VERSION_SPEC,
        importance=Importance.LOW,
        documentation=f"Version of the {kind}: a version or a version range (KIP-891).",
    )
    for name, key in _plugin_config_def(kind, type_key, cls).config_keys.items():
        if name in (PREDICATE_CONFIG, NEGATE_CONFIG) and kind == "transformation":
            continue  # the implicit keys mask the transformation's own, as in Connect
        child.define_key(key)
    return child


def enrich(
    base: ConfigDef, props: Mapping[str, str | None], registry: PluginRegistry | None = None
) -> tuple[ConfigDef, dict[str, list[str]]]:
    """``ConnectorConfig.enrich(..., requireFullConfig=false)``: per-alias keys added to ``base`` (a copy).

    Also returns the errors each ``<prefix>type`` key gets beyond the ConfigDef's own (class not
    found, not a concrete transformation/predicate, ``negate`` without ``predicate``), in Connect's order.
    """
    enriched = ConfigDef(base)
    type_errors: dict[str, list[str]] = {}
    plugins = registry if registry is not None else process_registry()
    for kind, (list_config, group_name, plugin_type) in _KINDS.items():

        def recommend(name: str, parsed: Mapping[str, Any], wanted: PluginType = plugin_type) -> list[Any]:
            return [desc.cls for desc in plugins.plugins([wanted])]

        for alias in _unique_list(props, list_config):
            prefix = f"{list_config}.{alias}."
            group = f"{group_name}: {alias}"
            type_key = prefix + TYPE_CONFIG
            enriched.define(
                type_key,
                ConfigType.CLASS,
                importance=Importance.HIGH,
                documentation=f"Class for the '{alias}' {kind}.",
                group=group,
                order_in_group=0,
                width=Width.LONG,
                display_name=f"{kind.capitalize()} type for {alias}",
                recommender=recommend,
            )
            errors = type_errors.setdefault(type_key, [])
            raw = props.get(type_key)
            cls = find_class(raw, kind) if raw is not None else None
            if raw is not None and cls is None:
                errors.append(
                    ConfigDefError.invalid(type_key, raw, f"Class {raw} could not be found.").message
                )
            if (
                kind == "transformation"
                and prefix + NEGATE_CONFIG in props
                and prefix + PREDICATE_CONFIG not in props
            ):
                errors.append(negate_without_predicate(prefix))
            if cls is None:
                continue
            try:
                child = _alias_def(kind, cls, type_key)
            except ConfigException as exc:
                errors.append(str(exc))
                continue
            enriched.embed(prefix, group, 1, child)
    return enriched, type_errors


def _converter_checks(props: Mapping[str, str], values: dict[str, ConfigValue]) -> None:
    """The converter keys are CLASS keys: Connect's parse loads the class, and one that does not exist
    is ``Invalid value X for configuration value.converter: Class X could not be found.``"""
    for key in CONVERTER_KEYS:
        raw = props.get(key)
        if raw is None or not raw.strip():
            continue
        try:
            converter_class(raw)
        except ConfigException:
            value = values.setdefault(key, ConfigValue(key, raw, type=ConfigType.CLASS))
            message = ConfigDefError.invalid(
                key, raw.strip(), f"Class {raw.strip()} could not be found."
            ).message
            if message not in value.errors:
                value.errors.append(message)


def _transform_checks(
    props: Mapping[str, str | None], values: dict[str, ConfigValue], type_errors: Mapping[str, list[str]]
) -> None:
    """Add ``enrich``'s type errors, show found classes by name, and check predicate aliases exist."""
    for type_key, errors in type_errors.items():
        value = values.setdefault(type_key, ConfigValue(type_key, props.get(type_key), type=ConfigType.CLASS))
        raw = props.get(type_key)
        kind: Kind = "transformation" if type_key.startswith(TRANSFORMS_CONFIG + ".") else "predicate"
        value.value = find_class(raw, kind) if raw is not None else None
        value.errors.extend(errors)
    predicates = set(_unique_list(props, PREDICATES_CONFIG))
    for alias in _unique_list(props, TRANSFORMS_CONFIG):
        prefix = f"{TRANSFORMS_CONFIG}.{alias}."
        chosen = props.get(prefix + PREDICATE_CONFIG)
        if chosen is not None and chosen.strip() not in predicates:
            key = prefix + PREDICATE_CONFIG
            values.setdefault(key, ConfigValue(key, chosen)).add_error_message(
                unknown_predicate(prefix, chosen)
            )


async def validate_config_infos(
    config: Mapping[str, str | None],
    *,
    plugins: PluginRegistry | None = None,
    clients: KafkaClients = NO_SETTINGS,
) -> dict[str, Any]:
    """Connect's ConfigInfos for ``config``: framework keys, then the connector's, with every error found.

    ``plugins`` (the REST app's registry) is asked first, then ``load_connector_class``. Raises
    ConfigError (400) without ``connector.class`` or when it names no connector.
    """
    class_name = config.get("connector.class")
    if not class_name:
        raise ConfigError(f"Connector config {java_map(config)} contains no connector type")
    desc = plugins.resolve(class_name) if plugins is not None else None
    if desc is not None and issubclass(desc.cls, SourceConnector | SinkConnector):
        cls: type[Connector] = desc.cls
    else:
        cls = load_connector_class(class_name)
    connector = _validator_instance(cls)
    props = {k: v for k, v in config.items() if v is not None}

    framework, type_errors = enrich(framework_config_def(cls), config, plugins)
    values = framework.validate_all(props)
    _converter_checks(props, values)
    _transform_checks(config, values, type_errors)
    for key, messages in plugin_version_errors(cls, props).items():  # KIP-891
        values.setdefault(key, ConfigValue(key, props.get(key))).errors.extend(messages)
    for key, messages in restart_key_errors(props).items():  # adds the cross-key check (max >= initial)
        value = values.setdefault(key, ConfigValue(key, props.get(key)))
        value.errors.extend(m for m in messages if m not in value.errors)
    if issubclass(cls, SinkConnector):
        _sink_checks(config, values)
    # every *.override.* key gets an entry, as Connect's policy validation lists each (secrets hidden)
    overrides = [k for k in props if k.startswith(tuple(OVERRIDE_PREFIXES.values()))]
    for key in overrides:
        secret = is_secret_key(key)
        values.setdefault(
            key,
            ConfigValue(
                key,
                Password(props[key]) if secret else props[key],
                type=ConfigType.PASSWORD if secret else None,
            ),
        )
    for key, messages in client_override_errors(config, clients).items():  # policy: the worker's
        values.setdefault(key, ConfigValue(key, props.get(key))).errors.extend(messages)
    for key in (k for k, v in config.items() if v is None):
        values.setdefault(key, ConfigValue(key)).add_error_message(NULL_VALUE)

    enter_stage(CONFIG_DEF_STAGE)
    own = await invoke(connector.config)
    if not isinstance(own, ConfigDef):
        raise ConfigError(f"{qualified_name(cls)}.config() must return a ConfigDef that is not null.")
    enter_stage(VALIDATING)
    result = await invoke(connector.validate, props)
    if not isinstance(result, Config):
        raise ConfigError(f"{qualified_name(cls)}.validate() must return a Config that is not null.")

    keys = framework.config_keys
    keys.update(own.config_keys)  # the connector's definition wins, in the framework key's place
    groups = list(dict.fromkeys([*framework.groups, *own.groups]))
    for checked in result.config_values:
        values[checked.name] = checked  # as Connect's map: the connector's value replaces the framework's
    return _config_infos(class_name, keys, values, groups)


def _config_infos(
    name: str, keys: Mapping[str, ConfigKey], values: Mapping[str, ConfigValue], groups: list[str]
) -> dict[str, Any]:
    """``AbstractHerder.generateResult``: undefined keys with values first, then every defined key."""
    configs: list[dict[str, Any]] = []
    errors = 0
    for value in values.values():
        if value.name not in keys:
            configs.append({"definition": None, "value": value.info()})
            errors += len(value.errors)
    for key_name, key in keys.items():
        found = values.get(key_name)
        if found is not None:
            errors += len(found.errors)
            if found.type is None:  # a connector's own ConfigValue: show it in its key's string form
                found = dataclasses.replace(found, type=key.type)
        configs.append({"definition": key.info(), "value": None if found is None else found.info()})
    return {"name": name, "error_count": errors, "groups": groups, "configs": configs}
