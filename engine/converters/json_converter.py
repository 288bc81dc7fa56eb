"""``org.apache.kafka.connect.json.JsonConverter``, byte-compatible with Kafka's output.

With ``schemas.enable=true`` (the default) every message is an envelope
``{"schema":<schema JSON>,"payload":<value>}``; schema JSON keys come in Kafka's order: ``type``,
then ``fields``/``items``/``keys``+``values``, then ``optional``, ``name``, ``version``, ``doc``,
``parameters``, ``default`` (a struct field's entry ends with ``"field":<name>``). Types are
named ``int8``..``int64``, ``float``, ``double``, ``boolean``, ``string``, ``bytes``, ``array``,
``map``, ``struct``.

Nulls, as in Kafka: ``from_connect_data(schema=None, value=None)`` returns ``None`` (a
tombstone) in both modes; a null value *with* a schema is ``{"schema":{...},"payload":null}``
(or the bytes ``null`` schemaless, or the default when ``replace.null.with.default``).
``to_connect_data(None)`` is ``SchemaAndValue.NULL``.

``schema.content`` (KIP-1054, Kafka 4.2): a schema JSON given in the config reads every message
with ``schemas.enable=true``: the whole message is the payload (an envelope's ``payload`` when the
message is one, its ``schema`` ignored). Writing is unchanged, so it serves sink connectors.

Schemaless output infers the JSON from the Python value (``bool``, ``int``, ``float``, ``str``,
``bytes`` as base64, ``list``/``tuple``, ``dict`` — an object when every key is a ``str``, else
an array of ``[key, value]`` pairs); schemaless input gives ``int`` for integers, ``float`` for
other numbers, ``dict`` for objects. Where Kafka silently coerces a JSON node of the wrong kind
(``textValue()`` of a number is ``null``, ``intValue()`` truncates) we raise ``DataException``.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import decimal
from collections.abc import Callable, Mapping
from typing import Any, Final

import orjson

from engine.api.config_def import ConfigDef
from engine.api.errors import ConfigException, DataException
from engine.converters import jackson
from engine.converters.base import CONVERTER_TYPE_CONFIG, BuiltinConverter, RawHeaders, parse_converter_config
from engine.converters.json_config import (
    DECIMAL_FORMAT_CONFIG,
    REPLACE_NULL_WITH_DEFAULT_CONFIG,
    SCHEMA_CONTENT_CONFIG,
    SCHEMAS_CACHE_SIZE_CONFIG,
    SCHEMAS_ENABLE_CONFIG,
    json_converter_config_def,
)
from engine.converters.json_envelope import Envelopes
from engine.data.builder import SchemaBuilder
from engine.data.cache import LRUCache
from engine.data.logical import Date, Decimal, Time, Timestamp
from engine.data.schema import Schema, SchemaAndValue, Type
from engine.data.values import INT_RANGES, Struct, class_name, infer_type

__all__ = ["JsonConverter"]

_TYPE_NAMES: Final[dict[Type, str]] = {
    Type.BOOLEAN: "boolean",
    Type.INT8: "int8",
    Type.INT16: "int16",
    Type.INT32: "int32",
    Type.INT64: "int64",
    Type.FLOAT32: "float",
    Type.FLOAT64: "double",
    Type.BYTES: "bytes",
    Type.STRING: "string",
    Type.ARRAY: "array",
    Type.MAP: "map",
    Type.STRUCT: "struct",
}
_TYPES_BY_NAME: Final = {v: k for k, v in _TYPE_NAMES.items()}

_ENVELOPE_ERROR: Final = (
    'JsonConverter with schemas.enable requires "schema" and "payload" fields and may not contain additional '
    "fields. If you are trying to deserialize plain JSON data, set schemas.enable=false in your converter "
    "configuration."
)


def _node_kind(node: Any) -> str:
    """Jackson's ``JsonNodeType`` name of a parsed node, for messages."""
    if node is None:
        return "NULL"
    if isinstance(node, bool):
        return "BOOLEAN"
    if isinstance(node, int | decimal.Decimal | float):
        return "NUMBER"
    if isinstance(node, str):
        return "STRING"
    return "ARRAY" if isinstance(node, list) else "OBJECT"


