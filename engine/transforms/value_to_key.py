"""``ValueToKey``: a new key made of some fields of the value (Struct with a schema, dict without)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.api.config_def import NO_DEFAULT, ConfigDef, ConfigType, Importance
from engine.api.errors import ConfigException, DataException
from engine.api.records import ConnectRecord
from engine.api.transforms import Transformation
from engine.data.builder import SchemaBuilder
from engine.data.schema import Schema
from engine.data.struct import Struct
from engine.transforms.header_from import require_map, require_struct
from engine.transforms.key_or_value import REPLACE_NULL_DOC, REPLACE_NULL_WITH_DEFAULT, field_value

__all__ = ["ValueToKey"]

FIELDS = "fields"
PURPOSE = "copying fields from value to key"


class ValueToKey(Transformation[ConnectRecord]):
    """Replace the record key with a new key formed from a subset of fields in the record value."""

    CONFIG_DEF = (ConfigDef()
                  .define(FIELDS, ConfigType.LIST, NO_DEFAULT, None, Importance.HIGH,
                          "Field names on the record value to extract as the record key.")
                  .define(REPLACE_NULL_WITH_DEFAULT, ConfigType.BOOLEAN, True, None, Importance.MEDIUM,
                          REPLACE_NULL_DOC))

    def configure(self, configs: Mapping[str, Any]) -> None:
        parsed = self.CONFIG_DEF.parse(configs)
        self.fields: list[str] = parsed[FIELDS]
        if not self.fields:
            raise ConfigException(f"Invalid value [] for configuration {FIELDS}: empty list is not supported")
        self.replace_null_with_default: bool = parsed[REPLACE_NULL_WITH_DEFAULT]
        self._schemas: dict[Schema, Schema] = {}

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        if record.value_schema is None:
            value = require_map(record.value, PURPOSE)
            return record.new_record(key_schema=None, key={f: value.get(f) for f in self.fields})
        struct = require_struct(record.value, PURPOSE)
        key_schema = self._key_schema(struct.schema)
        key = Struct(key_schema)
        for name in self.fields:
            key.put(name, field_value(struct, name, self.replace_null_with_default))
        return record.new_record(key_schema=key_schema, key=key)

    def _key_schema(self, value_schema: Schema) -> Schema:
        cached = self._schemas.get(value_schema)
        if cached is None:
            builder = SchemaBuilder.struct()
            for name in self.fields:
                field = value_schema.field(name)
                if field is None:
                    raise DataException(f"Field does not exist: {name}")
                builder.field(name, field.schema)
            cached = self._schemas[value_schema] = builder.build()
        return cached
