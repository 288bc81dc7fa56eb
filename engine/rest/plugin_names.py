"""The built-in converters, transformations and predicates under Connect's and Confluent's class names
(``org.apache.kafka.connect.json.JsonConverter``, ``io.confluent.connect.avro.AvroConverter``,
``org.apache.kafka.connect.transforms.Cast$Value``), as ``GET /connector-plugins?connectorsOnly=false``
lists them beside our own names: UIs build their converter and SMT pickers from Connect's names, and
configs use them (each resolves to the same class).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from engine.converters.base import Converter, HeaderConverter
from engine.converters.factory import BUILTIN_CONVERTERS
from engine.plugins.classes import import_class
from engine.plugins.discovery import PluginRegistry, PluginType
from engine.transforms.resolve import (
    BUILTIN_PREDICATES,
    BUILTIN_TRANSFORMS,
    KAFKA_PREDICATES_PACKAGE,
    KAFKA_TRANSFORMS_PACKAGE,
)

__all__ = ["foreign_class", "plugin_infos"]


def _converter_types(cls: type) -> list[PluginType]:
    """What a converter class can serve as (Connect's ``StringConverter`` is listed as both)."""
    try:
        instance = cls()
    except Exception:  # not listed under a type it cannot be made for
        return []
    return [
        kind
        for kind, protocol in (
            (PluginType.CONVERTER, Converter),
            (PluginType.HEADER_CONVERTER, HeaderConverter),
        )
        if isinstance(instance, protocol)
    ]


def _foreign_names() -> Iterator[tuple[str, type, list[PluginType]]]:
    """(Connect's or Confluent's class name, our class, its types) for each built-in plugin that has one."""
    for name, cls in BUILTIN_CONVERTERS.items():
        if "." in name and ":" not in name and not name.startswith("engine."):
            yield name, cls, _converter_types(cls)
    tables = (
        (BUILTIN_TRANSFORMS, KAFKA_TRANSFORMS_PACKAGE, PluginType.TRANSFORMATION),
        (BUILTIN_PREDICATES, KAFKA_PREDICATES_PACKAGE, PluginType.PREDICATE),
    )
    for table, package, kind in tables:
        for short, path in table.items():
            found = import_class(path)
            if found is not None:
                yield package + short, found, [kind]


def foreign_class(name: str) -> type | None:
    """The built-in class Connect's or Confluent's class ``name`` stands for, if any."""
    return next((cls for foreign, cls, _ in _foreign_names() if foreign == name), None)


def plugin_infos(registry: PluginRegistry, *, connectors_only: bool) -> list[dict[str, Any]]:
    """Connect's ``PluginInfo`` list: the registry's, and (every type) each built-in plugin the registry
    holds also under its foreign name, once per type it serves, sorted as Connect sorts (by type, then
    class name)."""
    infos: list[dict[str, Any]] = list(registry.infos(connectors_only=connectors_only))
    if connectors_only:
        return infos
    held = {desc.cls: desc for desc in registry.plugins()}
    listed = {(info["class"], info["type"]) for info in infos}
    for foreign, cls, kinds in _foreign_names():
        desc = held.get(cls)
        if desc is None:
            continue  # not installed in this worker (a registry without the built-ins)
        for kind in kinds:
            if (foreign, kind.value) not in listed:
                listed.add((foreign, kind.value))
                infos.append({**desc.info(), "class": foreign, "type": kind.value})
    order = [t.value for t in PluginType]
    return sorted(infos, key=lambda info: (order.index(info["type"]), info["class"]))