class JsonConverter(BuiltinConverter):
    """Converter and header converter; see the module docstring for the format."""

    def __init__(self) -> None:
        self.schemas_enabled = True
        self.decimal_numeric = False
        self.replace_null_with_default = True
        self.converter_type = "value"
        self.schema_content: Schema | None = None
        self._to_json_cache: LRUCache[Schema, bytes] = LRUCache(1000)
        self._to_connect_cache: LRUCache[bytes, Schema] = LRUCache(1000)
        self._envelopes = self._new_envelopes(1000)

    def _new_envelopes(self, size: int) -> Envelopes:
        """The compiled fast path (engine.converters.json_envelope), for this configuration."""
        return Envelopes(
            size,
            schemas_enabled=self.schemas_enabled,
            decimal_numeric=self.decimal_numeric,
            replace_null_with_default=self.replace_null_with_default,
            schema_json=self.schema_json,
            schema_of=lambda schema_json: self.as_connect_schema(jackson.loads(schema_json)),
        )

    def config(self) -> ConfigDef:
        return json_converter_config_def()

    def configure(self, configs: Mapping[str, Any], is_key: bool | None = None) -> None:
        parsed = parse_converter_config(json_converter_config_def(), configs, is_key)
        self.converter_type = parsed[CONVERTER_TYPE_CONFIG]
        self.schemas_enabled = parsed[SCHEMAS_ENABLE_CONFIG]
        self.decimal_numeric = parsed[DECIMAL_FORMAT_CONFIG].upper() == "NUMERIC"
        self.replace_null_with_default = parsed[REPLACE_NULL_WITH_DEFAULT_CONFIG]
        size = parsed[SCHEMAS_CACHE_SIZE_CONFIG]
        self._to_json_cache = LRUCache(size)
        self._to_connect_cache = LRUCache(size)
        self._envelopes = self._new_envelopes(size)
        self.schema_content = None
        content: str | None = parsed[SCHEMA_CONTENT_CONFIG]
        if content:
            self.schema_content = self._parse_schema_content(content)

    def _parse_schema_content(self, content: str) -> Schema:
        """The ``schema.content`` text as a Schema; a ``ConfigException`` naming the key when it is not one."""
        try:
            node = jackson.loads(content.encode("utf-8"))
            schema = self.as_connect_schema(node)
        except (ValueError, DataException) as exc:
            raise ConfigException(
                SCHEMA_CONTENT_CONFIG, content, f"not a JsonConverter schema: {exc}"
            ) from exc
        if schema is None:
            raise ConfigException(SCHEMA_CONTENT_CONFIG, content, "not a JsonConverter schema: null")
        return schema

    # -- Connect -> bytes ---------------------------------------------------------------------

    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: RawHeaders | None = None
    ) -> bytes | None:
        if schema is not None:
            compiled = self._envelopes.write(schema, value)
            if compiled is not None:
                return compiled
        elif value is None:
            return None
        else:
            fast = jackson.dumps_plain(value)
            if fast is not None:
                return b'{"schema":null,"payload":' + fast + b"}" if self.schemas_enabled else fast
        payload = self._to_json(schema, value)
        try:
            body = jackson.dumps_plain(payload)  # orjson when it writes what Jackson writes
            if body is None:
                body = jackson.dumps(payload)
            if not self.schemas_enabled:
                return body
            schema_json = b"null" if schema is None else self.schema_json(schema)
            return b'{"schema":' + schema_json + b',"payload":' + body + b"}"
        except UnicodeEncodeError as exc:
            raise DataException(
                "Converting Kafka Connect data to byte[] failed due to serialization error: "
            ) from exc

    def from_connect_header(
        self, topic: str, header_key: str, schema: Schema | None, value: Any
    ) -> bytes | None:
        return self.from_connect_data(topic, schema, value)

    def schema_json(self, schema: Schema) -> bytes:
        """The serialized schema JSON of ``schema`` (cached)."""
        cached = self._to_json_cache.get(schema)
        if cached is None:
            cached = jackson.dumps(self.as_json_schema(schema))
            self._to_json_cache.put(schema, cached)
        return cached

    def as_json_schema(self, schema: Schema) -> dict[str, Any]:
        """``asJsonSchema``: the schema as a JSON tree, keys in Kafka's order."""
        node: dict[str, Any] = {"type": _TYPE_NAMES[schema.type]}
        if schema.type is Type.ARRAY:
            node["items"] = self.as_json_schema(schema.value_schema)
        elif schema.type is Type.MAP:
            node["keys"] = self.as_json_schema(schema.key_schema)
            node["values"] = self.as_json_schema(schema.value_schema)
        elif schema.type is Type.STRUCT:
            node["fields"] = [{**self.as_json_schema(f.schema), "field": f.name} for f in schema.fields]
        node["optional"] = schema.optional
        if schema.name is not None:
            node["name"] = schema.name
        if schema.version is not None:
            node["version"] = schema.version
        if schema.doc is not None:
            node["doc"] = schema.doc
        if schema.parameters is not None:
            node["parameters"] = dict(schema.parameters)
        if schema.default_value is not None:
            node["default"] = self._to_json(schema, schema.default_value)
        return node

    def _to_json(self, schema: Schema | None, value: Any) -> Any:
        """``convertToJson``: a Connect value as a ``jackson`` tree."""
        if value is None:
            if schema is None:
                return None
            if schema.default_value is not None and self.replace_null_with_default:
                return self._to_json(schema, schema.default_value)
            if schema.optional:
                return None
            raise DataException(
                "Conversion error: null value for field that is required and has no default value"
            )
        if schema is not None and schema.name in _LOGICAL_TO_JSON:
            return _LOGICAL_TO_JSON[schema.name](self, schema, value)
        schema_type = infer_type(value) if schema is None else schema.type
        if schema_type is None:
            raise DataException(f"Java class {class_name(value)} does not have corresponding schema type.")
        if schema_type is Type.STRUCT:
            if not isinstance(value, Struct) or value.schema != schema:
                raise DataException("Mismatching schema.")
            return {
                f.name: self._to_json(f.schema, value.get_without_default(f)) for f in value.schema.fields
            }
        if schema_type is Type.ARRAY:
            _expect(value, (list, tuple), schema_type)
            element_schema = None if schema is None else schema.value_schema
            return [self._to_json(element_schema, v) for v in value]
        if schema_type is Type.MAP:
            _expect(value, (Mapping,), schema_type)
            return self._map_to_json(schema, value)
        return _primitive_to_json(schema_type, value)

    def _map_to_json(self, schema: Schema | None, value: Mapping[Any, Any]) -> Any:
        key_schema = None if schema is None else schema.key_schema
        value_schema = None if schema is None else schema.value_schema
        if key_schema is None:
            object_mode = all(isinstance(k, str) for k in value)
        else:
            object_mode = key_schema.type is Type.STRING
        if object_mode:
            return {
                _as_text(self._to_json(key_schema, k)): self._to_json(value_schema, v)
                for k, v in value.items()
            }
        return [[self._to_json(key_schema, k), self._to_json(value_schema, v)] for k, v in value.items()]

    # -- bytes -> Connect ---------------------------------------------------------------------

    def to_connect_data(
        self, topic: str, value: bytes | None, headers: RawHeaders | None = None
    ) -> SchemaAndValue:
        if value is None:
            return SchemaAndValue.NULL
        if self.schemas_enabled and self.schema_content is None:
            compiled = self._envelopes.read(value)
            if compiled is not None:
                return compiled
        elif not self.schemas_enabled:
            plain = jackson.loads_plain(value)
            if plain is not jackson.NOT_PLAIN:
                return SchemaAndValue(None, plain)
        try:
            node = jackson.loads(value)
        except ValueError as exc:
            raise DataException(
                "Converting byte[] to Kafka Connect data failed due to serialization error: "
            ) from exc
        if not self.schemas_enabled:
            return SchemaAndValue(None, self._to_connect(None, node))
        if self.schema_content is not None:
            if isinstance(node, dict) and node.keys() == {"schema", "payload"}:
                node = node["payload"]
            return SchemaAndValue(self.schema_content, self._to_connect(self.schema_content, node))
        if not isinstance(node, dict) or node.keys() != {"schema", "payload"}:
            raise DataException(_ENVELOPE_ERROR)
        schema = self.as_connect_schema(node["schema"])
        read = SchemaAndValue(schema, self._to_connect(schema, node["payload"]))
        self._envelopes.learn(value, schema)
        return read

    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue:
        return self.to_connect_data(topic, value)

    def as_connect_schema(self, node: Any) -> Schema | None:
        """``asConnectSchema``: a parsed schema JSON (``None`` for JSON null) as a Schema (cached)."""
        if node is None:
            return None
        if not isinstance(node, dict):
            raise DataException("Schema must contain 'type' field")
        try:  # the cache key: the node's JSON, by orjson (C) where it can; equal bytes are an equal schema
            key = orjson.dumps(node)
        except (TypeError, orjson.JSONEncodeError):
            key = jackson.dumps(node)
        cached = self._to_connect_cache.get(key)
        if cached is None:
            cached = self._build_schema(node)
            self._to_connect_cache.put(key, cached)
        return cached

    def _child_schema(self, node: Any, message: str) -> Schema:
        child = self.as_connect_schema(node)
        if child is None:
            raise DataException(message)
        return child

    def _build_schema(self, node: dict[str, Any]) -> Schema:
        type_name = node.get("type")
        if not isinstance(type_name, str):
            raise DataException("Schema must contain 'type' field")
        schema_type = _TYPES_BY_NAME.get(type_name)
        if schema_type is None:
            raise DataException(f"Unknown schema type: {type_name}")
        if schema_type is Type.ARRAY:
            builder = SchemaBuilder.array(
                self._child_schema(node.get("items"), "Array schema did not specify the element type")
            )
        elif schema_type is Type.MAP:
            if "keys" not in node:
                raise DataException("Map schema did not specify the key type")
            if "values" not in node:
                raise DataException("Map schema did not specify the value type")
            builder = SchemaBuilder.map(
                self.as_connect_schema(node["keys"]), self.as_connect_schema(node["values"])
            )
        else:
            builder = SchemaBuilder(schema_type)
        if schema_type is Type.STRUCT:
            fields = node.get("fields")
            if not isinstance(fields, list):
                raise DataException('Struct schema\'s "fields" argument is not an array.')
            for field in fields:
                name = field.get("field") if isinstance(field, dict) else None
                if not isinstance(name, str):
                    raise DataException("Struct schema's field name not specified properly")
                builder.field(name, self.as_connect_schema(field))
        if node.get("optional") is True:
            builder.optional()
        else:
            builder.required()
        if isinstance(node.get("name"), str):
            builder.name(node["name"])
        if isinstance(node.get("version"), int) and not isinstance(node["version"], bool):
            builder.version(node["version"])
        if isinstance(node.get("doc"), str):
            builder.doc(node["doc"])
        params = node.get("parameters")
        if isinstance(params, dict):
            for k, v in params.items():
                if not isinstance(v, str):
                    raise DataException("Schema parameters must have string values.")
                builder.parameter(k, v)
        if "default" in node:
            builder.default_value(self._to_connect(builder.build(), node["default"]))
        return builder.build()

    def _to_connect(self, schema: Schema | None, node: Any) -> Any:
        """``convertToConnect``: a parsed JSON node as a Connect value of ``schema``."""
        if schema is None:
            if node is None:
                return None
            if isinstance(node, decimal.Decimal):
                return float(node)
            if isinstance(node, list):
                return [self._to_connect(None, v) for v in node]
            if isinstance(node, dict):
                return {k: self._to_connect(None, v) for k, v in node.items()}
            return node  # bool, int, str
        if node is None:
            if schema.default_value is not None and self.replace_null_with_default:
                return schema.default_value
            if schema.optional:
                return None
            raise DataException(f"Invalid null value for required {schema.type} field")
        if schema.name in _LOGICAL_TO_CONNECT:
            return _LOGICAL_TO_CONNECT[schema.name](schema, node)
        if schema.type is Type.ARRAY:
            if not isinstance(node, list):
                raise DataException(f"Invalid type for ARRAY: {_node_kind(node)}")
            return [self._to_connect(schema.value_schema, v) for v in node]
        if schema.type is Type.MAP:
            return self._map_to_connect(schema, node)
        if schema.type is Type.STRUCT:
            if not isinstance(node, dict):
                raise DataException(
                    f"Structs should be encoded as JSON objects, but found {_node_kind(node)}"
                )
            result = Struct(schema)
            for f in schema.fields:
                result.put(f, self._to_connect(f.schema, node.get(f.name)))
            return result
        return _primitive_to_connect(schema.type, node)

    def _map_to_connect(self, schema: Schema, node: Any) -> dict[Any, Any]:
        key_schema, value_schema = schema.key_schema, schema.value_schema
        if key_schema.type is Type.STRING:
            if not isinstance(node, dict):
                raise DataException(
                    f"Maps with string fields should be encoded as JSON objects, but found {_node_kind(node)}"
                )
            return {k: self._to_connect(value_schema, v) for k, v in node.items()}
        if not isinstance(node, list):
            raise DataException(
                f"Maps with non-string fields should be encoded as JSON array of tuples, but found {_node_kind(node)}"
            )
        result: dict[Any, Any] = {}
        for entry in node:
            if not isinstance(entry, list):
                raise DataException(f"Found invalid map entry instead of array tuple: {_node_kind(entry)}")
            if len(entry) != 2:
                raise DataException(f"Found invalid map entry, expected length 2 but found :{len(entry)}")
            key = self._to_connect(key_schema, entry[0])
            try:
                result[key] = self._to_connect(value_schema, entry[1])
            except TypeError:
                raise DataException(
                    f"Map key of type {key_schema.type} cannot be used in a Python dict"
                ) from None
        return result


