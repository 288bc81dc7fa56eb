"""``MaskField``: replace fields with their type's "empty" value (0, false, "", empty list or map,
the epoch), or with a configured replacement converted to the field's type (numbers and strings
only). Only top-level fields are masked; null field values stay null. A null key/value is refused,
as in Kafka 3.7. Python values carry no width, so a schemaless int is a long and a float a double;
with a schema the field's type sets the width.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import re
import struct as _struct
from collections.abc import Mapping
from typing import Any, ClassVar, Final

from engine.api.config_def import NO_DEFAULT, ConfigDef, ConfigType, Importance, NonEmptyString, ValidList
from engine.api.errors import DataException
from engine.api.records import ConnectRecord
from engine.data.schema import Schema, Type
from engine.data.values import Struct, class_name
from engine.transforms.key_or_value import KeyOrValue, key_and_value_variants
from engine.transforms.schema_util import (
    REPLACE_NULL_WITH_DEFAULT_CONFIG,
    define_replace_null_with_default,
    field_value,
    require_map,
    require_struct,
)

__all__ = ["MaskField", "MaskFieldKey", "MaskFieldValue"]

FIELDS, REPLACEMENT = "fields", "replacement"
PURPOSE = "mask fields"
_EPOCH: Final = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_BIG_DECIMAL = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")
_BITS: Final = {Type.INT8: 8, Type.INT16: 16, Type.INT32: 32, Type.INT64: 64}


def _empty(value: Any) -> Any:
    """The "null" value of the value's type (``MaskField.maskWithNullValue``)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return 0
    if isinstance(value, float):
        return 0.0
    if isinstance(value, decimal.Decimal):
        return decimal.Decimal(0)
    if isinstance(value, str):
        return ""
    if isinstance(value, dt.datetime):
        return _EPOCH
    if isinstance(value, dt.date):
        return _EPOCH.date()
    if isinstance(value, dt.time):
        return dt.time(0)
    if isinstance(value, list | tuple):
        return []
    if isinstance(value, Mapping):
        return {}
    raise DataException(f"Cannot mask value of type: {class_name(value)}")


def _parse_big_decimal(text: str) -> decimal.Decimal | None:
    """``new BigDecimal(text)``, or None where Java would throw ``NumberFormatException``."""
    return decimal.Decimal(text) if _BIG_DECIMAL.fullmatch(text) else None


def _wrap(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >= 1 << (bits - 1) else value


def _replacement(value: Any, replacement: str, schema: Schema | None) -> Any:
    """``replacement`` converted to the value's type (``MaskField.maskWithCustomReplacement``)."""
    if isinstance(value, str):
        return replacement
    if isinstance(value, decimal.Decimal):
        parsed = _parse_big_decimal(replacement)
        if parsed is None:
            raise DataException(f"Unable to convert {replacement} ({class_name(replacement)}) to number")
        return parsed
    if isinstance(value, int | float) and not isinstance(value, bool):
        parsed = _parse_big_decimal(replacement)
        if parsed is None:
            raise DataException(f"Unable to convert {replacement} ({class_name(replacement)}) to a number")
        kind = schema.type if schema is not None else None
        if isinstance(value, int):
            return _wrap(int(parsed), _BITS.get(kind, 64) if kind is not None else 64)
        as_double = float(parsed)
        if kind is Type.FLOAT32:
            try:
                return float(_struct.unpack("f", _struct.pack("f", as_double))[0])
            except OverflowError:
                return math.copysign(math.inf, as_double)
        return as_double
    raise DataException(f"Cannot mask value of type {class_name(value)} with custom replacement.")


class MaskField(KeyOrValue):
    """Mask specified fields with a valid null value for the field type (i.e. 0, false, empty string,
    and so on). For numeric and string fields, an optional replacement value can be specified that
    is converted to the correct type."""

    CONFIG_DEF = define_replace_null_with_default(
        ConfigDef()
        .define(
            FIELDS,
            ConfigType.LIST,
            NO_DEFAULT,
            ValidList.any_non_duplicate_values(False, False),  # KIP-1161 (4.2)
            Importance.HIGH,
            "Names of fields to mask.",
        )
        .define(
            REPLACEMENT,
            ConfigType.STRING,
            None,
            NonEmptyString(),
            Importance.LOW,
            "Custom value replacement, that will be applied to all 'fields' values (numeric or "
            "non-empty string values only).",
        )
    )
    Key: ClassVar[type[MaskField]]
    Value: ClassVar[type[MaskField]]

    def configure(self, configs: Mapping[str, Any]) -> None:
        parsed = self.CONFIG_DEF.parse(configs)
        self.fields: frozenset[str] = frozenset(parsed[FIELDS])
        self.replacement: str | None = parsed[REPLACEMENT]
        self.replace_null_with_default: bool = parsed[REPLACE_NULL_WITH_DEFAULT_CONFIG]

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    def masked(self, value: Any, schema: Schema | None = None) -> Any:
        if value is None:
            return None
        return _empty(value) if self.replacement is None else _replacement(value, self.replacement, schema)

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        value = self.operating_value(record)
        schema = self.operating_schema(record)
        if schema is None:
            mapping = require_map(value, PURPOSE)
            updated = dict(mapping)
            for name in self.fields:
                updated[name] = self.masked(mapping.get(name))
            return self.new_record(record, None, updated)
        struct = require_struct(value, PURPOSE)
        result = Struct(struct.schema)
        for field in struct.schema.fields:
            original = field_value(struct, field, self.replace_null_with_default)
            result.put(field, self.masked(original, field.schema) if field.name in self.fields else original)
        return self.new_record(record, schema, result)


MaskFieldKey, MaskFieldValue = key_and_value_variants(MaskField)
