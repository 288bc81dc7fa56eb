"""``Cast``: cast top-level fields, or the whole key/value, to another primitive type.

``spec`` is one type (cast the whole key/value) or ``field:type,...``. Targets: int8, int16,
int32, int64, float32, float64, boolean, string. Sources: those, bytes (to string only, as
base64) and the logical types (Decimal; Date/Time/Timestamp as their days/millis, or formatted
as ISO-8601 text when cast to string). Numbers narrow as Java's do (300 as int8 is 44); strings
parse as Java's ``parseX`` do. Python values carry no width, so schemaless ints are int64 and
floats float64.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import math
import re
import struct as _struct
from collections.abc import Mapping
from typing import Any, ClassVar, Final

from engine.api.config_def import (
    NO_DEFAULT,
    ConfigDef,
    ConfigDefError,
    ConfigType,
    Importance,
    LambdaValidator,
    java_str,
)
from engine.api.errors import DataException
from engine.api.records import ConnectRecord
from engine.data.builder import SchemaBuilder
from engine.data.cache import LRUCache
from engine.data.logical import Date, Time, Timestamp
from engine.data.schema import Schema, Type
from engine.data.values import LOGICAL_TYPES, Struct, class_name, infer_type
from engine.transforms.key_or_value import KeyOrValue, key_and_value_variants
from engine.transforms.schema_util import (
    REPLACE_NULL_WITH_DEFAULT_CONFIG,
    copy_schema_basics,
    define_replace_null_with_default,
    field_value,
    java_split,
    require_map,
    require_struct,
)

__all__ = ["Cast", "CastKey", "CastValue", "cast_value", "parse_spec"]

SPEC = "spec"
PURPOSE = "cast types"
INPUT_TYPES: Final = (
    Type.INT8,
    Type.INT16,
    Type.INT32,
    Type.INT64,
    Type.FLOAT32,
    Type.FLOAT64,
    Type.BOOLEAN,
    Type.STRING,
    Type.BYTES,
)
OUTPUT_TYPES: Final = INPUT_TYPES[:-1]
_BITS: Final = {Type.INT8: 8, Type.INT16: 16, Type.INT32: 32, Type.INT64: 64}
_MILLIS_PER_DAY: Final = 86_400_000
_EPOCH: Final = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_JAVA_INT = re.compile(r"[+-]?[0-9]+")
_JAVA_DOUBLE = re.compile(r"[+-]?(NaN|Infinity|(([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?)[fFdD]?)")


def _type_list(types: tuple[Type, ...]) -> str:
    return "[" + ", ".join(t.name for t in types) + "]"


def _output_type(name: str) -> Type:
    try:
        found = Type[name.strip().upper()]
    except KeyError:
        raise ConfigDefError(f"Invalid type found in casting spec: {name.strip()}") from None
    if found not in OUTPUT_TYPES:
        raise ConfigDefError(
            f"Cast transformation does not support casting to {found.name}; "
            f"supported types are {_type_list(OUTPUT_TYPES)}"
        )
    return found


def parse_spec(mappings: list[str]) -> dict[str | None, Type]:
    """Field name -> target type; ``None`` keys a whole-value cast."""
    casts: dict[str | None, Type] = {}
    for mapping in mappings:
        parts = java_split(mapping, ":")
        if len(parts) > 2:
            # Kafka reports this under ReplaceField's config name; kept for identical messages.
            raise ConfigDefError.invalid("renames", mappings, f"Invalid rename mapping: {mapping}")
        if len(parts) == 2:
            casts[parts[0].strip()] = _output_type(parts[1])
        else:
            casts[None] = _output_type(parts[0] if parts else "")
    if None in casts and len(mappings) > 1:
        raise ConfigDefError(
            "Cast transformations that specify a type to cast the entire value to may ony "
            "specify a single cast in their spec"
        )
    return casts


def _validate_spec(name: str, value: Any) -> None:
    if not value:
        raise ConfigDefError("Must specify at least one field to cast.", name=name, value=value)
    parse_spec(value)


# -- value casts ------------------------------------------------------------------------------


def _wrap(value: int, bits: int) -> int:
    """Java's narrowing of an integer to ``bits`` bits (two's complement)."""
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >= 1 << (bits - 1) else value


def _float_to_int(value: float, bits: int) -> int:
    """Java's ``(byte|short|int|long) double``: NaN is 0, the int/long range saturates."""
    if math.isnan(value):
        return 0
    width = 64 if bits == 64 else 32
    low, high = -(1 << (width - 1)), (1 << (width - 1)) - 1
    whole = high if value >= high else low if value <= low else int(value)
    return _wrap(whole, bits)