# -- primitives ---------------------------------------------------------------------------------


def _expect(value: Any, types: tuple[type, ...], schema_type: Type) -> None:
    if (isinstance(value, bool) and bool not in types) or not isinstance(value, types):
        raise DataException(f"Invalid type for {schema_type}: {class_name(value)}")


def _as_text(node: Any) -> str:
    """Jackson's ``asText()`` of a map key node."""
    if isinstance(node, str):
        return node
    return jackson.dumps(node).decode("utf-8")


def _primitive_to_json(schema_type: Type, value: Any) -> Any:
    if schema_type in INT_RANGES:
        _expect(value, (int,), schema_type)
        low, high = INT_RANGES[schema_type]
        if not low <= value <= high:
            raise DataException(f"Invalid value {value} for {schema_type}: out of range")
        return value
    if schema_type is Type.FLOAT32:
        _expect(value, (float,), schema_type)
        return jackson.Float32(value)
    if schema_type is Type.FLOAT64:
        _expect(value, (float,), schema_type)
        return float(value)
    if schema_type is Type.BOOLEAN:
        _expect(value, (bool,), schema_type)
        return value
    if schema_type is Type.STRING:
        _expect(value, (str,), schema_type)
        return value
    if not isinstance(value, bytes | bytearray | memoryview):
        raise DataException(f"Invalid type for bytes type: {class_name(value)}")
    return bytes(value)


