"""``MaskField``: replace fields with their type's "null" value (0, false, "", empty collections, the
epoch), or with a configured replacement converted to the field's type (numbers and strings only)."""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from engine.api.config_def import NO_DEFAULT, ConfigDef, ConfigType, Importance, NonEmptyString
from engine.api.errors import ConfigException, DataException
from engine.api.records import ConnectRecord
from engine.data.struct import Struct
from engine.transforms.header_from import require_map, require_struct, type_name
from engine.transforms.key_or_value import (
    REPLACE_NULL_DOC,
    REPLACE_NULL_WITH_DEFAULT,
    KeyOrValue,
    field_value,
    key_and_value_variants,
)

__all__ = ["MaskField", "MaskFieldKey", "MaskFieldValue"]

FIELDS, REPLACEMENT = "fields", "replacement"
PURPOSE = "mask fields"
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)

# checked in order: bool before int (a bool is an int in Python), datetime before date
_MASKS: list[tuple[type, Any]] = [
    (bool, False), (int, 0), (float, 0.0), (decimal.Decimal, decimal.Decimal(0)), (str, ""),
    (dt.datetime, _EPOCH), (dt.date, _EPOCH.date()), (dt.time, dt.time(0)), (list, []), (dict, {}),
]
_REPLACEMENTS: list[tuple[type, Callable[[str], Any]]] = [
    (int, int), (float, float), (decimal.Decimal, decimal.Decimal), (str, str)]


def _mask(value: Any) -> Any:
    for cls, masked in _MASKS:
        if isinstance(value, cls):
            return type(masked)(masked) if isinstance(masked, list | dict) else masked
    raise DataException(f"Cannot mask value of type: {type_name(value)}")


def _replace(value: Any, replacement: str) -> Any:
    if not isinstance(value, bool):
        for cls, convert in _REPLACEMENTS:
            if isinstance(value, cls):
                try:
                    return convert(replacement)
                except (ValueError, decimal.InvalidOperation) as exc:
                    raise DataException(f"Unable to convert {replacement} (str) to number") from exc
    raise DataException(f"Cannot mask value of type {type_name(value)} with custom replacement.")


class MaskField(KeyOrValue):
    """Mask specified fields with a valid null value for the field type (i.e. 0, false, empty string,
    and so on). For numeric and string fields, an optional replacement value can be specified that is
    converted to the correct type."""

    CONFIG_DEF = (ConfigDef()
                  .define(FIELDS, ConfigType.LIST, NO_DEFAULT, None, Importance.HIGH, "Names of fields to mask.")
                  .define(REPLACEMENT, ConfigType.STRING, None, NonEmptyString(), Importance.LOW,
                          "Custom value replacement, that will be applied to all 'fields' values (numeric or "
                          "non-empty string values only).")
                  .define(REPLACE_NULL_WITH_DEFAULT, ConfigType.BOOLEAN, True, None, Importance.MEDIUM,
                          REPLACE_NULL_DOC))
    Key: ClassVar[type[MaskField]]
    Value: ClassVar[type[MaskField]]

    def configure(self, configs: Mapping[str, Any]) -> None:
        parsed = self.CONFIG_DEF.parse(configs)
        self.fields = set(parsed[FIELDS])
        if not self.fields:
            raise ConfigException(f"Invalid value [] for configuration {FIELDS}: empty list is not supported")
        self.replacement: str | None = parsed[REPLACEMENT]
        self.replace_null_with_default: bool = parsed[REPLACE_NULL_WITH_DEFAULT]

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    def masked(self, value: Any) -> Any:
        if value is None:
            return None
        return _mask(value) if self.replacement is None else _replace(value, self.replacement)

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        value = self.operating_value(record)
        if value is None:
            return record
        schema = self.operating_schema(record)
        if schema is None:
            mapping = require_map(value, PURPOSE)
            updated = dict(mapping)
            for name in self.fields:
                if name in updated:
                    updated[name] = self.masked(updated[name])
            return self.new_record(record, None, updated)
        struct = require_struct(value, PURPOSE)
        result = Struct(struct.schema)
        for field in struct.schema.fields:
            original = field_value(struct, field, self.replace_null_with_default)
            result.put(field, self.masked(original) if field.name in self.fields else original)
        return self.new_record(record, schema, result)


MaskFieldKey, MaskFieldValue = key_and_value_variants(MaskField)
