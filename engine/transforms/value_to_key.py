"""``ValueToKey``: a new key made of some fields of the value.

With a schema the value must be a Struct holding every listed field (the key schema is cached per
value schema); without one it must be a map, and missing entries become null. A null value is
refused, as in Kafka 3.7. Kafka 4.4 added ``field.syntax.version`` (KIP-821): with ``V2`` a field is a
dotted path into nested structs or maps; the key's field is named by the path as written.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.api.config_def import NO_DEFAULT, ConfigDef, ConfigType, Importance, ValidList
from engine.api.errors import DataException
from engine.api.records import ConnectRecord
from engine.api.transforms import Transformation
from engine.data.builder import SchemaBuilder
from engine.data.cache import LRUCache
from engine.data.schema import Schema
from engine.data.values import Struct
from engine.transforms.field_path import FieldSyntaxVersion, SingleFieldPath
from engine.transforms.schema_util import (
    REPLACE_NULL_WITH_DEFAULT_CONFIG,
    define_replace_null_with_default,
    require_map,
    require_struct,
)

__all__ = ["ValueToKey"]

FIELDS = "fields"
PURPOSE = "copying fields from value to key"


class ValueToKey(Transformation[ConnectRecord]):
    """Replace the record key with a new key formed from a subset of fields in the record value."""

    CONFIG_DEF = FieldSyntaxVersion.append_config_to(
        define_replace_null_with_default(
            ConfigDef().define(
                FIELDS,
                ConfigType.LIST,
                NO_DEFAULT,
                ValidList.any_non_duplicate_values(False, False),  # KIP-1161 (4.2)
                Importance.HIGH,
                "Field names on the record value to extract as the record key.",
            )
        )
    )

    def configure(self, configs: Mapping[str, Any]) -> None:
        parsed = self.CONFIG_DEF.parse(configs)
        self.fields: list[str] = parsed[FIELDS]
        version = FieldSyntaxVersion.from_config(parsed)
        self.paths = [SingleFieldPath(name, version) for name in self.fields]
        self.replace_null_with_default: bool = parsed[REPLACE_NULL_WITH_DEFAULT_CONFIG]
        self._schemas: LRUCache[Schema, Schema] = LRUCache(16)

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        if record.value_schema is None:
            value = require_map(record.value, PURPOSE)
            key_map = {
                name: path.value_from_map(value) for name, path in zip(self.fields, self.paths, strict=True)
            }
            return record.new_record(key_schema=None, key=key_map)
        struct = require_struct(record.value, PURPOSE)
        key_schema = self._key_schema(struct.schema)
        key = Struct(key_schema)
        for name, path in zip(self.fields, self.paths, strict=True):
            key.put(name, path.value_from_struct(struct, self.replace_null_with_default))
        return record.new_record(key_schema=key_schema, key=key, value_schema=struct.schema)

    def _key_schema(self, value_schema: Schema) -> Schema:
        cached = self._schemas.get(value_schema)
        if cached is None:
            builder = SchemaBuilder.struct()
            for name, path in zip(self.fields, self.paths, strict=True):
                field = path.field_from(value_schema)
                if field is None:
                    raise DataException(f"Field does not exist: {name}")
                builder.field(name, field.schema)
            cached = builder.build()
            self._schemas.put(value_schema, cached)
        return cached

    def close(self) -> None:
        self._schemas.clear()
