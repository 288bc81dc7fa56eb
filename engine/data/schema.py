"""Connect schemas (``org.apache.kafka.connect.data.Schema`` / ``ConnectSchema`` / ``Field``).

A ``Schema`` is immutable once built (use ``SchemaBuilder``); equality compares every
attribute as ``ConnectSchema.equals`` does, so converters can cache by schema.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from types import MappingProxyType
from typing import Any, ClassVar

from engine.api.errors import DataException

__all__ = ["Field", "Schema", "SchemaAndValue", "Type"]


class Type(Enum):
    """``Schema.Type``; ``value`` is Kafka's ``getName()`` (lower case), ``name`` its ``toString()``."""

    INT8 = "int8"
    INT16 = "int16"
    INT32 = "int32"
    INT64 = "int64"
    FLOAT32 = "float32"
    FLOAT64 = "float64"
    BOOLEAN = "boolean"
    STRING = "string"
    BYTES = "bytes"
    ARRAY = "array"
    MAP = "map"
    STRUCT = "struct"

    @property
    def is_primitive(self) -> bool:
        return self not in (Type.ARRAY, Type.MAP, Type.STRUCT)

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class Field:
    """A struct field: its name, position in the struct, and schema."""

    name: str
    index: int
    schema: Schema

    def __repr__(self) -> str:
        return f"Field{{name={self.name}, index={self.index}, schema={self.schema}}}"


