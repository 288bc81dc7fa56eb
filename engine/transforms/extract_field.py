"""``ExtractField``: replace the key or value with one of its fields.

With a schema the key/value must be a Struct and the result takes the field's schema (a schema
without the field is an error even for a null value); without one it must be a map, and a
missing entry gives null. A null key/value stays null. ``field.syntax.version=V2`` (KIP-821)
reads a dotted path into nested structs/maps; ``replace.null.with.default=false`` (KIP-1040)
keeps a null field null instead of reading its schema default.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from engine.api.config_def import NO_DEFAULT, ConfigDef, ConfigType, Importance
from engine.api.errors import DataException
from engine.api.records import ConnectRecord
from engine.transforms.field_path import FieldSyntaxVersion, SingleFieldPath
from engine.transforms.key_or_value import KeyOrValue, key_and_value_variants
from engine.transforms.schema_util import (
    REPLACE_NULL_WITH_DEFAULT_CONFIG,
    define_replace_null_with_default,
    require_map_or_null,
    require_struct_or_null,
)

__all__ = ["ExtractField", "ExtractFieldKey", "ExtractFieldValue"]

FIELD = "field"
PURPOSE = "field extraction"


class ExtractField(KeyOrValue):
    """Extract the specified field from a Struct when schema present, or a Map in the case of
    schemaless data. Any null values are passed through unmodified."""

    CONFIG_DEF = FieldSyntaxVersion.append_config_to(
        define_replace_null_with_default(
            ConfigDef().define(
                FIELD, ConfigType.STRING, NO_DEFAULT, None, Importance.MEDIUM, "Field name to extract."
            )
        )
    )
    Key: ClassVar[type[ExtractField]]
    Value: ClassVar[type[ExtractField]]

    def configure(self, configs: Mapping[str, Any]) -> None:
        parsed = self.CONFIG_DEF.parse(configs)
        self.field_name: str = parsed[FIELD]
        self.field_path = SingleFieldPath(self.field_name, FieldSyntaxVersion.from_config(parsed))
        self.replace_null_with_default: bool = parsed[REPLACE_NULL_WITH_DEFAULT_CONFIG]

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        schema, value = self.operating_schema(record), self.operating_value(record)
        if schema is None:
            mapping = require_map_or_null(value, PURPOSE)
            return self.new_record(record, None, self.field_path.value_from_map(mapping))
        struct = require_struct_or_null(value, PURPOSE)
        field = self.field_path.field_from(schema)
        if field is None:
            raise DataException(f"Unknown field: {self.field_name}")
        return self.new_record(
            record, field.schema, self.field_path.value_from_struct(struct, self.replace_null_with_default)
        )


ExtractFieldKey, ExtractFieldValue = key_and_value_variants(ExtractField)