def _to_float32(value: float) -> float:
    """Java's ``(float) double``: round to single precision, overflowing to infinity."""
    try:
        return float(_struct.unpack("f", _struct.pack("f", value))[0])
    except OverflowError:
        return math.copysign(math.inf, value)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float | decimal.Decimal) and not isinstance(value, bool)


def _cast_to_int(value: Any, bits: int) -> int:
    if isinstance(value, bool):
        return 1 if value else 0
    if isinstance(value, int):
        return _wrap(value, bits)
    if isinstance(value, float):
        return _float_to_int(value, bits)
    if isinstance(value, decimal.Decimal):
        return _wrap(int(value), bits) if value.is_finite() else 0
    if isinstance(value, str):
        if _JAVA_INT.fullmatch(value) is None or not -(1 << (bits - 1)) <= int(value) < 1 << (bits - 1):
            raise DataException(f"Value ({value}) was out of range for requested data type")
        return int(value)
    raise DataException(f"Unexpected type in Cast transformation: {class_name(value)}")


def _cast_to_float(value: Any, single: bool) -> float:
    if isinstance(value, bool):
        result = 1.0 if value else 0.0
    elif _is_number(value):
        result = float(value)
    elif isinstance(value, str):
        match = _JAVA_DOUBLE.fullmatch(value.strip(" \t\n\r\x0b\x0c\x00"))
        if match is None:
            raise DataException(f"Value ({value}) was out of range for requested data type")
        body = match.group(0).rstrip("fFdD")
        result = float(body.replace("Infinity", "inf"))
    else:
        raise DataException(f"Unexpected type in Cast transformation: {class_name(value)}")
    return _to_float32(result) if single else result


def _cast_to_boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if _is_number(value):
        return _cast_to_int(value, 64) != 0
    if isinstance(value, str):
        return value.lower() == "true"
    raise DataException(f"Unexpected type in Cast transformation: {class_name(value)}")


def _java_float(value: float) -> str:
    """``Float.toString``: the shortest digits that identify the single-precision value."""
    if not math.isfinite(value) or value == 0:
        return java_str(value)
    for precision in range(1, 10):
        text = f"{value:.{precision - 1}e}"
        if _to_float32(float(text)) == value:
            return java_str(float(text))
    return java_str(value)


def _date_millis(value: dt.date | dt.time) -> int:
    if isinstance(value, dt.datetime):
        aware = value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)
        return (aware - _EPOCH) // dt.timedelta(milliseconds=1)
    if isinstance(value, dt.date):
        return (value - _EPOCH.date()).days * _MILLIS_PER_DAY
    return ((value.hour * 60 + value.minute) * 60 + value.second) * 1000 + value.microsecond // 1000


def _format_date(value: dt.date | dt.time) -> str:
    """``Values.dateFormatFor``: a time before the first day, a date at midnight, else a timestamp (UTC)."""
    millis = _date_millis(value)
    instant = _EPOCH + dt.timedelta(milliseconds=millis)
    ms = f"{instant.microsecond // 1000:03d}"
    if millis < _MILLIS_PER_DAY:
        return instant.strftime("%H:%M:%S.") + ms + "Z"
    if millis % _MILLIS_PER_DAY == 0:
        return instant.strftime("%Y-%m-%d")
    return instant.strftime("%Y-%m-%dT%H:%M:%S.") + ms + "Z"


def _cast_to_string(value: Any, schema: Schema | None) -> str:
    if isinstance(value, dt.date | dt.time):
        return _format_date(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, float) and schema is not None and schema.type is Type.FLOAT32:
        return _java_float(value)
    return java_str(value)


def _encode_logical(schema: Schema, value: Any) -> Any:
    """A Date/Time/Timestamp value as the days/millis it is stored as."""
    for logical in (Date, Time, Timestamp):
        if schema.name == logical.LOGICAL_NAME:
            return logical.from_logical(schema, value)
    return value


