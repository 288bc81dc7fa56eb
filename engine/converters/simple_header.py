"""``org.apache.kafka.connect.storage.SimpleHeaderConverter``, simplified.

Headers are written as UTF-8 text: strings as they are, other values in Connect's ``Values``
text form — ``true``/``false``, numbers (doubles as ``Double.toString``), decimals with
``BigDecimal.toString``, bytes as base64, ``Date``/``Time``/``Timestamp`` as
``yyyy-MM-dd`` / ``HH:mm:ss.SSS'Z'`` / ``yyyy-MM-dd'T'HH:mm:ss.SSS'Z'`` (UTC), and lists, maps
and structs as compact JSON. Reading infers a schema from the text: booleans, the smallest
integer type that fits, FLOAT64 for other numbers, those three temporal forms, and JSON
arrays/objects (with an element/value schema when the elements share one primitive type,
else no schema); anything else is a STRING.

Limitations against Kafka's ``Values`` parser: non-integral numbers are always FLOAT64 (Kafka
may pick FLOAT32), integers beyond int64 and base64-looking text stay strings, nested
containers get no schema, and ``null`` inside text is not parsed as a null value.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import re
from collections.abc import Mapping
from typing import Any, Final

from engine.converters import jackson
from engine.converters.base import BuiltinConverter
from engine.data.builder import SchemaBuilder
from engine.data.logical import Date, Time, Timestamp
from engine.data.schema import Schema, SchemaAndValue, Type
from engine.data.values import INT_RANGES, Struct

__all__ = ["SimpleHeaderConverter"]

_INTEGER: Final = re.compile(r"-?\d+")
_NUMBER: Final = re.compile(r"-?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?")
_DATE: Final = re.compile(r"\d{4}-\d{2}-\d{2}")
_TIME: Final = re.compile(r"\d{2}:\d{2}:\d{2}\.\d{3}Z")
_TIMESTAMP: Final = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z")


def _millis(t: dt.time) -> str:
    return f"{t.hour:02d}:{t.minute:02d}:{t.second:02d}.{t.microsecond // 1000:03d}Z"


def _embedded(value: Any) -> Any:
    """A value inside a list/map/struct as a ``jackson`` tree node (temporal values as text)."""
    if isinstance(value, Struct):
        return {f.name: _embedded(value.get(f)) for f in value.schema.fields}
    if isinstance(value, Mapping):
        return {k if isinstance(k, str) else _text(k): _embedded(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_embedded(v) for v in value]
    if isinstance(value, dt.date | dt.time):
        return _text(value)
    return value


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | decimal.Decimal):
        return jackson.dumps(value).decode("utf-8").strip('"')
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, dt.datetime):
        utc = value.astimezone(dt.UTC) if value.tzinfo is not None else value
        return f"{utc.date().isoformat()}T{_millis(utc.time())}"
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, dt.time):
        return _millis(value)
    return jackson.dumps(_embedded(value)).decode("utf-8")


def _int_schema(n: int) -> Schema | None:
    for t in (Type.INT8, Type.INT16, Type.INT32, Type.INT64):
        low, high = INT_RANGES[t]
        if low <= n <= high:
            return Schema(t)
    return None


def _element_schema(values: list[Any]) -> Schema | None:
    """The one primitive schema every non-null element has (optional if any is null)."""
    present = [v for v in values if v is not None]
    if not present:
        return None
    if all(isinstance(v, bool) for v in present):
        t = Type.BOOLEAN
    elif all(isinstance(v, str) for v in present):
        t = Type.STRING
    elif all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        widest = [_int_schema(v) for v in present]
        if any(s is None for s in widest):
            return None
        t = max((s.type for s in widest if s is not None), key=list(INT_RANGES).index)
    elif all(isinstance(v, float) for v in present):
        t = Type.FLOAT64
    else:
        return None
    return Schema(t, optional=len(present) < len(values))


def _plain(node: Any) -> Any:
    if isinstance(node, decimal.Decimal):
        return float(node)
    if isinstance(node, list):
        return [_plain(v) for v in node]
    if isinstance(node, dict):
        return {k: _plain(v) for k, v in node.items()}
    return node


def _parse_container(text: str) -> SchemaAndValue | None:
    try:
        node = _plain(jackson.loads(text.encode("utf-8")))
    except ValueError:
        return None
    if isinstance(node, list):
        element = _element_schema(node)
        return SchemaAndValue(None if element is None else SchemaBuilder.array(element).build(), node)
    if isinstance(node, dict):
        value = _element_schema(list(node.values()))
        schema = None if value is None else SchemaBuilder.map(Schema.STRING_SCHEMA, value).build()
        return SchemaAndValue(schema, node)
    return None


def _parse(text: str) -> SchemaAndValue:
    if text in ("true", "false"):
        return SchemaAndValue(Schema.BOOLEAN_SCHEMA, text == "true")
    if _INTEGER.fullmatch(text):
        schema = _int_schema(int(text))
        if schema is not None:
            return SchemaAndValue(schema, int(text))
    elif _NUMBER.fullmatch(text):
        return SchemaAndValue(Schema.FLOAT64_SCHEMA, float(text))
    try:
        if _TIMESTAMP.fullmatch(text):
            stamp = dt.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=dt.UTC)
            return SchemaAndValue(Timestamp.schema(), stamp)
        if _DATE.fullmatch(text):
            return SchemaAndValue(Date.schema(), dt.date.fromisoformat(text))
        if _TIME.fullmatch(text):
            return SchemaAndValue(Time.schema(), dt.time.fromisoformat(text[:-1]))
    except ValueError:
        pass  # digits in the right places but not a real date: keep the text
    if text[:1] in ("[", "{"):
        container = _parse_container(text)
        if container is not None:
            return container
    return SchemaAndValue(Schema.STRING_SCHEMA, text)


class SimpleHeaderConverter(BuiltinConverter):
    """Header converter only (as in Kafka); see the module docstring for the text forms."""

    def from_connect_header(
        self, topic: str, header_key: str, schema: Schema | None, value: Any
    ) -> bytes | None:
        return None if value is None else _text(value).encode("utf-8")

    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue:
        if value is None:
            return SchemaAndValue.NULL
        return _parse(value.decode("utf-8", errors="replace"))