def _decode_base64(node: Any, message: str) -> bytes:
    if not isinstance(node, str):
        raise DataException(message)
    try:
        return base64.b64decode(node, validate=True)
    except binascii.Error as exc:
        raise DataException(message) from exc


def _primitive_to_connect(schema_type: Type, node: Any) -> Any:
    if schema_type in INT_RANGES:
        if isinstance(node, bool) or not isinstance(node, int):
            raise DataException(f"Invalid type for {schema_type}: {_node_kind(node)}")
        low, high = INT_RANGES[schema_type]
        if not low <= node <= high:
            raise DataException(f"Invalid value {node} for {schema_type}: out of range")
        return node
    if schema_type in (Type.FLOAT32, Type.FLOAT64):
        if isinstance(node, bool) or not isinstance(node, int | decimal.Decimal):
            raise DataException(f"Invalid type for {schema_type}: {_node_kind(node)}")
        return jackson.round_float32(float(node)) if schema_type is Type.FLOAT32 else float(node)
    if schema_type is Type.BOOLEAN:
        if not isinstance(node, bool):
            raise DataException(f"Invalid type for {schema_type}: {_node_kind(node)}")
        return node
    if schema_type is Type.STRING:
        if not isinstance(node, str):
            raise DataException(f"Invalid type for {schema_type}: {_node_kind(node)}")
        return node
    return _decode_base64(node, "Invalid bytes field")


