"""The keys of a connector config that nothing reads: warned about on create and update, as Kafka's
``AbstractConfig.logUnused`` does ("The configuration 'x' was supplied but isn't a known config."),
with the nearest known key when one is close (``tasks.maxx``).

Known: the framework's keys (with each transform's and predicate's under its alias), the connector's
own ``ConfigDef``, and the families read elsewhere: converter sub-configs, client overrides,
``topic.creation.*``. A connector that declares no keys may read any: then only a key close to a
framework key is named (a typo), and a transform or predicate that declares none keeps its alias's keys.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping

from engine.api.config_def import ConfigDef
from engine.api.connector import Connector
from engine.config.kafka_clients import OVERRIDE_PREFIXES
from engine.plugins.versions import PLUGIN_VERSION
from engine.transforms.chain import (
    NEGATE_CONFIG,
    PREDICATE_CONFIG,
    PREDICATES_CONFIG,
    TRANSFORMS_CONFIG,
    TYPE_CONFIG,
)
from engine.validation.framework_keys import framework_config_def
from engine.validation.plugin_aliases import enrich, listed_aliases

__all__ = ["unknown_connector_keys", "unknown_key_message"]

_FAMILIES = (
    "key.converter.",
    "value.converter.",
    "header.converter.",
    "topic.creation.",
    *OVERRIDE_PREFIXES.values(),
)
_IMPLICIT = {TYPE_CONFIG, PREDICATE_CONFIG, NEGATE_CONFIG, PLUGIN_VERSION}
_CLOSE = 0.75  # a typo (``fiel``, ``tasks.maxx``), not a different key


def unknown_key_message(key: str, near: str | None) -> str:
    """Kafka's ``logUnused`` words, and the nearest known key when there is one."""
    return f"The configuration '{key}' was supplied but isn't a known config." + (
        f" Did you mean '{near}'?" if near else ""
    )


def unknown_connector_keys(
    cls: type[Connector], props: Mapping[str, str | None], own: ConfigDef | None
) -> list[tuple[str, str | None]]:
    """Each key of ``props`` that no reader takes, with the nearest known key (None: nothing close).

    ``own``: the connector's ``ConfigDef`` (None when it could not be had: only typos are named)."""
    framework, _ = enrich(framework_config_def(cls), props)
    known = set(framework.config_keys) | (set(own.config_keys) if own is not None else set())
    families = list(_FAMILIES)
    for list_config in (TRANSFORMS_CONFIG, PREDICATES_CONFIG):
        for alias in listed_aliases(props, list_config):
            prefix = f"{list_config}.{alias}."
            declared = {k.removeprefix(prefix) for k in framework.config_keys if k.startswith(prefix)}
            if not declared - _IMPLICIT:
                families.append(prefix)  # its class declares no keys (or was not found): it may read any
    declares = own is not None and bool(own.config_keys)
    names = sorted(known)
    unknown: list[tuple[str, str | None]] = []
    for key in props:
        if key in known or key.startswith(tuple(families)):
            continue
        close = difflib.get_close_matches(key, names, n=1, cutoff=_CLOSE)
        near = close[0] if close else None
        if declares or near is not None:
            unknown.append((key, near))
    return unknown
