"""``Cast``: cast fields, or the whole key or value, to another primitive type.

``spec`` is either one type (cast the whole key/value) or ``field:type,...``. Targets: int8,
int16, int32, int64, float32, float64, boolean, string. Sources: those, bytes (to string only, as
base64) and Decimal. Integer casts wrap as Java's narrowing does (300 as int8 is 44); strings parse
as Java's ``parseX`` do; booleans cast to 1/0 and from non-zero numbers and ``"true"``.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
from collections.abc import Mapping
from typing import Any, ClassVar

from engine.api.config_def import NO_DEFAULT, ConfigDef, ConfigType, Importance
from engine.api.errors import ConfigException, DataException
from engine.api.records import ConnectRecord
from engine.data.builder import SchemaBuilder
from engine.data.logical import Decimal as DecimalType
from engine.data.schema import Schema, Type
from engine.data.struct import Struct
from engine.transforms.header_from import copy_schema_basics, require_map, require_struct, type_name
from engine.transforms.key_or_value import (
    REPLACE_NULL_DOC,
    REPLACE_NULL_WITH_DEFAULT,
    KeyOrValue,
    field_value,
    key_and_value_variants,
)

__all__ = ["Cast", "CastKey", "CastValue"]

SPEC = "spec"
PURPOSE = "cast types"
WHOLE_VALUE = ""
OUTPUT_TYPES = (Type.INT8, Type.INT16, Type.INT32, Type.INT64, Type.FLOAT32, Type.FLOAT64, Type.BOOLEAN,
                Type.STRING)
_BITS = {Type.INT8: 8, Type.INT16: 16, Type.INT32: 32, Type.INT64: 64}
_SUPPORTED = ", ".join(t.name for t in OUTPUT_TYPES)


def _target_type(name: str, mappings: list[str]) -> Type:
    try:
        found = Type[name.strip().upper()]
    except KeyError:
        raise ConfigException(f"Invalid type found in casting spec: {name.strip()}") from None
    if found not in OUTPUT_TYPES:
        raise ConfigException(f"Invalid value {mappings} for configuration {SPEC}: Cast transformation does not "
                              f"support casting to/from {found.name}; supported types are {_SUPPORTED}")
    return found


def parse_spec(mappings: list[str]) -> dict[str, Type]:
    """Field -> target type; the whole value under ``WHOLE_VALUE``."""
    if not mappings:
        raise ConfigException("Must specify at least one field to cast.")
    casts: dict[str, Type] = {}
    for mapping in mappings:
        parts = mapping.split(":")
        if len(parts) > 2:
            raise ConfigException(f"Invalid value {mappings} for configuration {SPEC}: Invalid cast mapping: {mapping}")
        if len(parts) == 1:
            casts[WHOLE_VALUE] = _target_type(parts[0], mappings)
        else:
            casts[parts[0].strip()] = _target_type(parts[1], mappings)
    if WHOLE_VALUE in casts and len(mappings) > 1:
        raise ConfigException("Cast transformations that specify a type to cast the entire value to may ony "
                              "specify a single cast in their spec")
    return casts


def _wrap(value: int, bits: int) -> int:
    """Java's narrowing of an integer to ``bits`` bits (two's complement)."""
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >= 1 << (bits - 1) else value


def _to_int(value: Any, bits: int) -> int:
    if isinstance(value, bool):
        return 1 if value else 0
    if isinstance(value, int):
        return _wrap(value, bits)
    if isinstance(value, float | decimal.Decimal):
        return _wrap(int(value), bits)
    if isinstance(value, str):
        try:
            parsed = int(value)
        except ValueError:
            raise DataException(f"Cannot cast value {value!r} to an integer of {bits} bits") from None
        if not -(1 << (bits - 1)) <= parsed < 1 << (bits - 1):
            raise DataException(f"Value ({value}) was out of range for requested data type")
        return parsed
    raise DataException(f"Unexpected type in Cast transformation: {type_name(value)}")


def _java_string(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(bytes(value)).decode()
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    return str(value)


def cast_value(value: Any, target: Type) -> Any:
    """``Cast.castValueToType`` for one value (None stays None)."""
    if value is None:
        return None
    if isinstance(value, bytes | bytearray) and target is not Type.STRING:
        raise DataException(f"Cast transformation does not support casting to/from BYTES to {target.name}")
    if not isinstance(value, bool | int | float | str | bytes | bytearray | decimal.Decimal):
        raise DataException(f"Cast transformation does not support casting to/from {type_name(value)}; "
                            f"supported types are {_SUPPORTED}")
    if target in _BITS:
        return _to_int(value, _BITS[target])
    if target in (Type.FLOAT32, Type.FLOAT64):
        if isinstance(value, bool):
            return 1.0 if value else 0.0
        try:
            return float(value)
        except ValueError:
            raise DataException(f"Cannot cast value {value!r} to {target.name}") from None
    if target is Type.BOOLEAN:
        if isinstance(value, str):
            return value.lower() == "true"
        return value != 0
    return _java_string(value)


def _cast_schema(schema: Schema, target: Type) -> Schema:
    builder = SchemaBuilder(target)
    if schema.optional:
        builder.optional()
    if schema.default_value is not None:
        builder.default_value(cast_value(schema.default_value, target))
    return builder.build()


def _check_input(schema: Schema) -> None:
    if schema.name == DecimalType.LOGICAL_NAME or schema.type in OUTPUT_TYPES or schema.type is Type.BYTES:
        return
    raise DataException(f"Cast transformation does not support casting to/from {schema.type.name}; "
                        f"supported types are {_SUPPORTED}")


class Cast(KeyOrValue):
    """Cast fields or the entire key or value to a specific type, e.g. to force an integer field to a
    smaller width. Cast from integers, floats, boolean and string to any other type, and cast binary to
    string (base64 encoded)."""

    CONFIG_DEF = (ConfigDef()
                  .define(SPEC, ConfigType.LIST, NO_DEFAULT, None, Importance.HIGH,
                          "List of fields and the type to cast them to of the form field1:type,field2:type to "
                          "cast fields of Maps or Structs. A single type to cast the entire value. Valid types "
                          "are int8, int16, int32, int64, float32, float64, boolean, and string.")
                  .define(REPLACE_NULL_WITH_DEFAULT, ConfigType.BOOLEAN, True, None, Importance.MEDIUM,
                          REPLACE_NULL_DOC))
    Key: ClassVar[type[Cast]]
    Value: ClassVar[type[Cast]]

    def configure(self, configs: Mapping[str, Any]) -> None:
        parsed = self.CONFIG_DEF.parse(configs)
        self.casts = parse_spec(parsed[SPEC])
        self.whole: Type | None = self.casts.get(WHOLE_VALUE)
        self.replace_null_with_default: bool = parsed[REPLACE_NULL_WITH_DEFAULT]
        self._schemas: dict[Schema, Schema] = {}

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        value = self.operating_value(record)
        schema = self.operating_schema(record)
        if value is None and schema is None:
            return record
        if schema is None:
            if self.whole is not None:
                return self.new_record(record, None, cast_value(value, self.whole))
            mapping = dict(require_map(value, PURPOSE))
            for name, target in self.casts.items():
                if name in mapping:
                    mapping[name] = cast_value(mapping[name], target)
            return self.new_record(record, None, mapping)
        if self.whole is not None:
            _check_input(schema)
            return self.new_record(record, _cast_schema(schema, self.whole), cast_value(value, self.whole))
        updated = self._updated_schema(schema)
        if value is None:
            return self.new_record(record, updated, None)
        struct = require_struct(value, PURPOSE)
        result = Struct(updated)
        for field in struct.schema.fields:
            item = field_value(struct, field, self.replace_null_with_default)
            field_cast = self.casts.get(field.name)
            result.put(field.name, item if field_cast is None else cast_value(item, field_cast))
        return self.new_record(record, updated, result)

    def _updated_schema(self, schema: Schema) -> Schema:
        cached = self._schemas.get(schema)
        if cached is None:
            require_struct_schema(schema)
            builder = copy_schema_basics(schema, SchemaBuilder.struct())
            if schema.optional:
                builder.optional()
            for field in schema.fields:
                cast_to = self.casts.get(field.name)
                if cast_to is None:
                    builder.field(field.name, field.schema)
                else:
                    _check_input(field.schema)
                    builder.field(field.name, _cast_schema(field.schema, cast_to))
            cached = self._schemas[schema] = builder.build()
        return cached


def require_struct_schema(schema: Schema) -> None:
    if schema.type is not Type.STRUCT:
        raise DataException(f"Only Struct objects supported for [{PURPOSE}], found: {schema.type.name}")


CastKey, CastValue = key_and_value_variants(Cast)
