"""JsonConverter's per-schema codecs: a function compiled once per Schema that turns a value of that
schema into an orjson tree (writing), and one that turns a parse of a payload (msgspec's) into the
Connect value (reading).

Why: the generic walks (``JsonConverter._to_json``/``_to_connect``) ask the schema every question
again for every record (its logical name, its type, each field's schema) and then check the tree
once more before orjson may write it; a Struct of 6 fields cost 12 us to write and 24 us to read.
Compiled, a Struct is one generated function with a line per field (as ``ConnectRecord.new_record``
is: no loop, no attribute looked up by name) and one orjson call.

Exactness by construction: a codec takes only the values whose bytes (or whose value) it knows to be
Jackson's, exactly typed (``type(v) is int``, not a subclass), and raises ``Fallback`` for anything
else: a null without a default, a number orjson writes unlike Java, an error case. The converter then
runs the generic path on that record, which writes the same bytes or raises Kafka's error. Doubles
outside ``[1e-3, 1e7)``, floats and numeric decimals go in as ``orjson.Fragment``: Jackson's text
from ``engine.converters.jackson``. Strings with control characters are caught after writing (their
escapes differ in case; see ``has_control_escape``).
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import decimal
from collections.abc import Callable
from typing import Any, Final

import orjson

from engine.converters import jackson
from engine.data.logical import Date, Decimal, Time, Timestamp
from engine.data.schema import Schema, Type
from engine.data.values import INT_RANGES, Struct

__all__ = ["Codec", "Fallback", "compile_reader", "compile_writer", "has_control_escape"]

Codec = Callable[[Any], Any]


class Fallback(Exception):
    """This value is not one the compiled codec writes or reads exactly; use the generic path."""


_FALLBACK: Final = Fallback()  # raised as is: no traceback built per record worth keeping


def _boolean(value: Any) -> Any:
    """A BOOLEAN as it is, both ways: anything else to the generic path."""
    if value is True or value is False:
        return value
    raise _FALLBACK


def _string(value: Any) -> Any:
    """A STRING as it is, both ways: anything else (a subclass too) to the generic path."""
    if type(value) is str:
        return value
    raise _FALLBACK


_B64: Final = base64.b64encode
_BYTES_TYPES: Final = (bytes, bytearray, memoryview)


def has_control_escape(body: bytes) -> bool:
    """Whether orjson's output may hold a control-character escape (``\\u001f``, Jackson ``\\u001F``).

    A plain ``in`` over the bytes: a backslash followed by ``u00`` in a string is written ``\\\\u00``
    and matches too, which only sends that record the generic way.
    """
    return b"\\u00" in body


# the logical types on integers: their conversion, and (writing) the exact class of their values
_LOGICAL_WRITE: Final[dict[str, tuple[Callable[[Schema, Any], int], type]]] = {
    Date.LOGICAL_NAME: (Date.from_logical, dt.date),
    Time.LOGICAL_NAME: (Time.from_logical, dt.time),
    Timestamp.LOGICAL_NAME: (Timestamp.from_logical, dt.datetime),
}
_LOGICAL_READ: Final[dict[str, Callable[[Schema, int], Any]]] = {
    Date.LOGICAL_NAME: Date.to_logical,
    Time.LOGICAL_NAME: Time.to_logical,
    Timestamp.LOGICAL_NAME: Timestamp.to_logical,
}

# -- writing: Connect value -> orjson tree -------------------------------------------------------


def _double(v: float) -> Any:
    """A double as orjson writes it where that is Java's ``Double.toString``, else Jackson's text."""
    if v == 0.0 or 1e-3 <= abs(v) < 1e7:
        return v
    return orjson.Fragment(jackson.dumps(v))


def _non_null_writer(schema: Schema, decimal_numeric: bool, replace_null: bool) -> Codec:
    name, kind = schema.name, schema.type
    if name == Decimal.LOGICAL_NAME:

        def decimal_(v: Any) -> Any:
            if type(v) is not decimal.Decimal:
                raise _FALLBACK
            if decimal_numeric:
                return orjson.Fragment(jackson.dumps(v))
            return _B64(Decimal.from_logical(schema, v)).decode("ascii")

        return decimal_
    if name in _LOGICAL_WRITE:
        from_logical, value_type = _LOGICAL_WRITE[name]

        def logical_(v: Any) -> Any:
            if type(v) is not value_type:
                raise _FALLBACK
            return from_logical(schema, v)

        return logical_
    if kind in INT_RANGES:
        low, high = INT_RANGES[kind]

        def int_(v: Any) -> Any:
            if type(v) is int and low <= v <= high:
                return v
            raise _FALLBACK

        return int_
    if kind is Type.FLOAT64:

        def double(v: Any) -> Any:
            if type(v) is float:
                return _double(v)
            raise _FALLBACK

        return double
    if kind is Type.FLOAT32:

        def float_(v: Any) -> Any:
            if type(v) is float:
                return orjson.Fragment(jackson.dumps(jackson.Float32(v)))
            raise _FALLBACK

        return float_
    if kind is Type.BOOLEAN:
        return _boolean
    if kind is Type.STRING:
        return _string
    if kind is Type.BYTES:

        def bytes_(v: Any) -> Any:
            if type(v) in _BYTES_TYPES:
                return _B64(bytes(v)).decode("ascii")
            raise _FALLBACK

        return bytes_
    if kind is Type.ARRAY:
        element = compile_writer(schema.value_schema, decimal_numeric, replace_null)

        def array(v: Any) -> Any:
            if type(v) is list or type(v) is tuple:
                return [element(e) for e in v]
            raise _FALLBACK

        return array
    if kind is Type.MAP:
        return _map_writer(schema, decimal_numeric, replace_null)
    return _struct_writer(schema, decimal_numeric, replace_null)


def _map_writer(schema: Schema, decimal_numeric: bool, replace_null: bool) -> Codec:
    key = compile_writer(schema.key_schema, decimal_numeric, replace_null)
    value = compile_writer(schema.value_schema, decimal_numeric, replace_null)
    if schema.key_schema.type is Type.STRING:

        def object_(v: Any) -> Any:
            if type(v) is not dict:
                raise _FALLBACK
            out = {}
            for k, x in v.items():
                if type(k) is not str:  # a null key is written "null" (asText): the generic path
                    raise _FALLBACK
                out[k] = value(x)
            return out

        return object_

    def pairs(v: Any) -> Any:
        if type(v) is not dict:
            raise _FALLBACK
        return [[key(k), value(x)] for k, x in v.items()]

    return pairs


# A struct field's fast check, inline in the generated function: the value passes as it is when this
# holds; otherwise the field's own writer runs (a null, a default, a Fragment, or Fallback).
_INLINE_CHECK: Final[dict[Type, str]] = {
    Type.STRING: "type({v}) is str",
    Type.BOOLEAN: "{v} is True or {v} is False",
    Type.FLOAT64: "type({v}) is float and ({v} == 0.0 or 1e-3 <= abs({v}) < 1e7)",
    **{t: f"type({{v}}) is int and {low} <= {{v}} <= {high}" for t, (low, high) in INT_RANGES.items()},
}


def _generated(name: str, lines: list[str], scope: dict[str, Any]) -> Codec:
    exec("\n".join(lines), scope)  # source built from field indexes and repr()'d names only
    codec: Codec = scope[name]
    return codec


def _struct_writer(schema: Schema, decimal_numeric: bool, replace_null: bool) -> Codec:
    """``def write(v)``: one unpacking of the Struct's values, one line per field, one dict."""
    fields = schema.fields
    scope: dict[str, Any] = {"Struct": Struct, "schema": schema, "_FALLBACK": _FALLBACK}
    names = [f"a{i}" for i in range(len(fields))]
    lines = [
        "def write(v):",
        "    if type(v) is not Struct or (v.schema is not schema and v.schema != schema):",
        "        raise _FALLBACK",
    ]
    if fields:
        lines.append(f"    {', '.join(names)}, = v._values")
    for i, f in enumerate(fields):
        scope[f"w{i}"] = compile_writer(f.schema, decimal_numeric, replace_null)
        check = _INLINE_CHECK.get(f.schema.type) if f.schema.name is None else None
        if check is None:
            lines.append(f"    a{i} = w{i}(a{i})")
        else:
            lines.append(f"    if not ({check.format(v=f'a{i}')}):")
            lines.append(f"        a{i} = w{i}(a{i})")
    lines.append("    return {" + ", ".join(f"{f.name!r}: a{i}" for i, f in enumerate(fields)) + "}")
    return _generated("write", lines, scope)


