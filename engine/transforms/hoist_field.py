"""``HoistField``: wrap the key or value in a one-field Struct (with a schema) or map (without).

Null is wrapped too: a schemaless null becomes ``{field: None}``; with a schema it must be
optional, as the Struct checks the value against it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from engine.api.config_def import NO_DEFAULT, ConfigDef, ConfigType, Importance
from engine.api.records import ConnectRecord
from engine.data.builder import SchemaBuilder
from engine.data.cache import LRUCache
from engine.data.schema import Schema
from engine.data.values import Struct
from engine.transforms.key_or_value import KeyOrValue, key_and_value_variants

__all__ = ["HoistField", "HoistFieldKey", "HoistFieldValue"]

FIELD = "field"


class HoistField(KeyOrValue):
    """Wrap data using the specified field name in a Struct when schema present, or a Map in the
    case of schemaless data."""

    CONFIG_DEF = ConfigDef().define(
        FIELD,
        ConfigType.STRING,
        NO_DEFAULT,
        None,
        Importance.MEDIUM,
        "Field name for the single field that will be created in the resulting Struct or Map.",
    )
    Key: ClassVar[type[HoistField]]
    Value: ClassVar[type[HoistField]]

    def configure(self, configs: Mapping[str, Any]) -> None:
        self.field_name: str = self.CONFIG_DEF.parse(configs)[FIELD]
        self._schemas: LRUCache[Schema, Schema] = LRUCache(16)

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        schema, value = self.operating_schema(record), self.operating_value(record)
        if schema is None:
            return self.new_record(record, None, {self.field_name: value})
        wrapper = self._schemas.get(schema)
        if wrapper is None:
            wrapper = SchemaBuilder.struct().field(self.field_name, schema).build()
            self._schemas.put(schema, wrapper)
        return self.new_record(record, wrapper, Struct(wrapper).put(self.field_name, value))

    def close(self) -> None:
        self._schemas.clear()


HoistFieldKey, HoistFieldValue = key_and_value_variants(HoistField)
