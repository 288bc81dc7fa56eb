"""``HoistField``: wrap the key or value in a one-field Struct (with a schema) or dict (without)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any, ClassVar

from engine.api.config_def import NO_DEFAULT, ConfigDef, ConfigType, Importance, NonEmptyString
from engine.api.records import ConnectRecord
from engine.data.builder import SchemaBuilder
from engine.data.schema import Schema
from engine.data.struct import Struct
from engine.transforms.key_or_value import KeyOrValue, key_and_value_variants

__all__ = ["HoistField", "HoistFieldKey", "HoistFieldValue"]

FIELD = "field"


@lru_cache(maxsize=64)
def _wrapper_schema(field_name: str, schema: Schema) -> Schema:
    return SchemaBuilder.struct().field(field_name, schema).build()


class HoistField(KeyOrValue):
    """Wrap data using the specified field name in a Struct when schema present, or a Map in the case
    of schemaless data."""

    CONFIG_DEF = ConfigDef().define(FIELD, ConfigType.STRING, NO_DEFAULT, NonEmptyString(), Importance.MEDIUM,
                                    "Field name for the single field that will be created in the resulting "
                                    "Struct or Map.")
    Key: ClassVar[type[HoistField]]
    Value: ClassVar[type[HoistField]]

    def configure(self, configs: Mapping[str, Any]) -> None:
        self.field_name: str = self.CONFIG_DEF.parse(configs)[FIELD]

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        schema, value = self.operating_schema(record), self.operating_value(record)
        if schema is None:
            return self.new_record(record, None, {self.field_name: value})
        wrapper = _wrapper_schema(self.field_name, schema)
        return self.new_record(record, wrapper, Struct(wrapper).put(self.field_name, value))


HoistFieldKey, HoistFieldValue = key_and_value_variants(HoistField)