def compile_writer(schema: Schema, decimal_numeric: bool, replace_null: bool) -> Codec:
    """A function from a value of ``schema`` to the orjson tree of Jackson's payload; ``Fallback`` when
    it cannot tell (``_to_json``'s null rule: the default, written as a value, when
    ``replace.null.with.default``; null when optional; otherwise the generic path raises)."""
    non_null = _non_null_writer(schema, decimal_numeric, replace_null)
    default = schema.default_value
    if default is not None and replace_null:

        def with_default(v: Any) -> Any:
            return non_null(default if v is None else v)

        return with_default
    if schema.optional:

        def optional(v: Any) -> Any:
            return None if v is None else non_null(v)

        return optional
    return non_null  # required: each non-null writer already falls back on None (not of its type)


# -- reading: orjson tree -> Connect value -------------------------------------------------------


def _base64(node: Any) -> bytes:
    if type(node) is not str:
        raise _FALLBACK
    try:
        return base64.b64decode(node, validate=True)
    except binascii.Error:
        raise _FALLBACK from None


def _non_null_reader(schema: Schema, replace_null: bool) -> Codec:
    name, kind = schema.name, schema.type
    if name == Decimal.LOGICAL_NAME:

        def decimal_(n: Any) -> Any:
            if type(n) is int:
                return decimal.Decimal(n)
            if type(n) is str:  # a float is not read here: orjson's double is not the exact BigDecimal
                return Decimal.to_logical(schema, _base64(n))
            raise _FALLBACK

        return decimal_
    if name in _LOGICAL_READ:
        to_logical = _LOGICAL_READ[name]

        def logical_(n: Any) -> Any:
            if type(n) is int:
                return to_logical(schema, n)
            raise _FALLBACK

        return logical_
    if kind in INT_RANGES:
        low, high = INT_RANGES[kind]

        def int_(n: Any) -> Any:
            if type(n) is int and low <= n <= high:
                return n
            raise _FALLBACK

        return int_
    if kind is Type.FLOAT64 or kind is Type.FLOAT32:
        narrow = jackson.round_float32 if kind is Type.FLOAT32 else float

        def number(n: Any) -> Any:
            if type(n) is float or type(n) is int:
                return narrow(n)
            raise _FALLBACK

        return number
    if kind is Type.BOOLEAN:
        return _boolean
    if kind is Type.STRING:
        return _string
    if kind is Type.BYTES:
        return _base64
    if kind is Type.ARRAY:
        element = compile_reader(schema.value_schema, replace_null)

        def array(n: Any) -> Any:
            if type(n) is list:
                return [element(e) for e in n]
            raise _FALLBACK

        return array
    if kind is Type.MAP:
        return _map_reader(schema, replace_null)
    return _struct_reader(schema, replace_null)


