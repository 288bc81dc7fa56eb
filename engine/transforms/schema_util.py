"""Helpers the field transforms share: Kafka's ``Requirements`` and ``SchemaUtil`` and a few
Java-compatible config checks (their schema cache is ``engine.data.cache.LRUCache``).

Kept here rather than borrowed from another transform so each field transform depends only on
the data API and this module.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.api.config_def import ConfigDef, ConfigDefError, ConfigType, Importance
from engine.api.errors import DataException
from engine.api.records import ConnectRecord, SinkRecord
from engine.data.builder import SchemaBuilder
from engine.data.schema import Field, Schema, Type
from engine.data.values import Struct

__all__ = [
    "REPLACE_NULL_WITH_DEFAULT_CONFIG",
    "NonEmptyListValidator",
    "copy_schema_basics",
    "define_replace_null_with_default",
    "field_value",
    "java_split",
    "require_map",
    "require_map_or_null",
    "require_sink_record",
    "require_struct",
    "require_struct_or_null",
    "translate_deprecated",
    "type_name",
]


REPLACE_NULL_WITH_DEFAULT_CONFIG = "replace.null.with.default"
REPLACE_NULL_WITH_DEFAULT_DOC = (
    "Whether to replace fields that have a default value and that are null to the "
    "default value. When set to true, the default value is used, otherwise null is used."
)


def define_replace_null_with_default(config_def: ConfigDef) -> ConfigDef:
    """KIP-1040's ``replace.null.with.default`` (BOOLEAN, default true, MEDIUM), as every SMT defines it."""
    return config_def.define(
        REPLACE_NULL_WITH_DEFAULT_CONFIG,
        ConfigType.BOOLEAN,
        True,
        None,
        Importance.MEDIUM,
        REPLACE_NULL_WITH_DEFAULT_DOC,
    )


def field_value(struct: Struct, field: str | Field, replace_null_with_default: bool) -> Any:
    """A struct field's value: its schema default when null (``Struct.get``), or the null kept
    (``getWithoutDefault``) when ``replace.null.with.default`` is off."""
    return struct.get(field) if replace_null_with_default else struct.get_without_default(field)


def type_name(value: Any) -> str:
    """Kafka's ``nullSafeClassName``: ``null`` for None, else the value's class name."""
    if value is None:
        return "null"
    cls = type(value)
    return cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"


def require_struct(value: Any, purpose: str) -> Struct:
    if not isinstance(value, Struct):
        raise DataException(f"Only Struct objects supported for [{purpose}], found: {type_name(value)}")
    return value


def require_struct_or_null(value: Any, purpose: str) -> Struct | None:
    return None if value is None else require_struct(value, purpose)


def require_map(value: Any, purpose: str) -> Mapping[Any, Any]:
    if not isinstance(value, Mapping):
        raise DataException(
            f"Only Map objects supported in absence of schema for [{purpose}], found: {type_name(value)}"
        )
    return value


def require_map_or_null(value: Any, purpose: str) -> Mapping[Any, Any] | None:
    return None if value is None else require_map(value, purpose)


def require_sink_record(record: ConnectRecord, purpose: str) -> SinkRecord:
    if not isinstance(record, SinkRecord):
        raise DataException(f"Only SinkRecord supported for [{purpose}], found: {type_name(record)}")
    return record


def copy_schema_basics(source: Schema, builder: SchemaBuilder | None = None) -> SchemaBuilder:
    """``SchemaUtil.copySchemaBasics``: name, version, doc and parameters onto ``builder`` (by default
    a fresh builder of the source's type). Optionality and default are not copied."""
    if builder is None:
        if source.type is Type.ARRAY:
            builder = SchemaBuilder.array(source.value_schema)
        elif source.type is Type.MAP:
            builder = SchemaBuilder.map(source.key_schema, source.value_schema)
        else:
            builder = SchemaBuilder(source.type)
    if source.name is not None:
        builder.name(source.name)
    if source.version is not None:
        builder.version(source.version)
    if source.doc is not None:
        builder.doc(source.doc)
    if source.parameters is not None:
        builder.parameters(source.parameters)
    return builder


class NonEmptyListValidator:
    """Kafka's ``NonEmptyListValidator``: a list config that must name at least one item."""

    def __call__(self, name: str, value: Any) -> None:
        if not value:
            raise ConfigDefError.invalid(name, value, "Empty list")

    def __str__(self) -> str:
        return "non-empty list"


def java_split(text: str, sep: str) -> list[str]:
    """``String.split`` on a literal separator: trailing empty strings are dropped."""
    parts = text.split(sep)
    while len(parts) > 1 and parts[-1] == "":
        parts.pop()
    if parts == [""] and text:
        return []
    return parts


def translate_deprecated(configs: Mapping[str, Any], *groups: tuple[str, str]) -> dict[str, Any]:
    """``ConfigUtils.translateDeprecatedConfigs``: each ``(name, deprecated alias)`` pair; the alias
    is used only when the new name is absent, and is removed either way."""
    result = dict(configs)
    for name, alias in groups:
        if alias in result:
            value = result.pop(alias)
            if name not in result:
                result[name] = value
    return result
