"""The ``ConfigInfos`` answer of ``PUT /connector-plugins/{p}/config/validate``: the framework's keys
(``framework_keys``, enriched per alias by ``plugin_aliases``), then the connector's, with every error found.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any

from engine.api._invoke import invoke
from engine.api.config_def import (
    ConfigDef,
    ConfigDefError,
    ConfigKey,
    ConfigType,
    ConfigValue,
    Password,
)
from engine.api.connector import Config, Connector, SinkConnector, SourceConnector
from engine.api.errors import ConfigException
from engine.config.kafka_clients import NO_SETTINGS, OVERRIDE_PREFIXES, KafkaClients
from engine.config.masking import is_secret_key
from engine.converters.factory import converter_class
from engine.errors import ConfigError
from engine.herder.restart_policy import restart_key_errors
from engine.observability.request_stage import enter_stage
from engine.plugins.classes import qualified_name
from engine.plugins.discovery import PluginRegistry
from engine.plugins.loading import load_connector_class
from engine.tolerance.config import DLQ_TOPIC
from engine.transforms.chain import PREDICATE_CONFIG, PREDICATES_CONFIG, TRANSFORMS_CONFIG, unknown_predicate
from engine.transforms.resolve import Kind, find_class
from engine.validation.connector import (
    VALIDATING,
    client_override_errors,
    plugin_version_errors,
    validator_instance,
)
from engine.validation.framework_keys import framework_config_def
from engine.validation.plugin_aliases import enrich, listed_aliases

CONFIG_DEF_STAGE = "retrieving the configuration definition from the connector"
NULL_VALUE = "Null value can not be supplied as the configuration value."

CONVERTER_KEYS = ("key.converter", "value.converter", "header.converter")


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
    predicates = set(listed_aliases(props, PREDICATES_CONFIG))
    for alias in listed_aliases(props, TRANSFORMS_CONFIG):
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
        raise ConfigError("Connector config contains no connector type")  # Kafka 4.4 no longer prints the map
    desc = plugins.resolve(class_name) if plugins is not None else None
    if desc is not None and issubclass(desc.cls, SourceConnector | SinkConnector):
        cls: type[Connector] = desc.cls
    else:
        cls = load_connector_class(class_name)
    connector = validator_instance(cls)
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
