"""``ExtractField``: replace the key or value with one of its fields (Struct with a schema, dict without).

A null key/value passes through as null; a dict without the field gives null; a schema without
the field is an error (Kafka's ``Unknown field``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from engine.api.config_def import NO_DEFAULT, ConfigDef, ConfigType, Importance, NonEmptyString
from engine.api.errors import DataException
from engine.api.records import ConnectRecord
from engine.transforms.header_from import require_map, require_struct
from engine.transforms.key_or_value import KeyOrValue, key_and_value_variants

__all__ = ["ExtractField", "ExtractFieldKey", "ExtractFieldValue"]

FIELD = "field"
PURPOSE = "field extraction"


class ExtractField(KeyOrValue):
    """Extract the specified field from a Struct when schema present, or a Map in the case of schemaless
    data. Any null values are passed through unmodified."""

    CONFIG_DEF = ConfigDef().define(FIELD, ConfigType.STRING, NO_DEFAULT, NonEmptyString(), Importance.MEDIUM,
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
            mapping = None if value is None else require_map(value, PURPOSE)
            return self.new_record(record, None, None if mapping is None else mapping.get(self.field_name))
        struct = None if value is None else require_struct(value, PURPOSE)
        field = schema.field(self.field_name)
        if field is None:
            raise DataException(f"Unknown field: {self.field_name}")
        return self.new_record(record, field.schema, None if struct is None else struct.get(field))


ExtractFieldKey, ExtractFieldValue = key_and_value_variants(ExtractField)
