"""``ExtractField``: replace the key or value with one of its top-level fields.

With a schema the key/value must be a Struct and the result takes the field's schema (a schema
without the field is an error even for a null value); without one it must be a map, and a
missing entry gives null. A null key/value stays null.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from engine.api.config_def import NO_DEFAULT, ConfigDef, ConfigType, Importance
from engine.api.errors import DataException
from engine.api.records import ConnectRecord
from engine.transforms.key_or_value import KeyOrValue, key_and_value_variants
from engine.transforms.schema_util import require_map_or_null, require_struct_or_null

__all__ = ["ExtractField", "ExtractFieldKey", "ExtractFieldValue"]

FIELD = "field"
PURPOSE = "field extraction"


class ExtractField(KeyOrValue):
    """Extract the specified field from a Struct when schema present, or a Map in the case of
    schemaless data. Any null values are passed through unmodified."""

    CONFIG_DEF = ConfigDef().define(FIELD, ConfigType.STRING, NO_DEFAULT, None, Importance.MEDIUM,
                                    "Field name to extract.")
    Key: ClassVar[type[ExtractField]]
    Value: ClassVar[type[ExtractField]]

    def configure(self, configs: Mapping[str, Any]) -> None:
        self.field_name: str = self.CONFIG_DEF.parse(configs)[FIELD]

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        schema, value = self.operating_schema(record), self.operating_value(record)
        if schema is None:
            mapping = require_map_or_null(value, PURPOSE)
            return self.new_record(record, None, None if mapping is None else mapping.get(self.field_name))
        struct = require_struct_or_null(value, PURPOSE)
        field = schema.field(self.field_name)
        if field is None:
            raise DataException(f"Unknown field: {self.field_name}")
        return self.new_record(record, field.schema, None if struct is None else struct.get(self.field_name))


ExtractFieldKey, ExtractFieldValue = key_and_value_variants(ExtractField)
