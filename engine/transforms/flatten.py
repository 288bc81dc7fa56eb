"""``Flatten``: nested structs (with a schema) or maps (without) become one level, their field names
joined by ``delimiter``. Arrays are kept as they are; a map inside a schema'd struct is an error,
as in Kafka. A flattened field is optional when any struct above it is, and takes its default from
the nearest struct default above it when it has none of its own. A null key/value passes as is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Final

from engine.api.config_def import ConfigDef, ConfigType, Importance
from engine.api.errors import DataException
from engine.api.records import ConnectRecord
from engine.data.builder import SchemaBuilder
from engine.data.cache import LRUCache
from engine.data.schema import Schema, Type
from engine.data.values import Struct, class_name, infer_type
from engine.transforms.key_or_value import KeyOrValue, key_and_value_variants
from engine.transforms.schema_util import copy_schema_basics, require_map, require_struct

__all__ = ["Flatten", "FlattenKey", "FlattenValue"]

DELIMITER = "delimiter"
PURPOSE = "flattening"
_LEAF_TYPES: Final = frozenset(
    {
        Type.INT8,
        Type.INT16,
        Type.INT32,
        Type.INT64,
        Type.FLOAT32,
        Type.FLOAT64,
        Type.BOOLEAN,
        Type.STRING,
        Type.BYTES,
        Type.ARRAY,
    }
)


def _unsupported(kind: Any, name: str, with_schemas: bool) -> DataException:
    which = "with" if with_schemas else "without"
    return DataException(
        f"Flatten transformation does not support {kind} for record {which} schemas (for field {name})."
    )


class Flatten(KeyOrValue):
    """Flatten a nested data structure, generating names for each field by concatenating the field
    names at each level with a configurable delimiter character. Applies to Struct when schema
    present, or a Map in the case of schemaless data. Array fields and their contents are not
    modified. The default delimiter is '.'."""

    CONFIG_DEF = ConfigDef().define(
        DELIMITER,
        ConfigType.STRING,
        ".",
        None,
        Importance.MEDIUM,
        "Delimiter to insert between field names from the input record when generating field names for the "
        "output record",
    )
    Key: ClassVar[type[Flatten]]
    Value: ClassVar[type[Flatten]]

    def configure(self, configs: Mapping[str, Any]) -> None:
        self.delimiter: str = self.CONFIG_DEF.parse(configs)[DELIMITER]
        self._schemas: LRUCache[Schema, Schema] = LRUCache(16)

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    def _name(self, prefix: str, name: str) -> str:
        return name if not prefix else prefix + self.delimiter + name

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        value = self.operating_value(record)
        if value is None:
            return record
        schema = self.operating_schema(record)
        if schema is None:
            flat: dict[str, Any] = {}
            self._flatten_map(require_map(value, PURPOSE), "", flat)
            return self.new_record(record, None, flat)
        struct = require_struct(value, PURPOSE)
        updated = self._updated_schema(schema)
        result = Struct(updated)
        self._flatten_struct(struct, "", result)
        return self.new_record(record, updated, result)

    def _flatten_map(self, value: Mapping[Any, Any], prefix: str, out: dict[str, Any]) -> None:
        for key, item in value.items():
            name = self._name(prefix, str(key))
            if item is None:
                out[name] = None
                continue
            kind = infer_type(item)
            if kind is None:
                raise DataException(
                    f"Flatten transformation was passed a value of type {class_name(item)} "
                    "which is not supported by Connect's data API"
                )
            if kind is Type.MAP:
                self._flatten_map(item, name, out)
            elif kind in _LEAF_TYPES:
                out[name] = item
            else:
                raise _unsupported(class_name(item), name, with_schemas=False)

    def _updated_schema(self, schema: Schema) -> Schema:
        cached = self._schemas.get(schema)
        if cached is None:
            builder = copy_schema_basics(schema, SchemaBuilder.struct())
            self._add_fields(schema, "", builder, schema.optional, schema.default_value)
            cached = builder.build()
            self._schemas.put(schema, cached)
        return cached

    def _add_fields(
        self,
        schema: Schema,
        prefix: str,
        builder: SchemaBuilder,
        optional: bool,
        parent_default: Struct | None,
    ) -> None:
        for field in schema.fields:
            name = self._name(prefix, field.name)
            field_optional = optional or field.schema.optional
            default = field.schema.default_value
            if default is None and parent_default is not None:
                default = parent_default.get(field.name)
            if field.schema.type in _LEAF_TYPES:
                leaf = copy_schema_basics(field.schema)
                if field_optional:
                    leaf.optional()
                if default is not None:
                    leaf.default_value(default)
                builder.field(name, leaf.build())
            elif field.schema.type is Type.STRUCT:
                self._add_fields(field.schema, name, builder, field_optional, default)
            else:
                raise _unsupported(field.schema.type.name, name, with_schemas=True)

    def _flatten_struct(self, struct: Struct | None, prefix: str, out: Struct) -> None:
        if struct is None:
            return
        for field in struct.schema.fields:
            name = self._name(prefix, field.name)
            if field.schema.type in _LEAF_TYPES:
                out.put(name, struct.get(field))
            elif field.schema.type is Type.STRUCT:
                self._flatten_struct(struct.get(field), name, out)
            else:
                raise _unsupported(field.schema.type.name, name, with_schemas=True)


FlattenKey, FlattenValue = key_and_value_variants(Flatten)
