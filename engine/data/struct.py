"""``Struct``: a record-like value whose fields are fixed by a STRUCT schema.

``put`` validates each value as it is stored; ``validate`` checks the whole struct (required
fields set) before it is serialized. Unset fields read as the field schema's default.
"""

from __future__ import annotations

from typing import Any

from engine.api.errors import DataException
from engine.data.schema import Field, Schema, Type
from engine.data.values import validate_value

__all__ = ["Struct"]


class Struct:
    """Mutable, so unhashable; equal when schema and stored values are equal."""

    __slots__ = ("_values", "schema")

    __hash__ = None  # type: ignore[assignment]

    def __init__(self, schema: Schema) -> None:
        if schema.type is not Type.STRUCT:
            raise DataException(f"Not a struct schema: {schema}")
        self.schema = schema
        self._values: list[Any] = [None] * len(schema.fields)

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
        parts = [f"{f.name}={v}" for f, v in zip(self.schema.fields, self._values, strict=True) if v is not None]
        return "Struct{" + ",".join(parts) + "}"
