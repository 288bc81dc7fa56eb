"""``org.apache.kafka.connect.converters.ByteArrayConverter``: bytes pass through untouched.

For pipelines that never look inside values (mirroring, archiving). Only BYTES schemas (or
none) and ``bytes``-like values are accepted; reading always gives ``OPTIONAL_BYTES_SCHEMA``.
"""

from __future__ import annotations

from typing import Any

from engine.api.errors import DataException
from engine.converters.base import BuiltinConverter, RawHeaders
from engine.data.schema import Schema, SchemaAndValue, Type
from engine.data.values import class_name

__all__ = ["ByteArrayConverter"]


class ByteArrayConverter(BuiltinConverter):
    """Converter and header converter."""

    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: RawHeaders | None = None
    ) -> bytes | None:
        if schema is not None and schema.type is not Type.BYTES:
            raise DataException(f"Invalid schema type for ByteArrayConverter: {schema.type}")
        if value is not None and not isinstance(value, bytes | bytearray | memoryview):
            raise DataException(
                f"ByteArrayConverter is not compatible with objects of type {class_name(value)}"
            )
        return None if value is None else bytes(value)

    def to_connect_data(
        self, topic: str, value: bytes | None, headers: RawHeaders | None = None
    ) -> SchemaAndValue:
        return SchemaAndValue(Schema.OPTIONAL_BYTES_SCHEMA, value)

    def from_connect_header(
        self, topic: str, header_key: str, schema: Schema | None, value: Any
    ) -> bytes | None:
        return self.from_connect_data(topic, schema, value)

    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue:
        return self.to_connect_data(topic, value)
