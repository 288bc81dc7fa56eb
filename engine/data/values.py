"""Values checked against a schema (``ConnectSchema.validateValue``, Kafka's messages) and ``Struct``.

They share a module because each needs the other (``Struct.put`` validates, validation recognises
a ``Struct``); split in two they made an import cycle. ``put`` validates each value as it is stored,
``Struct.validate`` checks the whole struct (required fields set) before it is serialized, and unset
fields read as the field schema's default.

Python has one ``int``; where Kafka tells INT8..INT64 apart by Java class we check the range
instead. ``bool`` is never an integer here, and FLOAT32/FLOAT64 take ``float`` only (as Kafka
takes ``Float``/``Double`` only), so a schema's type always says what a value's JSON looks like.
Logical types expect ``decimal.Decimal``, ``datetime.date``, ``datetime.time`` and
``datetime.datetime``.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Mapping
from typing import Any, Final

from engine.api.config_def import java_str
from engine.api.errors import DataException
from engine.data.schema import Field, Schema, Type

__all__ = ["INT_RANGES", "LOGICAL_TYPES", "Struct", "class_name", "infer_type", "validate_value"]

INT_RANGES: Final[dict[Type, tuple[int, int]]] = {
    Type.INT8: (-(2**7), 2**7 - 1),
    Type.INT16: (-(2**15), 2**15 - 1),
    Type.INT32: (-(2**31), 2**31 - 1),
    Type.INT64: (-(2**63), 2**63 - 1),
}

_TYPES: Final[dict[Type, tuple[type, ...]]] = {
    Type.INT8: (int,),
    Type.INT16: (int,),
    Type.INT32: (int,),
    Type.INT64: (int,),
    Type.FLOAT32: (float,),
    Type.FLOAT64: (float,),
    Type.BOOLEAN: (bool,),
    Type.STRING: (str,),
    Type.BYTES: (bytes, bytearray, memoryview),
    Type.ARRAY: (list, tuple),
    Type.MAP: (Mapping,),
}

# Logical names (engine.data.logical has the conversions) -> the Python class their values have.
LOGICAL_TYPES: Final[dict[str, type]] = {
    "org.apache.kafka.connect.data.Decimal": decimal.Decimal,
    "org.apache.kafka.connect.data.Date": dt.date,
    "org.apache.kafka.connect.data.Time": dt.time,
    "org.apache.kafka.connect.data.Timestamp": dt.datetime,
}


def class_name(value: Any) -> str:
    """Java's ``value.getClass()`` in a message: ``class str``, ``class decimal.Decimal``."""
    return java_str(type(value))


def infer_type(value: Any) -> Type | None:
    """``ConnectSchema.schemaType(Class)``: the type schemaless data of this class has."""
    if isinstance(value, bool):
        return Type.BOOLEAN
    if isinstance(value, int):
        return Type.INT64
    if isinstance(value, float):
        return Type.FLOAT64
    if isinstance(value, str):
        return Type.STRING
    if isinstance(value, bytes | bytearray | memoryview):
        return Type.BYTES
    if isinstance(value, list | tuple):
        return Type.ARRAY
    if isinstance(value, Mapping):
        return Type.MAP
    if isinstance(value, Struct):
        return Type.STRUCT
    return None


def validate_value(schema: Schema, value: Any, field: str | None = None) -> None:
    """Raise ``DataException`` unless ``value`` fits ``schema`` (recursively).

    ``field`` names the struct field being checked, for the message.
    """
    _validate(schema, value, "value" if field is None else f'field: "{field}"')


def _matches(schema: Schema, value: Any) -> bool:
    logical = LOGICAL_TYPES.get(schema.name) if schema.name is not None else None
    if logical is not None:
        if logical is dt.date and isinstance(value, dt.datetime):
            return False  # a Date carries no time of day
        return isinstance(value, logical)
    if schema.type is Type.STRUCT:
        return isinstance(value, Struct)
    if isinstance(value, bool) and schema.type is not Type.BOOLEAN:
        return False
    return isinstance(value, _TYPES[schema.type])


