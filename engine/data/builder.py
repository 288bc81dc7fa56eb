"""``SchemaBuilder``: the fluent way to make a ``Schema`` (each attribute settable once).

Kafka's builder *is* a Schema; here ``build()`` makes one, and every method that takes a
child schema also takes a builder (built on the spot), so ``.field("a", SchemaBuilder.int32())``
reads as in Java. The predefined schemas are re-exported as module constants.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self

from engine.api.errors import DataException, SchemaBuilderException
from engine.data.schema import Field, Schema, Type
from engine.data.values import validate_value

__all__ = [
    "BOOLEAN_SCHEMA",
    "BYTES_SCHEMA",
    "FLOAT32_SCHEMA",
    "FLOAT64_SCHEMA",
    "INT8_SCHEMA",
    "INT16_SCHEMA",
    "INT32_SCHEMA",
    "INT64_SCHEMA",
    "OPTIONAL_BOOLEAN_SCHEMA",
    "OPTIONAL_BYTES_SCHEMA",
    "OPTIONAL_FLOAT32_SCHEMA",
    "OPTIONAL_FLOAT64_SCHEMA",
    "OPTIONAL_INT8_SCHEMA",
    "OPTIONAL_INT16_SCHEMA",
    "OPTIONAL_INT32_SCHEMA",
    "OPTIONAL_INT64_SCHEMA",
    "OPTIONAL_STRING_SCHEMA",
    "STRING_SCHEMA",
    "SchemaBuilder",
]

INT8_SCHEMA = Schema.INT8_SCHEMA
INT16_SCHEMA = Schema.INT16_SCHEMA
INT32_SCHEMA = Schema.INT32_SCHEMA
INT64_SCHEMA = Schema.INT64_SCHEMA
FLOAT32_SCHEMA = Schema.FLOAT32_SCHEMA
FLOAT64_SCHEMA = Schema.FLOAT64_SCHEMA
BOOLEAN_SCHEMA = Schema.BOOLEAN_SCHEMA
STRING_SCHEMA = Schema.STRING_SCHEMA
BYTES_SCHEMA = Schema.BYTES_SCHEMA
OPTIONAL_INT8_SCHEMA = Schema.OPTIONAL_INT8_SCHEMA
OPTIONAL_INT16_SCHEMA = Schema.OPTIONAL_INT16_SCHEMA
OPTIONAL_INT32_SCHEMA = Schema.OPTIONAL_INT32_SCHEMA
OPTIONAL_INT64_SCHEMA = Schema.OPTIONAL_INT64_SCHEMA
OPTIONAL_FLOAT32_SCHEMA = Schema.OPTIONAL_FLOAT32_SCHEMA
OPTIONAL_FLOAT64_SCHEMA = Schema.OPTIONAL_FLOAT64_SCHEMA
OPTIONAL_BOOLEAN_SCHEMA = Schema.OPTIONAL_BOOLEAN_SCHEMA
OPTIONAL_STRING_SCHEMA = Schema.OPTIONAL_STRING_SCHEMA
OPTIONAL_BYTES_SCHEMA = Schema.OPTIONAL_BYTES_SCHEMA

_UNSET: Any = object()


def _schema(s: Schema | SchemaBuilder) -> Schema:
    return s.build() if isinstance(s, SchemaBuilder) else s


class SchemaBuilder:
    """Mirror of Kafka's builder, including its ``SchemaBuilderException`` messages."""

    def __init__(self, type: Type) -> None:  # noqa: A002 - Kafka's name
        self.type = type
        self._optional: bool | None = None
        self._default: Any = _UNSET
        self._name: str | None = None
        self._version: int | None = None
        self._doc: str | None = None
        self._parameters: dict[str, str] | None = None
        self._fields: dict[str, Field] | None = {} if type is Type.STRUCT else None
        self._key_schema: Schema | None = None
        self._value_schema: Schema | None = None

    @staticmethod
    def _check_can_set(field_name: str, current: Any, new: Any) -> None:
        if current is not None and current is not _UNSET and current != new:
            raise SchemaBuilderException(f"Invalid SchemaBuilder call: {field_name} has already been set.")

    # -- constructors ------------------------------------------------------------------------

    @classmethod
    def int8(cls) -> SchemaBuilder:
        return cls(Type.INT8)

    @classmethod
    def int16(cls) -> SchemaBuilder:
        return cls(Type.INT16)

    @classmethod
    def int32(cls) -> SchemaBuilder:
        return cls(Type.INT32)

    @classmethod
    def int64(cls) -> SchemaBuilder:
        return cls(Type.INT64)

    @classmethod
    def float32(cls) -> SchemaBuilder:
        return cls(Type.FLOAT32)

    @classmethod
    def float64(cls) -> SchemaBuilder:
        return cls(Type.FLOAT64)

    @classmethod
    def bool(cls) -> SchemaBuilder:
        return cls(Type.BOOLEAN)

    @classmethod
    def string(cls) -> SchemaBuilder:
        return cls(Type.STRING)

    @classmethod
    def bytes(cls) -> SchemaBuilder:
        return cls(Type.BYTES)

    @classmethod
    def struct(cls) -> SchemaBuilder:
        return cls(Type.STRUCT)

    @classmethod
    def array(cls, value_schema: Schema | SchemaBuilder | None) -> SchemaBuilder:
        if value_schema is None:
            raise SchemaBuilderException("valueSchema cannot be null.")
        builder = cls(Type.ARRAY)
        builder._value_schema = _schema(value_schema)
        return builder

    @classmethod
    def map(
        cls, key_schema: Schema | SchemaBuilder | None, value_schema: Schema | SchemaBuilder | None
    ) -> SchemaBuilder:
        if key_schema is None:
            raise SchemaBuilderException("keySchema cannot be null.")
        if value_schema is None:
            raise SchemaBuilderException("valueSchema cannot be null.")
        builder = cls(Type.MAP)
        builder._key_schema = _schema(key_schema)
        builder._value_schema = _schema(value_schema)
        return builder

    # -- attributes --------------------------------------------------------------------------

    def optional(self) -> Self:
        self._check_can_set("optional", self._optional, True)
        self._optional = True
        return self

    def required(self) -> Self:
        self._check_can_set("optional", self._optional, False)
        self._optional = False
        return self

    def default_value(self, value: Any) -> Self:
        """Validated against the schema so far (so call ``optional()``/``parameter()`` first)."""
        self._check_can_set("default", self._default, value)
        try:
            validate_value(self._build(_UNSET), value)
        except DataException as exc:
            raise SchemaBuilderException(f"Invalid default value: {exc}") from exc
        self._default = value
        return self

    def name(self, name: str) -> Self:
        self._check_can_set("name", self._name, name)
        self._name = name
        return self

    def version(self, version: int) -> Self:
        self._check_can_set("version", self._version, version)
        self._version = version
        return self

    def doc(self, doc: str) -> Self:
        self._check_can_set("doc", self._doc, doc)
        self._doc = doc
        return self

    def parameter(self, name: str, value: str) -> Self:
        if self._parameters is None:
            self._parameters = {}
        self._parameters[name] = value
        return self

    def parameters(self, params: Mapping[str, str]) -> Self:
        if self._parameters is None:
            self._parameters = {}
        self._parameters.update(params)
        return self

    def field(self, field_name: str, field_schema: Schema | SchemaBuilder | None) -> Self:
        """Append a struct field (index = position); names must be unique and non-empty."""
        if self._fields is None:
            raise SchemaBuilderException(f"Cannot create fields on type {self.type}")
        if not field_name:
            raise SchemaBuilderException("fieldName cannot be null.")
        if field_schema is None:
            raise SchemaBuilderException(f"fieldSchema for field {field_name} cannot be null.")
        if field_name in self._fields:
            raise SchemaBuilderException(
                f"Cannot create field because of field name duplication {field_name}"
            )
        self._fields[field_name] = Field(field_name, len(self._fields), _schema(field_schema))
        return self

    @property
    def fields(self) -> tuple[Field, ...]:
        if self._fields is None:
            raise DataException("Cannot list fields on non-struct type")
        return tuple(self._fields.values())

    # -- result ------------------------------------------------------------------------------

    def _build(self, default: Any) -> Schema:
        return Schema(
            self.type,
            optional=bool(self._optional),
            default_value=None if default is _UNSET else default,
            name=self._name,
            version=self._version,
            doc=self._doc,
            parameters=self._parameters,
            fields=None if self._fields is None else tuple(self._fields.values()),
            key_schema=self._key_schema,
            value_schema=self._value_schema,
        )

    def build(self) -> Schema:
        return self._build(self._default)

    def schema(self) -> Schema:
        """Kafka's ``Schema.schema()`` on a builder."""
        return self.build()