# -- logical types ------------------------------------------------------------------------------


def _decimal_to_json(converter: JsonConverter, schema: Schema, value: Any) -> Any:
    if not isinstance(value, decimal.Decimal):
        raise DataException(f"Invalid type for Decimal, expected Decimal but was {class_name(value)}")
    if converter.decimal_numeric:
        return value
    return Decimal.from_logical(schema, value)


def _date_to_json(converter: JsonConverter, schema: Schema, value: Any) -> Any:
    if not isinstance(value, dt.date):
        raise DataException(f"Invalid type for Date, expected date but was {class_name(value)}")
    return Date.from_logical(schema, value)


def _time_to_json(converter: JsonConverter, schema: Schema, value: Any) -> Any:
    if not isinstance(value, dt.time):
        raise DataException(f"Invalid type for Time, expected time but was {class_name(value)}")
    return Time.from_logical(schema, value)


def _timestamp_to_json(converter: JsonConverter, schema: Schema, value: Any) -> Any:
    if not isinstance(value, dt.datetime):
        raise DataException(f"Invalid type for Timestamp, expected datetime but was {class_name(value)}")
    return Timestamp.from_logical(schema, value)


def _decimal_to_connect(schema: Schema, node: Any) -> Any:
    if isinstance(node, bool):
        raise DataException(
            f"Invalid type for Decimal, underlying representation should be numeric or bytes but was {_node_kind(node)}"
        )
    if isinstance(node, int | decimal.Decimal):
        return decimal.Decimal(node)
    if isinstance(node, str):
        return Decimal.to_logical(schema, _decode_base64(node, "Invalid bytes for Decimal field"))
    raise DataException(
        f"Invalid type for Decimal, underlying representation should be numeric or bytes but was {_node_kind(node)}"
    )


def _int_node(node: Any, what: str, kind: str) -> int:
    if isinstance(node, bool) or not isinstance(node, int):
        raise DataException(
            f"Invalid type for {what}, underlying representation should be {kind} but was {_node_kind(node)}"
        )
    return node


_LOGICAL_TO_JSON: Final[dict[str | None, Callable[[JsonConverter, Schema, Any], Any]]] = {
    Decimal.LOGICAL_NAME: _decimal_to_json,
    Date.LOGICAL_NAME: _date_to_json,
    Time.LOGICAL_NAME: _time_to_json,
    Timestamp.LOGICAL_NAME: _timestamp_to_json,
}

_LOGICAL_TO_CONNECT: Final[dict[str | None, Callable[[Schema, Any], Any]]] = {
    Decimal.LOGICAL_NAME: _decimal_to_connect,
    Date.LOGICAL_NAME: lambda s, n: Date.to_logical(s, _int_node(n, "Date", "integer")),
    Time.LOGICAL_NAME: lambda s, n: Time.to_logical(s, _int_node(n, "Time", "integer")),
    Timestamp.LOGICAL_NAME: lambda s, n: Timestamp.to_logical(s, _int_node(n, "Timestamp", "integer")),
}
