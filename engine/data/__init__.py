"""Connect's data model (``org.apache.kafka.connect.data``): schemas, structs, logical types.

What connectors put in ``SourceRecord.key``/``value`` with ``key_schema``/``value_schema``, and
what converters turn into bytes and back.
"""

from __future__ import annotations

from engine.data.builder import SchemaBuilder
from engine.data.logical import Date, Decimal, Time, Timestamp
from engine.data.schema import Field, Schema, SchemaAndValue, Type
from engine.data.values import Struct, validate_value

__all__ = [
    "Date",
    "Decimal",
    "Field",
    "Schema",
    "SchemaAndValue",
    "SchemaBuilder",
    "Struct",
    "Time",
    "Timestamp",
    "Type",
    "validate_value",
]