def _map_reader(schema: Schema, replace_null: bool) -> Codec:
    key = compile_reader(schema.key_schema, replace_null)
    value = compile_reader(schema.value_schema, replace_null)
    if schema.key_schema.type is Type.STRING:

        def object_(n: Any) -> Any:
            if type(n) is not dict:
                raise _FALLBACK
            return {k: value(x) for k, x in n.items()}

        return object_

    def pairs(n: Any) -> Any:
        if type(n) is not list:
            raise _FALLBACK
        out: dict[Any, Any] = {}
        for entry in n:
            if type(entry) is not list or len(entry) != 2:
                raise _FALLBACK
            out[key(entry[0])] = value(entry[1])  # an unhashable key: TypeError, the generic path's error
        return out

    return pairs


_READ_CHECK: Final[dict[Type, str]] = {
    Type.STRING: "type({v}) is str",
    Type.BOOLEAN: "{v} is True or {v} is False",
    Type.FLOAT64: "type({v}) is float",
    **{t: f"type({{v}}) is int and {low} <= {{v}} <= {high}" for t, (low, high) in INT_RANGES.items()},
}


def _struct_reader(schema: Schema, replace_null: bool) -> Codec:
    """``def read(n)``: one ``get`` per field, one line each, the Struct made as ``Struct.from_decoded``
    makes it, inline (that call's checks hold by construction here and cost 0.35 us a record), and
    without re-validating: every value passed its field's check, which is what ``Struct.put`` checks."""
    fields = schema.fields
    scope: dict[str, Any] = {
        "Struct": Struct,
        "_new": object.__new__,
        "schema": schema,
        "_FALLBACK": _FALLBACK,
    }
    lines = ["def read(n):", "    if type(n) is not dict:", "        raise _FALLBACK", "    g = n.get"]
    for i, f in enumerate(fields):
        scope[f"r{i}"] = compile_reader(f.schema, replace_null)
        lines.append(f"    a{i} = g({f.name!r})")
        check = _READ_CHECK.get(f.schema.type) if f.schema.name is None else None
        if check is None:
            lines.append(f"    a{i} = r{i}(a{i})")
        else:
            lines.append(f"    if not ({check.format(v=f'a{i}')}):")
            lines.append(f"        a{i} = r{i}(a{i})")
    lines.append("    s = _new(Struct)")
    lines.append("    s.schema = schema")
    lines.append("    s._values = [" + ", ".join(f"a{i}" for i in range(len(fields))) + "]")
    lines.append("    return s")
    return _generated("read", lines, scope)


def compile_reader(schema: Schema, replace_null: bool) -> Codec:
    """A function from orjson's parse of a payload to the Connect value of ``schema``, as
    ``JsonConverter._to_connect`` reads Jackson's parse of it; ``Fallback`` when it cannot tell."""
    non_null = _non_null_reader(schema, replace_null)
    default = schema.default_value
    if default is not None and replace_null:

        def with_default(n: Any) -> Any:
            return default if n is None else non_null(n)

        return with_default
    if schema.optional:

        def optional(n: Any) -> Any:
            return None if n is None else non_null(n)

        return optional
    return non_null  # required: each non-null reader already falls back on None (not of its type)