class Schema:
    """``ConnectSchema``: type, optionality, default, name/version/doc/parameters and children.

    ``fields``, ``key_schema`` and ``value_schema`` raise ``DataException`` on types that do not
    have them, as Kafka's accessors do, so a caller can never silently read nothing.
    """

    __slots__ = (
        "_fields",
        "_fields_by_name",
        "_hash",
        "_key_schema",
        "_value_schema",
        "default_value",
        "doc",
        "name",
        "optional",
        "parameters",
        "type",
        "version",
    )

    # Predefined schemas (``Schema.INT32_SCHEMA`` ...), assigned at the bottom of this module.
    INT8_SCHEMA: ClassVar[Schema]
    INT16_SCHEMA: ClassVar[Schema]
    INT32_SCHEMA: ClassVar[Schema]
    INT64_SCHEMA: ClassVar[Schema]
    FLOAT32_SCHEMA: ClassVar[Schema]
    FLOAT64_SCHEMA: ClassVar[Schema]
    BOOLEAN_SCHEMA: ClassVar[Schema]
    STRING_SCHEMA: ClassVar[Schema]
    BYTES_SCHEMA: ClassVar[Schema]
    OPTIONAL_INT8_SCHEMA: ClassVar[Schema]
    OPTIONAL_INT16_SCHEMA: ClassVar[Schema]
    OPTIONAL_INT32_SCHEMA: ClassVar[Schema]
    OPTIONAL_INT64_SCHEMA: ClassVar[Schema]
    OPTIONAL_FLOAT32_SCHEMA: ClassVar[Schema]
    OPTIONAL_FLOAT64_SCHEMA: ClassVar[Schema]
    OPTIONAL_BOOLEAN_SCHEMA: ClassVar[Schema]
    OPTIONAL_STRING_SCHEMA: ClassVar[Schema]
    OPTIONAL_BYTES_SCHEMA: ClassVar[Schema]

    type: Type
    optional: bool
    default_value: Any
    name: str | None
    version: int | None
    doc: str | None
    parameters: Mapping[str, str] | None
    _fields: tuple[Field, ...] | None
    _fields_by_name: dict[str, Field] | None
    _key_schema: Schema | None
    _value_schema: Schema | None
    _hash: int | None

    def __init__(
        self,
        type: Type,  # noqa: A002 - Kafka's name
        optional: bool = False,
        default_value: Any = None,
        name: str | None = None,
        version: int | None = None,
        doc: str | None = None,
        parameters: Mapping[str, str] | None = None,
        fields: Sequence[Field] | None = None,
        key_schema: Schema | None = None,
        value_schema: Schema | None = None,
    ) -> None:
        if type is Type.STRUCT:
            fields = tuple(fields or ())
        elif fields:
            raise DataException("Cannot specify fields on a non-struct type")
        else:
            fields = None
        if type is not Type.MAP and key_schema is not None:
            raise DataException("Cannot specify a key schema on a non-map type")
        if type not in (Type.ARRAY, Type.MAP) and value_schema is not None:
            raise DataException("Cannot specify a value schema on a non-array and non-map type")
        object.__setattr__(self, "type", type)
        object.__setattr__(self, "optional", optional)
        object.__setattr__(self, "default_value", default_value)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "version", version)
        object.__setattr__(self, "doc", doc)
        object.__setattr__(
            self, "parameters", None if parameters is None else MappingProxyType(dict(parameters))
        )
        object.__setattr__(self, "_fields", fields)
        object.__setattr__(self, "_fields_by_name", None if fields is None else {f.name: f for f in fields})
        object.__setattr__(self, "_key_schema", key_schema)
        object.__setattr__(self, "_value_schema", value_schema)
        object.__setattr__(self, "_hash", None)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Schema is immutable; cannot set {name}")

    # -- children (Kafka's accessors, with Kafka's errors) -----------------------------------

    @property
    def fields(self) -> tuple[Field, ...]:
        if self._fields is None:
            raise DataException("Cannot list fields on non-struct type")
        return self._fields

    def field(self, name: str) -> Field | None:
        """The field called ``name``, or ``None`` when the struct has no such field."""
        if self._fields_by_name is None:
            raise DataException("Cannot look up fields on non-struct type")
        return self._fields_by_name.get(name)

    @property
    def key_schema(self) -> Schema:
        if self.type is not Type.MAP or self._key_schema is None:
            raise DataException("Cannot look up key schema on non-map type")
        return self._key_schema

    @property
    def value_schema(self) -> Schema:
        if self.type not in (Type.ARRAY, Type.MAP) or self._value_schema is None:
            raise DataException("Cannot look up value schema on non-array and non-map type")
        return self._value_schema

    # -- identity --------------------------------------------------------------------------

    def _key(self) -> tuple[Any, ...]:
        params = None if self.parameters is None else dict(self.parameters)
        return (
            self.type,
            self.optional,
            self.name,
            self.version,
            self.doc,
            self.default_value,
            self._fields,
            self._key_schema,
            self._value_schema,
            params,
        )

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Schema):
            return NotImplemented
        # Type first: ``1 == True`` must not make an int8 default equal a boolean one.
        return self.type is other.type and self._key() == other._key()

    def __hash__(self) -> int:
        cached = self._hash
        if cached is None:
            names = None if self._fields is None else tuple(f.name for f in self._fields)
            cached = hash(
                (
                    self.type,
                    self.optional,
                    self.name,
                    self.version,
                    names,
                    self._key_schema,
                    self._value_schema,
                )
            )
            object.__setattr__(self, "_hash", cached)
        return cached

    def __repr__(self) -> str:
        return f"Schema{{{self.name}:{self.type}}}" if self.name is not None else f"Schema{{{self.type}}}"


@dataclass(frozen=True, slots=True)
class SchemaAndValue:
    """What ``Converter.to_connect_data`` returns; ``SchemaAndValue.NULL`` is a tombstone."""

    schema: Schema | None
    value: Any

    NULL: ClassVar[SchemaAndValue]


SchemaAndValue.NULL = SchemaAndValue(None, None)


def _predefined() -> None:
    for t in (
        Type.INT8,
        Type.INT16,
        Type.INT32,
        Type.INT64,
        Type.FLOAT32,
        Type.FLOAT64,
        Type.BOOLEAN,
        Type.STRING,
        Type.BYTES,
    ):
        setattr(Schema, f"{t.name}_SCHEMA", Schema(t))
        setattr(Schema, f"OPTIONAL_{t.name}_SCHEMA", Schema(t, optional=True))


_predefined()
