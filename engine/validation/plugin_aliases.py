"""The keys under ``transforms.<alias>.`` and ``predicates.<alias>.`` (Connect's ``ConnectorConfig.enrich``).

They exist only once the aliases and their classes are known, so validation adds them to the framework's
keys per config, each group named after its alias.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.api.config_def import (
    ConfigDef,
    ConfigDefError,
    ConfigType,
    Importance,
    Width,
)
from engine.api.errors import ConfigException
from engine.plugins.classes import qualified_name
from engine.plugins.discovery import PluginRegistry, PluginType, process_registry
from engine.plugins.versions import PLUGIN_VERSION
from engine.transforms.chain import (
    NEGATE_CONFIG,
    PREDICATE_CONFIG,
    PREDICATES_CONFIG,
    TRANSFORMS_CONFIG,
    TYPE_CONFIG,
    negate_without_predicate,
)
from engine.transforms.resolve import Kind, check_concrete, find_class
from engine.validation.framework_keys import PREDICATES_GROUP, TRANSFORMS_GROUP, VERSION_SPEC

_KINDS: dict[Kind, tuple[str, str, PluginType]] = {
    "transformation": (TRANSFORMS_CONFIG, TRANSFORMS_GROUP, PluginType.TRANSFORMATION),
    "predicate": (PREDICATES_CONFIG, PREDICATES_GROUP, PluginType.PREDICATE),
}


def listed_aliases(props: Mapping[str, str | None], name: str) -> list[str]:
    """The aliases listed in ``name`` (``transforms`` or ``predicates``), each once, in order."""
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

        for alias in listed_aliases(props, list_config):
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