def _validate(schema: Schema, value: Any, location: str) -> None:
    if value is None:
        if not schema.optional:
            raise DataException(
                f"Invalid value: null used for required {location}, schema type: {schema.type}"
            )
        return
    if not _matches(schema, value):
        named = f' "{schema.name}"' if schema.name is not None else ""
        raise DataException(
            f"Invalid Java object for schema{named} with type {schema.type}: {class_name(value)} for {location}"
        )
    if schema.type in INT_RANGES and schema.name is None:
        low, high = INT_RANGES[schema.type]
        if not low <= value <= high:
            raise DataException(
                f"Invalid value: {value} out of range for schema type {schema.type} for {location}"
            )
    elif schema.type is Type.STRUCT:
        if value.schema != schema:
            raise DataException("Struct schemas do not match.")
        value.validate()
    elif schema.type is Type.ARRAY:
        entry_location = f"element of array {location}"
        for element in value:
            _validate(schema.value_schema, element, entry_location)
    elif schema.type is Type.MAP:
        key_location = f"key of map {location}"
        value_location = f"value of map {location}"
        for k, v in value.items():
            _validate(schema.key_schema, k, key_location)
            _validate(schema.value_schema, v, value_location)


class Struct:
    """Mutable, so unhashable; equal when schema and stored values are equal."""

    __slots__ = ("_values", "schema")

    __hash__ = None  # type: ignore[assignment]

    def __init__(self, schema: Schema) -> None:
        if schema.type is not Type.STRUCT:
            raise DataException(f"Not a struct schema: {schema}")
        self.schema = schema
        self._values: list[Any] = [None] * len(schema.fields)

    @classmethod
    def from_decoded(cls, schema: Schema, values: list[Any]) -> Struct:
        """A struct of ``values`` in field order, unvalidated: for decoders that read them *with* ``schema``
        (the Avro converter's fastavro read), where checking each again would cost more than the decoding."""
        if schema.type is not Type.STRUCT or len(values) != len(schema.fields):
            raise DataException(f"{len(values)} values for struct schema {schema}")
        struct = cls.__new__(cls)
        struct.schema = schema
        struct._values = values
        return struct

    def _lookup(self, name: str) -> Field:
        found = self.schema.field(name)
        if found is None:
            raise DataException(f"{name} is not a valid field name")
        return found

    def _as_field(self, field: str | Field) -> Field:
        if isinstance(field, Field):
            if self.schema.field(field.name) != field:
                raise DataException(f"{field.name} is not a valid field name")
            return field
        return self._lookup(field)

    def put(self, field: str | Field, value: Any) -> Struct:
        """Store a validated value; returns ``self`` so puts chain as in Kafka."""
        f = self._as_field(field)
        validate_value(f.schema, value, f.name)
        self._values[f.index] = value
        return self

    def get(self, field: str | Field) -> Any:
        """The stored value, or the field's default when unset."""
        f = self._as_field(field)
        value = self._values[f.index]
        return f.schema.default_value if value is None else value

    def get_without_default(self, field: str | Field) -> Any:
        return self._values[self._as_field(field).index]

    def validate(self) -> None:
        """Raise ``DataException`` if a required field without a default is unset."""
        for f in self.schema.fields:
            value = self._values[f.index]
            if value is None and (f.schema.optional or f.schema.default_value is not None):
                continue
            validate_value(f.schema, value, f.name)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Struct):
            return NotImplemented
        return self.schema == other.schema and self._values == other._values

    def __repr__(self) -> str:
        parts = [
            f"{f.name}={v}" for f, v in zip(self.schema.fields, self._values, strict=True) if v is not None
        ]
        return "Struct{" + ",".join(parts) + "}"
