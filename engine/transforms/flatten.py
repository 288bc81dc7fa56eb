"""``Flatten``: nested structs (with a schema) or dicts (without) become one level, field names joined
by ``delimiter``. Arrays are left alone; with a schema, maps are left alone too, as in Kafka. A
nested field is optional if any struct above it is."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from engine.api.config_def import ConfigDef, ConfigType, Importance
from engine.api.errors import DataException
from engine.api.records import ConnectRecord
from engine.data.builder import SchemaBuilder
from engine.data.schema import Schema, Type
from engine.data.struct import Struct
from engine.transforms.header_from import copy_schema_basics, require_map, require_struct, type_name
from engine.transforms.key_or_value import (
    REPLACE_NULL_DOC,
    REPLACE_NULL_WITH_DEFAULT,
    KeyOrValue,
    field_value,
    key_and_value_variants,
)

__all__ = ["Flatten", "FlattenKey", "FlattenValue"]

DELIMITER = "delimiter"
PURPOSE = "flattening"
_LEAVES = (bool, int, float, str, bytes, bytearray, list, tuple)


def _leaf_schema(schema: Schema, optional: bool) -> Schema:
    """The field's schema, made optional when a parent struct is (``Flatten.convertFieldSchema``)."""
    if schema.optional or not optional:
        return schema
    return Schema(schema.type, optional=True, default_value=schema.default_value, name=schema.name,
                  version=schema.version, doc=schema.doc, parameters=schema.parameters,
                  fields=schema.fields if schema.type is Type.STRUCT else None,
                  key_schema=schema.key_schema if schema.type is Type.MAP else None,
                  value_schema=schema.value_schema if schema.type in (Type.MAP, Type.ARRAY) else None)


class Flatten(KeyOrValue):
    """Flatten a nested data structure, generating names for each field by concatenating the field names
    at each level with a configurable delimiter character."""

    CONFIG_DEF = (ConfigDef()
                  .define(DELIMITER, ConfigType.STRING, ".", None, Importance.MEDIUM,
                          "Delimiter to insert between field names from the input record when generating field "
                          "names for the output record")
                  .define(REPLACE_NULL_WITH_DEFAULT, ConfigType.BOOLEAN, True, None, Importance.MEDIUM,
                          REPLACE_NULL_DOC))
    Key: ClassVar[type[Flatten]]
    Value: ClassVar[type[Flatten]]

    def configure(self, configs: Mapping[str, Any]) -> None:
        parsed = self.CONFIG_DEF.parse(configs)
        self.delimiter: str = parsed[DELIMITER]
        self.replace_null_with_default: bool = parsed[REPLACE_NULL_WITH_DEFAULT]
        self._schemas: dict[Schema, Schema] = {}

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    def _name(self, prefix: str, name: str) -> str:
        return name if not prefix else prefix + self.delimiter + name

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        schema, value = self.operating_schema(record), self.operating_value(record)
        if schema is None:
            if value is None:
                return record
            flat: dict[str, Any] = {}
            self._flatten_map(require_map(value, PURPOSE), "", flat)
            return self.new_record(record, None, flat)
        updated = self._updated_schema(schema)
        if value is None:
            return self.new_record(record, updated, None)
        result = Struct(updated)
        self._flatten_struct(require_struct(value, PURPOSE), "", result)
        return self.new_record(record, updated, result)

    def _flatten_map(self, value: Mapping[str, Any], prefix: str, out: dict[str, Any]) -> None:
        for key, item in value.items():
            name = self._name(prefix, str(key))
            if isinstance(item, Mapping):
                self._flatten_map(item, name, out)
            elif item is None or isinstance(item, _LEAVES) or not isinstance(item, Struct):
                out[name] = item
            else:
                raise DataException(f"Flatten transformation does not support {type_name(item)} for record "
                                    "without schemas (for field " + name + ").")

    def _updated_schema(self, schema: Schema) -> Schema:
        cached = self._schemas.get(schema)
        if cached is None:
            builder = copy_schema_basics(schema, SchemaBuilder.struct())
            if schema.optional:
                builder.optional()
            self._add_fields(schema, "", builder, schema.optional)
            cached = self._schemas[schema] = builder.build()
        return cached

    def _add_fields(self, schema: Schema, prefix: str, builder: SchemaBuilder, optional: bool) -> None:
        for field in schema.fields:
            name = self._name(prefix, field.name)
            field_optional = optional or field.schema.optional
            if field.schema.type is Type.STRUCT:
                self._add_fields(field.schema, name, builder, field_optional)
            else:
                builder.field(name, _leaf_schema(field.schema, field_optional))

    def _flatten_struct(self, struct: Struct, prefix: str, out: Struct) -> None:
        for field in struct.schema.fields:
            name = self._name(prefix, field.name)
            item = field_value(struct, field, self.replace_null_with_default)
            if field.schema.type is Type.STRUCT:
                if item is not None:
                    self._flatten_struct(item, name, out)
            else:
                out.put(name, item)


FlattenKey, FlattenValue = key_and_value_variants(Flatten)
