"""Connect schemas and values <-> JSON Schema (draft 7) and JSON, as Confluent's ``JsonSchemaData`` maps them.

Connect -> JSON Schema: a struct is an ``object`` titled with its name, its fields ``properties``
(each with ``connect.index``), the non-optional ones ``required``, ``additionalProperties: false``;
an optional schema is ``oneOf: [{"type": "null"}, S]``; integers are ``integer`` and floats
``number`` with ``connect.type`` (``int8``..``int64``, ``float32``/``float64``), bytes a base64
``string`` with ``connect.type: bytes``; maps with string keys an ``object`` with
``additionalProperties``, others an array of ``{key, value}`` objects, both ``connect.type: map``;
Decimal a ``number``, Date/Time ``integer`` (``int32``), Timestamp ``integer`` (``int64``), each titled
with its logical name; a string with ``io.confluent.connect.json.Enum.<symbol>`` parameters an
``enum``. Names go in ``title``, docs in ``description``, versions and parameters in
``connect.version``/``connect.parameters``, defaults in ``default``.

JSON Schema -> Connect is the reverse; a schema written elsewhere without ``connect.type`` reads
``integer`` as INT64, ``number`` as FLOAT64, a property not ``required`` as optional.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
from collections.abc import Callable, Mapping
from typing import Any, Final

from engine.api.errors import DataException
from engine.data.builder import SchemaBuilder
from engine.data.logical import Date, Decimal, Time, Timestamp
from engine.data.schema import Schema, Type
from engine.data.values import Struct

__all__ = ["JsonSchemaData"]

CONNECT_TYPE: Final = "connect.type"
CONNECT_INDEX: Final = "connect.index"
CONNECT_VERSION: Final = "connect.version"
CONNECT_PARAMETERS: Final = "connect.parameters"
ENUM_PARAM: Final = "io.confluent.connect.json.Enum"
_LOGICAL: Final = {Decimal.LOGICAL_NAME, Date.LOGICAL_NAME, Time.LOGICAL_NAME, Timestamp.LOGICAL_NAME}
_NUMBERS: Final[dict[Type, tuple[str, str]]] = {
    Type.INT8: ("integer", "int8"),
    Type.INT16: ("integer", "int16"),
    Type.INT32: ("integer", "int32"),
    Type.INT64: ("integer", "int64"),
    Type.FLOAT32: ("number", "float32"),
    Type.FLOAT64: ("number", "float64"),
}
_BY_CONNECT_TYPE: Final[dict[str, Callable[[], SchemaBuilder]]] = {
    "int8": SchemaBuilder.int8,
    "int16": SchemaBuilder.int16,
    "int32": SchemaBuilder.int32,
    "int64": SchemaBuilder.int64,
    "float32": SchemaBuilder.float32,
    "float64": SchemaBuilder.float64,
    "bytes": SchemaBuilder.bytes,
}
_EPOCH: Final = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)

Convert = Callable[[Any], Any]


def _identity(value: Any) -> Any:
    return value


class JsonSchemaData:
    """The mapping, with value converters compiled once per schema."""

    # -- Connect -> JSON Schema --------------------------------------------------------------------------

    def from_connect_schema(self, schema: Schema) -> dict[str, Any]:
        out = self._from_connect(schema)
        return {"$schema": "http://json-schema.org/draft-07/schema#", **out}

    def _from_connect(self, schema: Schema, index: int | None = None) -> dict[str, Any]:
        base = self._base(schema)
        if schema.optional:
            base = {"oneOf": [{"type": "null"}, base]}
        if index is not None:
            base[CONNECT_INDEX] = index
        if schema.default_value is not None:
            base["default"] = self.to_json(schema)(schema.default_value)
        return base

    def _base(self, schema: Schema) -> dict[str, Any]:
        kind, name = schema.type, schema.name
        out: dict[str, Any]
        if name == Decimal.LOGICAL_NAME:
            out = {"type": "number", CONNECT_TYPE: "bytes"}
        elif name in (Date.LOGICAL_NAME, Time.LOGICAL_NAME):
            out = {"type": "integer", CONNECT_TYPE: "int32"}
        elif name == Timestamp.LOGICAL_NAME:
            out = {"type": "integer", CONNECT_TYPE: "int64"}
        elif kind in _NUMBERS:
            json_type, connect_type = _NUMBERS[kind]
            out = {"type": json_type, CONNECT_TYPE: connect_type}
        elif kind is Type.BOOLEAN:
            out = {"type": "boolean"}
        elif kind is Type.STRING:
            out = {"type": "string"}
            prefix = ENUM_PARAM + "."
            symbols = [k[len(prefix) :] for k in (schema.parameters or {}) if k.startswith(prefix)]
            if symbols:
                out["enum"] = symbols
        elif kind is Type.BYTES:
            out = {"type": "string", CONNECT_TYPE: "bytes"}
        elif kind is Type.ARRAY:
            out = {"type": "array", "items": self._from_connect(schema.value_schema)}
        elif kind is Type.MAP:
            key, value = schema.key_schema, schema.value_schema
            if key.type is Type.STRING and not key.optional:
                out = {
                    "type": "object",
                    "additionalProperties": self._from_connect(value),
                    CONNECT_TYPE: "map",
                }
            else:
                entry = {
                    "type": "object",
                    "properties": {"key": self._from_connect(key, 0), "value": self._from_connect(value, 1)},
                    "required": [n for n, s in (("key", key), ("value", value)) if not s.optional],
                    "additionalProperties": False,
                }
                out = {"type": "array", "items": entry, CONNECT_TYPE: "map"}
        else:
            properties = {f.name: self._from_connect(f.schema, f.index) for f in schema.fields}
            out = {"type": "object", "properties": properties}
            required = [f.name for f in schema.fields if not f.schema.optional]
            if required:
                out["required"] = required
            out["additionalProperties"] = False
        if name is not None:
            out["title"] = name
        if schema.doc is not None:
            out["description"] = schema.doc
        if schema.version is not None:
            out[CONNECT_VERSION] = schema.version
        if schema.parameters:
            out[CONNECT_PARAMETERS] = dict(schema.parameters)
        return out

    # -- Connect -> JSON value ---------------------------------------------------------------------------

    def to_json(self, schema: Schema) -> Convert:
        kind, name = schema.type, schema.name
        if name == Decimal.LOGICAL_NAME:
            return _identity  # jackson.dumps writes a Decimal as a bare number
        if name == Date.LOGICAL_NAME:
            return lambda v: None if v is None else Date.from_logical(schema, v)
        if name == Time.LOGICAL_NAME:
            return lambda v: None if v is None else Time.from_logical(schema, v)
        if name == Timestamp.LOGICAL_NAME:
            return lambda v: None if v is None else Timestamp.from_logical(schema, v)
        if kind is Type.BYTES:
            return lambda v: None if v is None else base64.b64encode(bytes(v)).decode()
        if kind.is_primitive:
            return _identity
        if kind is Type.ARRAY:
            item = self.to_json(schema.value_schema)
            return _identity if item is _identity else (lambda v: None if v is None else [item(x) for x in v])
        if kind is Type.MAP:
            key_fn, value_fn = self.to_json(schema.key_schema), self.to_json(schema.value_schema)
            if schema.key_schema.type is Type.STRING and not schema.key_schema.optional:
                return lambda v: None if v is None else {k: value_fn(x) for k, x in v.items()}
            return lambda v: (
                None if v is None else [{"key": key_fn(k), "value": value_fn(x)} for k, x in v.items()]
            )
        fields = [(f.name, self.to_json(f.schema)) for f in schema.fields]

        def struct(value: Any) -> Any:
            if value is None:
                return None
            if not isinstance(value, Struct):
                raise DataException(
                    f"Expected a Struct for schema {schema.name or 'struct'}, got {type(value).__name__}"
                )
            return {name: fn(value.get(name)) for name, fn in fields}

        return struct

    # -- JSON Schema -> Connect --------------------------------------------------------------------------

    def to_connect_schema(self, json_schema: Mapping[str, Any]) -> Schema:
        return self._to_connect(json_schema, optional=False).build()

    def _to_connect(self, node: Mapping[str, Any], *, optional: bool) -> SchemaBuilder:
        for union in ("oneOf", "anyOf"):
            if union in node:
                branches = [b for b in node[union] if b.get("type") != "null"]
                if len(branches) != 1:
                    raise DataException(f"{union} with {len(branches)} non-null branches is not supported")
                inner = self._to_connect(branches[0], optional=True)
                self._decorate(inner, node, skip_title=True)
                return inner
        kind = node.get("type")
        if isinstance(kind, list):
            others = [t for t in kind if t != "null"]
            if len(others) != 1:
                raise DataException(f"type {kind} is not supported")
            return self._to_connect({**node, "type": others[0]}, optional=optional or "null" in kind)
        connect_type = node.get(CONNECT_TYPE)
        title = node.get("title")
        builder: SchemaBuilder
        if title == Decimal.LOGICAL_NAME:
            builder = Decimal.builder(int((node.get(CONNECT_PARAMETERS) or {}).get("scale", 0)))
        elif title == Date.LOGICAL_NAME:
            builder = Date.builder()
        elif title == Time.LOGICAL_NAME:
            builder = Time.builder()
        elif title == Timestamp.LOGICAL_NAME:
            builder = Timestamp.builder()
        elif connect_type in _BY_CONNECT_TYPE and connect_type != "map":
            builder = _BY_CONNECT_TYPE[connect_type]()
        elif kind == "integer":
            builder = SchemaBuilder.int64()
        elif kind == "number":
            builder = SchemaBuilder.float64()
        elif kind == "boolean":
            builder = SchemaBuilder.bool()
        elif kind == "string" or ("enum" in node and kind is None):
            builder = SchemaBuilder.string()
            for symbol in node.get("enum") or ():
                builder.parameter(f"{ENUM_PARAM}.{symbol}", str(symbol))
        elif kind == "array" and connect_type == "map":
            props = node["items"]["properties"]
            required = set(node["items"].get("required") or ())
            builder = SchemaBuilder.map(
                self._property(props["key"], "key" in required),
                self._property(props["value"], "value" in required),
            )
        elif kind == "array":
            builder = SchemaBuilder.array(self._to_connect(node.get("items") or {}, optional=False).build())
        elif kind == "object" and (
            connect_type == "map"
            or ("properties" not in node and isinstance(node.get("additionalProperties"), dict))
        ):
            builder = SchemaBuilder.map(
                Schema.STRING_SCHEMA, self._to_connect(node["additionalProperties"], optional=False).build()
            )
        elif kind == "object":
            builder = SchemaBuilder.struct()
            required = set(node.get("required") or ())
            props = node.get("properties") or {}
            ordered = sorted(props.items(), key=lambda item: item[1].get(CONNECT_INDEX, 1 << 30))
            for name, sub in ordered:
                builder.field(name, self._property(sub, name in required))
        else:
            raise DataException(f"Unsupported JSON Schema type: {kind!r}")
        if optional:
            builder.optional()
        self._decorate(builder, node, skip_title=False)
        return builder

    def _property(self, node: Mapping[str, Any], required: bool) -> Schema:
        return self._to_connect(node, optional=not required).build()

    def _decorate(self, builder: SchemaBuilder, node: Mapping[str, Any], *, skip_title: bool) -> None:
        built = builder.build()
        title = node.get("title")
        if title is not None and not skip_title and built.name is None and title not in _LOGICAL:
            builder.name(title)
        if node.get("description") is not None and built.doc is None:
            builder.doc(node["description"])
        if isinstance(node.get(CONNECT_VERSION), int) and built.version is None:
            builder.version(node[CONNECT_VERSION])
        if isinstance(node.get(CONNECT_PARAMETERS), dict):
            for key, value in node[CONNECT_PARAMETERS].items():
                if (built.parameters or {}).get(key) != value:
                    builder.parameter(key, value)
        if node.get("default") is not None and built.default_value is None:
            schema = builder.build()
            builder.default_value(self.to_connect(schema)(node["default"]))

    # -- JSON value -> Connect ---------------------------------------------------------------------------

    def to_connect(self, schema: Schema) -> Convert:
        kind, name = schema.type, schema.name
        if name == Decimal.LOGICAL_NAME:
            scale = Decimal.scale(schema)
            quantum = decimal.Decimal(1).scaleb(-scale)
            return lambda v: None if v is None else decimal.Decimal(str(v)).quantize(quantum)
        if name == Date.LOGICAL_NAME:
            return lambda v: None if v is None else Date.to_logical(schema, int(v))
        if name == Time.LOGICAL_NAME:
            return lambda v: None if v is None else Time.to_logical(schema, int(v))
        if name == Timestamp.LOGICAL_NAME:
            return lambda v: None if v is None else Timestamp.to_logical(schema, int(v))
        if kind is Type.BYTES:
            return lambda v: None if v is None else base64.b64decode(v)
        if kind in (Type.FLOAT32, Type.FLOAT64):
            return lambda v: None if v is None else float(v)
        if kind in (Type.INT8, Type.INT16, Type.INT32, Type.INT64):
            return lambda v: None if v is None else _int(v)
        if kind.is_primitive:
            return _identity
        if kind is Type.ARRAY:
            item = self.to_connect(schema.value_schema)
            return lambda v: None if v is None else [item(x) for x in v]
        if kind is Type.MAP:
            key_fn, value_fn = self.to_connect(schema.key_schema), self.to_connect(schema.value_schema)
            if schema.key_schema.type is Type.STRING and not schema.key_schema.optional:
                return lambda v: None if v is None else {k: value_fn(x) for k, x in v.items()}
            return lambda v: (
                None if v is None else {key_fn(e.get("key")): value_fn(e.get("value")) for e in v}
            )
        fields = [(f, self.to_connect(f.schema)) for f in schema.fields]

        def struct(value: Any) -> Any:
            if value is None:
                return None
            if not isinstance(value, dict):
                raise DataException(
                    f"Expected a JSON object for struct {schema.name or ''}, got {type(value).__name__}"
                )
            out = Struct(schema)
            for field, fn in fields:
                if field.name in value:
                    out.put(field, fn(value[field.name]))
            return out

        return struct


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise DataException(f"Expected an integer, got {type(value).__name__}")
    if isinstance(value, float) and not value.is_integer():
        raise DataException(f"Expected an integer, got {value}")
    return int(value)