def cast_value(schema: Schema | None, value: Any, target: Type) -> Any:
    """``Cast.castValueToType``: ``value`` (of ``schema``, or schemaless) as ``target``; None stays None."""
    if value is None:
        return None
    inferred = schema.type if schema is not None else infer_type(value)
    if inferred is None:
        raise DataException(
            f"Cast transformation was passed a value of type {class_name(value)} "
            "which is not supported by Connect's data API"
        )
    if inferred not in INPUT_TYPES:
        raise DataException(
            f"Cast transformation does not support casting from {inferred.name}; "
            f"supported types are {_type_list(INPUT_TYPES)}"
        )
    if schema is not None and schema.name is not None and target is not Type.STRING:
        value = _encode_logical(schema, value)
    if target in _BITS:
        return _cast_to_int(value, _BITS[target])
    if target in (Type.FLOAT32, Type.FLOAT64):
        return _cast_to_float(value, target is Type.FLOAT32)
    if target is Type.BOOLEAN:
        return _cast_to_boolean(value)
    return _cast_to_string(value, schema)


class Cast(KeyOrValue):
    """Cast fields or the entire key or value to a specific type, e.g. to force an integer field to a
    smaller width. Cast from integers, floats, boolean and string to any other type, and cast binary
    to string (base64 encoded). Only top-level fields are cast."""

    CONFIG_DEF = define_replace_null_with_default(
        ConfigDef().define(
            SPEC,
            ConfigType.LIST,
            NO_DEFAULT,
            LambdaValidator(
                _validate_spec, "list of colon-delimited pairs, e.g. <code>foo:bar,abc:xyz</code>"
            ),
            Importance.HIGH,
            "List of fields and the type to cast them to of the form field1:type,field2:type to cast fields of Maps or "
            "Structs. A single type to cast the entire value. Valid types are int8, int16, int32, int64, float32, "
            "float64, boolean, and string. Note that binary fields can only be cast to string.",
        )
    )
    Key: ClassVar[type[Cast]]
    Value: ClassVar[type[Cast]]

    def configure(self, configs: Mapping[str, Any]) -> None:
        parsed = self.CONFIG_DEF.parse(configs)
        self.casts = parse_spec(parsed[SPEC])
        self.whole: Type | None = self.casts.get(None)
        self.replace_null_with_default: bool = parsed[REPLACE_NULL_WITH_DEFAULT_CONFIG]
        self._schemas: LRUCache[Schema, Schema] = LRUCache(16)

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        value = self.operating_value(record)
        if value is None:
            return record
        schema = self.operating_schema(record)
        if schema is None:
            if self.whole is not None:
                return self.new_record(record, None, cast_value(None, value, self.whole))
            mapping = require_map(value, PURPOSE)
            updated = dict(mapping)
            for name, target in self.casts.items():
                updated[name] = cast_value(None, mapping.get(name), target)
            return self.new_record(record, None, updated)
        updated_schema = self._updated_schema(schema)
        if self.whole is not None:
            return self.new_record(record, updated_schema, cast_value(schema, value, self.whole))
        struct = require_struct(value, PURPOSE)
        result = Struct(updated_schema)
        for field in struct.schema.fields:
            item = field_value(struct, field, self.replace_null_with_default)
            cast_to = self.casts.get(field.name)
            result.put(field.name, item if cast_to is None else cast_value(field.schema, item, cast_to))
        return self.new_record(record, updated_schema, result)

    def _updated_schema(self, schema: Schema) -> Schema:
        cached = self._schemas.get(schema)
        if cached is not None:
            return cached
        if self.whole is not None:
            # A logical type's name and parameters would mislabel the primitive it becomes.
            keep_basics = schema.name not in LOGICAL_TYPES
            builder = (
                copy_schema_basics(schema, SchemaBuilder(self.whole))
                if keep_basics
                else SchemaBuilder(self.whole)
            )
        else:
            builder = copy_schema_basics(schema, SchemaBuilder.struct())
            for field in schema.fields:
                target = self.casts.get(field.name)
                if target is None:
                    builder.field(field.name, field.schema)
                    continue
                field_builder = SchemaBuilder(target)
                if field.schema.optional:
                    field_builder.optional()
                if field.schema.default_value is not None:
                    field_builder.default_value(cast_value(field.schema, field.schema.default_value, target))
                builder.field(field.name, field_builder.build())
        if schema.optional:
            builder.optional()
        if schema.default_value is not None:
            builder.default_value(cast_value(schema, schema.default_value, builder.type))
        cached = builder.build()
        self._schemas.put(schema, cached)
        return cached


CastKey, CastValue = key_and_value_variants(Cast)
