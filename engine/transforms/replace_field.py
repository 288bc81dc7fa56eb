"""``ReplaceField``: keep, drop and rename top-level fields of the key or value.

``exclude`` wins over ``include``; an empty ``include`` keeps every field not excluded. Renames
apply after filtering. ``blacklist``/``whitelist`` are Kafka's deprecated names for
``exclude``/``include`` and are used only when the new name is not set. A null key/value passes
unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from engine.api.config_def import (
    ConfigDef,
    ConfigDefError,
    ConfigType,
    Importance,
    LambdaValidator,
    ValidList,
)
from engine.api.records import ConnectRecord
from engine.data.builder import SchemaBuilder
from engine.data.cache import LRUCache
from engine.data.schema import Schema
from engine.data.values import Struct
from engine.transforms.key_or_value import KeyOrValue, key_and_value_variants
from engine.transforms.schema_util import (
    REPLACE_NULL_WITH_DEFAULT_CONFIG,
    copy_schema_basics,
    define_replace_null_with_default,
    field_value,
    java_split,
    require_map,
    require_struct,
    translate_deprecated,
)

__all__ = ["ReplaceField", "ReplaceFieldKey", "ReplaceFieldValue", "parse_renames"]

EXCLUDE, INCLUDE, RENAMES = "exclude", "include", "renames"
EXCLUDE_ALIAS, INCLUDE_ALIAS = "blacklist", "whitelist"
PURPOSE = "field replacement"


def parse_renames(mappings: list[str]) -> dict[str, str]:
    """``old:new`` pairs -> {old: new}."""
    renames: dict[str, str] = {}
    for mapping in mappings:
        parts = java_split(mapping, ":")
        if len(parts) != 2:
            raise ConfigDefError.invalid(RENAMES, mappings, f"Invalid rename mapping: {mapping}")
        renames[parts[0]] = parts[1]
    return renames


def _validate_renames(name: str, value: Any) -> None:
    parse_renames(value or [])


class ReplaceField(KeyOrValue):
    """Filter or rename fields."""

    CONFIG_DEF = define_replace_null_with_default(
        ConfigDef()
        .define(
            EXCLUDE,
            ConfigType.LIST,
            [],
            ValidList.any_non_duplicate_values(True, False),  # KIP-1161 (4.2)
            Importance.MEDIUM,
            "Fields to exclude. This takes precedence over the fields to include.",
        )
        .define(
            EXCLUDE_ALIAS, ConfigType.LIST, None, None, Importance.LOW, f"Deprecated. Use {EXCLUDE} instead."
        )
        .define(
            INCLUDE,
            ConfigType.LIST,
            [],
            ValidList.any_non_duplicate_values(True, False),  # KIP-1161 (4.2)
            Importance.MEDIUM,
            "Fields to include. If specified, only these fields will be used.",
        )
        .define(
            INCLUDE_ALIAS, ConfigType.LIST, None, None, Importance.LOW, f"Deprecated. Use {INCLUDE} instead."
        )
        .define(
            RENAMES,
            ConfigType.LIST,
            [],
            LambdaValidator(
                _validate_renames, "list of colon-delimited pairs, e.g. <code>foo:bar,abc:xyz</code>"
            ),
            Importance.MEDIUM,
            "Field rename mappings.",
        )
    )
    Key: ClassVar[type[ReplaceField]]
    Value: ClassVar[type[ReplaceField]]

    def configure(self, configs: Mapping[str, Any]) -> None:
        parsed = self.CONFIG_DEF.parse(
            translate_deprecated(configs, (INCLUDE, INCLUDE_ALIAS), (EXCLUDE, EXCLUDE_ALIAS))
        )
        self.exclude: frozenset[str] = frozenset(parsed[EXCLUDE] or ())
        self.include: frozenset[str] = frozenset(parsed[INCLUDE] or ())
        self.renames = parse_renames(parsed[RENAMES] or [])
        self.replace_null_with_default: bool = parsed[REPLACE_NULL_WITH_DEFAULT_CONFIG]
        self.reverse_renames = {new: old for old, new in self.renames.items()}
        self._schemas: LRUCache[Schema, Schema] = LRUCache(16)

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    def keeps(self, name: str) -> bool:
        return name not in self.exclude and (not self.include or name in self.include)

    def renamed(self, name: str) -> str:
        return self.renames.get(name, name)

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        value = self.operating_value(record)
        if value is None:
            return record
        if self.operating_schema(record) is None:
            mapping = require_map(value, PURPOSE)
            return self.new_record(
                record, None, {self.renamed(k): v for k, v in mapping.items() if self.keeps(k)}
            )
        struct = require_struct(value, PURPOSE)
        schema = self._schemas.get(struct.schema)
        if schema is None:
            schema = self._updated_schema(struct.schema)
            self._schemas.put(struct.schema, schema)
        result = Struct(schema)
        for field in schema.fields:
            result.put(
                field.name,
                field_value(
                    struct, self.reverse_renames.get(field.name, field.name), self.replace_null_with_default
                ),
            )
        return self.new_record(record, schema, result)

    def _updated_schema(self, schema: Schema) -> Schema:
        builder = copy_schema_basics(schema, SchemaBuilder.struct())
        for field in schema.fields:
            if self.keeps(field.name):
                builder.field(self.renamed(field.name), field.schema)
        return builder.build()

    def close(self) -> None:
        self._schemas.clear()


ReplaceFieldKey, ReplaceFieldValue = key_and_value_variants(ReplaceField)
