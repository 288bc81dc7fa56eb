"""``ReplaceField``: keep, drop and rename fields of the key or value.

``exclude`` wins over ``include``; an empty ``include`` keeps every field not excluded.
``blacklist``/``whitelist`` are Kafka's deprecated names for them. A null key/value passes unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from engine.api.config_def import ConfigDef, ConfigType, Importance
from engine.api.errors import ConfigException
from engine.api.records import ConnectRecord
from engine.data.builder import SchemaBuilder
from engine.data.schema import Schema
from engine.data.struct import Struct
from engine.transforms.header_from import copy_schema_basics, require_map, require_struct
from engine.transforms.key_or_value import (
    REPLACE_NULL_DOC,
    REPLACE_NULL_WITH_DEFAULT,
    KeyOrValue,
    field_value,
    key_and_value_variants,
)

__all__ = ["ReplaceField", "ReplaceFieldKey", "ReplaceFieldValue"]

EXCLUDE, INCLUDE, RENAMES = "exclude", "include", "renames"
PURPOSE = "field replacement"


def parse_renames(mappings: list[str]) -> dict[str, str]:
    renames: dict[str, str] = {}
    for mapping in mappings:
        parts = mapping.split(":")
        if len(parts) != 2:
            raise ConfigException(f"Invalid value {mappings} for configuration {RENAMES}: "
                                  f"Invalid rename mapping: {mapping}")
        renames[parts[0]] = parts[1]
    return renames


class ReplaceField(KeyOrValue):
    """Filter or rename fields."""

    CONFIG_DEF = (ConfigDef()
                  .define(EXCLUDE, ConfigType.LIST, "", None, Importance.MEDIUM,
                          "Fields to exclude. This takes precedence over the fields to include.")
                  .define(INCLUDE, ConfigType.LIST, "", None, Importance.MEDIUM,
                          "Fields to include. If specified, only these fields will be used.")
                  .define(RENAMES, ConfigType.LIST, "", None, Importance.MEDIUM,
                          "Field rename mappings.")
                  .define("blacklist", ConfigType.LIST, None, None, Importance.LOW, "Deprecated. Use exclude.")
                  .define("whitelist", ConfigType.LIST, None, None, Importance.LOW, "Deprecated. Use include.")
                  .define(REPLACE_NULL_WITH_DEFAULT, ConfigType.BOOLEAN, True, None, Importance.MEDIUM,
                          REPLACE_NULL_DOC))
    Key: ClassVar[type[ReplaceField]]
    Value: ClassVar[type[ReplaceField]]

    def configure(self, configs: Mapping[str, Any]) -> None:
        parsed = self.CONFIG_DEF.parse(configs)
        self.exclude = set(parsed[EXCLUDE] or parsed["blacklist"] or [])
        self.include = set(parsed[INCLUDE] or parsed["whitelist"] or [])
        self.renames = parse_renames(parsed[RENAMES])
        self.replace_null_with_default: bool = parsed[REPLACE_NULL_WITH_DEFAULT]
        self._schemas: dict[Schema, Schema] = {}

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
            return self.new_record(record, None, {self.renamed(k): v for k, v in mapping.items() if self.keeps(k)})
        struct = require_struct(value, PURPOSE)
        schema = self._updated_schema(struct.schema)
        result = Struct(schema)
        for field in struct.schema.fields:
            if self.keeps(field.name):
                result.put(self.renamed(field.name), field_value(struct, field, self.replace_null_with_default))
        return self.new_record(record, schema, result)

    def _updated_schema(self, schema: Schema) -> Schema:
        cached = self._schemas.get(schema)
        if cached is None:
            builder = copy_schema_basics(schema, SchemaBuilder.struct())
            for field in schema.fields:
                if self.keeps(field.name):
                    builder.field(self.renamed(field.name), field.schema)
            cached = self._schemas[schema] = builder.build()
        return cached


ReplaceFieldKey, ReplaceFieldValue = key_and_value_variants(ReplaceField)
