"""Connect schemas and values <-> Avro, as Confluent's ``AvroData`` maps them.

Connect -> Avro: INT8/INT16 are ``int`` with ``connect.type``; an optional schema is a union
with ``null`` (``null`` first, or second when a non-null default must match the first branch);
a field that is optional without a default gets ``"default": null``; Decimal is ``bytes`` with
``logicalType: decimal`` (precision from the ``connect.decimal.precision`` parameter, default
64), Date ``int``/``date``, Time ``int``/``time-millis``, Timestamp ``long``/``timestamp-millis``;
maps with string keys are Avro maps, others an array of ``io.confluent.connect.avro.MapEntry``
records (``key``, ``value``); a string with the ``io.confluent.connect.avro.Enum`` parameter is an
Avro enum; an unnamed struct is the record ``io.confluent.connect.avro.ConnectDefault``. With
``connect.meta.data`` (the default) names, versions, docs, parameters and defaults also ride along
as ``connect.name``/``connect.version``/``connect.doc``/``connect.parameters``/``connect.default``.

Avro -> Connect is the reverse, plus: other unions become a struct
``io.confluent.connect.avro.Union`` with one optional field per branch; ``fixed`` is BYTES named
after it with a ``connect.fixed.size`` parameter. Values are converted by functions compiled once
per schema (no per-record schema walk); fastavro handles the logical types' Python values.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import io
import re
import urllib.parse
from collections.abc import Callable, Mapping
from typing import Any, Final

from engine.api.errors import DataException
from engine.data.builder import SchemaBuilder
from engine.data.logical import Date, Decimal, Time, Timestamp
from engine.data.schema import Field, Schema, Type
from engine.data.values import Struct

__all__ = ["AvroData", "scrub_name"]

NAMESPACE: Final = "io.confluent.connect.avro"
DEFAULT_NAME: Final = "ConnectDefault"
DEFAULT_FULL_NAME: Final = f"{NAMESPACE}.{DEFAULT_NAME}"
MAP_ENTRY: Final = "MapEntry"
MAP_ENTRY_FULL_NAME: Final = f"{NAMESPACE}.{MAP_ENTRY}"
UNION_NAME: Final = f"{NAMESPACE}.Union"
ENUM_PARAM: Final = f"{NAMESPACE}.Enum"
FIXED_SIZE_PARAM: Final = "connect.fixed.size"
PRECISION_PARAM: Final = "connect.decimal.precision"
DEFAULT_PRECISION: Final = 64
CONNECT_NAME: Final = "connect.name"
CONNECT_DOC: Final = "connect.doc"
CONNECT_VERSION: Final = "connect.version"
CONNECT_PARAMETERS: Final = "connect.parameters"
CONNECT_DEFAULT: Final = "connect.default"
CONNECT_TYPE: Final = "connect.type"

_PRIMITIVES: Final[dict[Type, str]] = {
    Type.INT8: "int",
    Type.INT16: "int",
    Type.INT32: "int",
    Type.INT64: "long",
    Type.FLOAT32: "float",
    Type.FLOAT64: "double",
    Type.BOOLEAN: "boolean",
    Type.STRING: "string",
    Type.BYTES: "bytes",
}
_BUILDERS: Final[dict[str, Callable[[], SchemaBuilder]]] = {
    "int": SchemaBuilder.int32,
    "long": SchemaBuilder.int64,
    "float": SchemaBuilder.float32,
    "double": SchemaBuilder.float64,
    "boolean": SchemaBuilder.bool,
    "string": SchemaBuilder.string,
    "bytes": SchemaBuilder.bytes,
}
_INVALID: Final = re.compile(r"[^A-Za-z0-9_]")
_VALID: Final = re.compile(r"[A-Za-z0-9_]+")

ToAvro = Callable[[Any], Any]
ToConnect = Callable[[Any], Any]


def _identity(value: Any) -> Any:
    return value


class AvroData:
    """One converter's mapping options (``connect.meta.data``, ``enhanced.avro.schema.support``,
    ``scrub.invalid.names``); stateless apart from the counter naming unnamed records."""

    def __init__(
        self, *, connect_meta_data: bool = True, enhanced: bool = False, scrub_invalid_names: bool = False
    ):
        self.connect_meta_data = connect_meta_data
        self.enhanced = enhanced
        self.scrub = scrub_invalid_names

    # -- Connect -> Avro schema --------------------------------------------------------------------------

    def from_connect_schema(self, schema: Schema) -> Any:
        """The Avro schema (parsed JSON: ``str``/``dict``/``list``) for ``schema``."""
        self._unnamed = 0
        return self._from_connect(schema, top=True)

    def _name(self, name: str) -> str:
        return scrub_name(name) if self.scrub else name

    def _full_name(self, name: str) -> tuple[str, str | None]:
        """(name, namespace), each dot-separated part scrubbed with ``scrub.invalid.names``."""
        namespace, _, simple = name.rpartition(".")
        if self.scrub:
            namespace = ".".join(scrub_name(p) for p in namespace.split(".")) if namespace else ""
            simple = scrub_name(simple)
        return simple, namespace or None

    def _from_connect(self, schema: Schema, *, top: bool = False, field_optional: bool = True) -> Any:
        base = self._base(schema)
        if schema.optional:
            if schema.default_value is not None:
                return [base, "null"]
            return ["null", base]
        return base

    def _meta(self, schema: Schema, out: dict[str, Any], *, is_record: bool = False) -> None:
        if not self.connect_meta_data:
            return
        if schema.doc is not None and not is_record:
            out[CONNECT_DOC] = schema.doc
        if schema.version is not None:
            out[CONNECT_VERSION] = schema.version
        if schema.parameters:
            out[CONNECT_PARAMETERS] = dict(schema.parameters)
        if schema.default_value is not None:
            out[CONNECT_DEFAULT] = self._default(schema, schema.default_value)
        if schema.name is not None:
            out[CONNECT_NAME] = schema.name

    def _base(self, schema: Schema) -> Any:
        kind = schema.type
        name = schema.name
        out: dict[str, Any]
        if kind is Type.BYTES and name == Decimal.LOGICAL_NAME:
            params = schema.parameters or {}
            out = {
                "type": "bytes",
                "scale": Decimal.scale(schema),
                "precision": int(params.get(PRECISION_PARAM, DEFAULT_PRECISION)),
            }
            self._meta(schema, out)
            out["logicalType"] = "decimal"
            return out
        if kind is Type.INT32 and name in (Date.LOGICAL_NAME, Time.LOGICAL_NAME):
            out = {"type": "int"}
            self._meta(schema, out)
            out["logicalType"] = "date" if name == Date.LOGICAL_NAME else "time-millis"
            return out
        if kind is Type.INT64 and name == Timestamp.LOGICAL_NAME:
            out = {"type": "long"}
            self._meta(schema, out)
            out["logicalType"] = "timestamp-millis"
            return out
        if self.enhanced and kind is Type.STRING and schema.parameters and ENUM_PARAM in schema.parameters:
            # Confluent writes an Avro enum only with enhanced.avro.schema.support; without it the
            # string stays a string, its symbols kept in connect.parameters
            params = schema.parameters
            simple, namespace = self._full_name(params[ENUM_PARAM])
            prefix = ENUM_PARAM + "."
            out = {"type": "enum", "name": simple}
            if namespace:
                out["namespace"] = namespace
            out["symbols"] = [k[len(prefix) :] for k in params if k.startswith(prefix)]
            if schema.doc is not None:
                out["doc"] = schema.doc
            self._meta(schema, out)
            return out
        if kind.is_primitive:
            primitive = _PRIMITIVES[kind]
            out = {"type": primitive}
            if kind in (Type.INT8, Type.INT16) and self.connect_meta_data:  # Confluent's rule too
                out[CONNECT_TYPE] = kind.value
            self._meta(schema, out)
            return out if len(out) > 1 else primitive
        if kind is Type.ARRAY:
            out = {"type": "array", "items": self._from_connect(schema.value_schema)}
            self._meta(schema, out)
            return out
        if kind is Type.MAP:
            key = schema.key_schema
            if key.type is Type.STRING and not key.optional:
                out = {"type": "map", "values": self._from_connect(schema.value_schema)}
            else:
                entry: dict[str, Any] = {
                    "type": "record",
                    "name": MAP_ENTRY,
                    "namespace": NAMESPACE,
                    "fields": [self._field("key", key), self._field("value", schema.value_schema)],
                }
                out = {"type": "array", "items": entry}
            self._meta(schema, out)
            return out
        # STRUCT
        if name is None:
            self._unnamed += 1
            simple, namespace = DEFAULT_NAME + ("" if self._unnamed == 1 else str(self._unnamed)), NAMESPACE
        else:
            simple, namespace = self._full_name(name)
        out = {"type": "record", "name": simple}
        if namespace:
            out["namespace"] = namespace
        if schema.doc is not None:
            out["doc"] = schema.doc
        out["fields"] = [self._field(f.name, f.schema) for f in schema.fields]
        self._meta(schema, out, is_record=True)
        if not self.connect_meta_data or schema.name is None:
            out.pop(CONNECT_NAME, None)
        return out

    def _field(self, name: str, schema: Schema) -> dict[str, Any]:
        field: dict[str, Any] = {"name": self._name(name), "type": self._from_connect(schema)}
        if schema.doc is not None and schema.type is not Type.STRUCT:
            field["doc"] = schema.doc
        if schema.default_value is not None:
            field["default"] = self._default(schema, schema.default_value)
        elif schema.optional:
            field["default"] = None
        return field

    def _default(self, schema: Schema, value: Any) -> Any:
        """A Connect default as Avro JSON (bytes as ISO-8859-1 text, logical values as their primitive)."""
        if value is None:
            return None
        kind = schema.type
        if schema.name == Decimal.LOGICAL_NAME:
            return Decimal.from_logical(schema, value).decode("iso-8859-1")
        if schema.name == Date.LOGICAL_NAME:
            return Date.from_logical(schema, value)
        if schema.name == Time.LOGICAL_NAME:
            return Time.from_logical(schema, value)
        if schema.name == Timestamp.LOGICAL_NAME:
            return Timestamp.from_logical(schema, value)
        if kind is Type.BYTES:
            return bytes(value).decode("iso-8859-1")
        if kind is Type.ARRAY:
            return [self._default(schema.value_schema, v) for v in value]
        if kind is Type.MAP:
            if schema.key_schema.type is Type.STRING:
                return {k: self._default(schema.value_schema, v) for k, v in value.items()}
            return [
                {"key": self._default(schema.key_schema, k), "value": self._default(schema.value_schema, v)}
                for k, v in value.items()
            ]
        if kind is Type.STRUCT:
            return {f.name: self._default(f.schema, value.get(f.name)) for f in schema.fields}
        return value

    # -- Connect -> Avro value ---------------------------------------------------------------------------

    def to_avro(self, schema: Schema) -> ToAvro:
        """A function turning a Connect value of ``schema`` into what fastavro writes."""
        kind = schema.type
        if kind.is_primitive:
            if kind is Type.BYTES and schema.name != Decimal.LOGICAL_NAME:
                return _bytes
            return _identity
        if kind is Type.ARRAY:
            item = self.to_avro(schema.value_schema)
            if item is _identity:
                return _identity
            return lambda v: None if v is None else [item(x) for x in v]
        if kind is Type.MAP:
            key_fn, value_fn = self.to_avro(schema.key_schema), self.to_avro(schema.value_schema)
            if schema.key_schema.type is Type.STRING and not schema.key_schema.optional:
                if value_fn is _identity:
                    return _identity
                return lambda v: None if v is None else {k: value_fn(x) for k, x in v.items()}
            return lambda v: (
                None if v is None else [{"key": key_fn(k), "value": value_fn(x)} for k, x in v.items()]
            )
        return self._struct_to_avro(schema)

    def _struct_to_avro(self, schema: Schema) -> ToAvro:
        """``def struct(v)``, generated per schema: one unpacking of the Struct's values, a line per field
        that needs a default or a conversion, one dict literal (a per-field ``Struct.get`` cost more than
        fastavro's encoding of the field). A Struct of an equal but different schema object takes the same
        path; anything else the by-name one, which raises the typed error."""
        names = [(f.name, self._name(f.name), self.to_avro(f.schema)) for f in schema.fields]

        def by_name(value: Any) -> Any:
            if not isinstance(value, Struct):
                raise DataException(
                    f"Expected a Struct for schema {schema.name or 'struct'}, got {type(value).__name__}"
                )
            return {avro_name: fn(value.get(name)) for name, avro_name, fn in names}

        scope: dict[str, Any] = {"Struct": Struct, "schema": schema, "by_name": by_name}
        lines = [
            "def struct(v):",
            "    if v is None:",
            "        return None",
            "    if type(v) is not Struct or (v.schema is not schema and v.schema != schema):",
            "        return by_name(v)",
            *self._record_lines(schema, names, scope, "    "),
            "    return d",
        ]
        return _generated("struct", lines, scope)

    def _record_lines(
        self, schema: Schema, names: list[tuple[str, str, ToAvro]], scope: dict[str, Any], indent: str
    ) -> list[str]:
        """Lines making ``d``, the record fastavro writes, from ``v``, a Struct of ``schema``."""
        fields = schema.fields
        lines = []
        if fields:
            lines.append(indent + "".join(f"a{i}, " for i in range(len(fields))) + "= v._values")
        for i, (f, (_, _, fn)) in enumerate(zip(fields, names, strict=True)):
            if f.schema.default_value is not None:
                scope[f"d{i}"] = f.schema.default_value
                lines += [f"{indent}if a{i} is None:", f"{indent}    a{i} = d{i}"]
            if fn is not _identity:
                scope[f"f{i}"] = fn
                lines.append(f"{indent}a{i} = f{i}(a{i})")
        lines.append(
            indent
            + "d = {"
            + ", ".join(f"{avro_name!r}: a{i}" for i, (_, avro_name, _) in enumerate(names))
            + "}"
        )
        return lines

    def writer(self, schema: Schema, encode: Callable[..., None], *args: Any) -> Callable[[Any], bytearray]:
        """``def write(v)``, generated per schema: what :meth:`to_avro` makes of ``v``, encoded by
        ``encode(out, record, *args)`` into a new bytearray, in one function for a Struct of
        ``schema`` (the usual record: no call between the Struct and the encoder)."""
        to_avro = self.to_avro(schema)
        scope: dict[str, Any] = {"Struct": Struct, "schema": schema, "to_avro": to_avro, "encode": encode}
        scope.update({f"e{i}": arg for i, arg in enumerate(args)})
        encoded = "    encode(out, d" + "".join(f", e{i}" for i in range(len(args))) + ")"
        if schema.type is not Type.STRUCT:
            lines = [
                "def write(v):",
                "    d = to_avro(v)",
                "    out = bytearray()",
                encoded,
                "    return out",
            ]
            return _generated("write", lines, scope)
        names = [(f.name, self._name(f.name), self.to_avro(f.schema)) for f in schema.fields]
        lines = [
            "def write(v):",
            "    if type(v) is Struct and (v.schema is schema or v.schema == schema):",
            *self._record_lines(schema, names, scope, "        "),
            "    else:",
            "        d = to_avro(v)",
            "    out = bytearray()",
            encoded,
            "    return out",
        ]
        return _generated("write", lines, scope)

    # -- Avro -> Connect schema --------------------------------------------------------------------------

    def to_connect_schema(self, avro: Any) -> Schema:
        """The Connect schema for a parsed Avro schema (JSON form)."""
        return self._to_connect(avro, optional=False, named={}).build()

    def _to_connect(self, avro: Any, *, optional: bool, named: dict[str, Any]) -> SchemaBuilder:
        if isinstance(avro, list):
            return self._union(avro, optional=optional, named=named)
        if isinstance(avro, str):
            if avro in named:
                return self._to_connect(named[avro], optional=optional, named=named)
            avro = {"type": avro}
        kind = avro["type"]
        if isinstance(kind, (dict, list)):
            return self._to_connect(kind, optional=optional, named=named)
        logical = avro.get("logicalType")
        builder: SchemaBuilder
        if (kind == "bytes" and logical == "decimal") or (kind == "fixed" and logical == "decimal"):
            builder = Decimal.builder(int(avro.get("scale", 0)))
            precision = int(avro.get("precision", DEFAULT_PRECISION))
            if precision != DEFAULT_PRECISION:  # 64 is what an absent parameter means when writing
                builder.parameter(PRECISION_PARAM, str(precision))
        elif kind == "int" and logical == "date":
            builder = Date.builder()
        elif kind == "int" and logical == "time-millis":
            builder = Time.builder()
        elif kind == "long" and logical == "timestamp-millis":
            builder = Timestamp.builder()
        elif kind == "int" and avro.get(CONNECT_TYPE) in ("int8", "int16"):
            builder = SchemaBuilder.int8() if avro[CONNECT_TYPE] == "int8" else SchemaBuilder.int16()
        elif kind in _BUILDERS:
            builder = _BUILDERS[kind]()
        elif kind == "enum":
            full = _full(avro)
            named[full] = avro
            builder = SchemaBuilder.string().parameter(ENUM_PARAM, full)
            for symbol in avro["symbols"]:
                builder.parameter(f"{ENUM_PARAM}.{symbol}", symbol)
            if avro.get("doc") is not None:
                builder.doc(avro["doc"])
        elif kind == "fixed":
            full = _full(avro)
            named[full] = avro
            builder = SchemaBuilder.bytes().name(full).parameter(FIXED_SIZE_PARAM, str(avro["size"]))
        elif kind == "array":
            items = avro["items"]
            resolved = named.get(items, items) if isinstance(items, str) else items
            if _is_map_entry(resolved):
                if isinstance(resolved, dict):
                    named.setdefault(_full(resolved), resolved)
                fields = {f["name"]: f for f in resolved["fields"]}
                builder = SchemaBuilder.map(
                    self._field_schema(fields["key"], named), self._field_schema(fields["value"], named)
                )
            else:
                builder = SchemaBuilder.array(self._to_connect(items, optional=False, named=named).build())
        elif kind == "map":
            builder = SchemaBuilder.map(
                Schema.STRING_SCHEMA, self._to_connect(avro["values"], optional=False, named=named).build()
            )
        elif kind == "record":
            full = _full(avro)
            named[full] = avro
            builder = SchemaBuilder.struct()
            if full != DEFAULT_FULL_NAME and not full.startswith(DEFAULT_FULL_NAME):
                builder.name(full)
            if avro.get("doc") is not None:
                builder.doc(avro["doc"])
            for field in avro["fields"]:
                builder.field(field["name"], self._field_schema(field, named))
        elif kind == "null":
            raise DataException("Avro schema type null is only supported inside a union")
        elif kind in named:
            return self._to_connect(named[kind], optional=optional, named=named)
        else:
            raise DataException(f"Unsupported Avro type: {kind}")
        if CONNECT_NAME in avro and builder.build().name is None:
            builder.name(avro[CONNECT_NAME])
        if isinstance(avro.get(CONNECT_VERSION), int) and builder.build().version is None:
            builder.version(avro[CONNECT_VERSION])
        # as Confluent's toConnectSchema: connect.doc and connect.parameters are read only with
        # connect.meta.data (connect.name, connect.version, connect.type and connect.default always)
        meta = self.connect_meta_data
        if meta and avro.get(CONNECT_DOC) is not None and builder.build().doc is None:
            builder.doc(avro[CONNECT_DOC])
        if meta and isinstance(avro.get(CONNECT_PARAMETERS), dict):
            for key, value in avro[CONNECT_PARAMETERS].items():
                if (builder.build().parameters or {}).get(key) != value:
                    builder.parameter(key, value)
        if optional:
            builder.optional()
        if CONNECT_DEFAULT in avro and avro[CONNECT_DEFAULT] is not None:
            builder.default_value(self._connect_default(builder.build(), avro[CONNECT_DEFAULT]))
        return builder

    def _field_schema(self, field: Mapping[str, Any], named: dict[str, Any]) -> Schema:
        builder = self._to_connect(field["type"], optional=False, named=named)
        meta = self.connect_meta_data  # without it Confluent reads no doc at all
        if (
            meta
            and field.get("doc") is not None
            and builder.build().doc is None
            and builder.type is not Type.STRUCT
        ):
            builder.doc(field["doc"])
        if "default" in field and field["default"] is not None and builder.build().default_value is None:
            builder.default_value(self._connect_default(builder.build(), field["default"]))
        return builder.build()

    def _union(self, branches: list[Any], *, optional: bool, named: dict[str, Any]) -> SchemaBuilder:
        others = [b for b in branches if b != "null" and b != {"type": "null"}]
        nullable = len(others) < len(branches)
        if len(others) == 1:
            return self._to_connect(others[0], optional=optional or nullable, named=named)
        builder = SchemaBuilder.struct().name(UNION_NAME)
        for branch in others:
            resolved = named.get(branch, branch) if isinstance(branch, str) else branch
            builder.field(
                _branch_name(resolved), self._to_connect(branch, optional=True, named=named).build()
            )
        if optional or nullable:
            builder.optional()
        return builder

    def _connect_default(self, schema: Schema, value: Any) -> Any:
        """An Avro JSON default as the Connect value of ``schema``."""
        if value is None:
            return None
        if schema.name == Decimal.LOGICAL_NAME:
            return Decimal.to_logical(schema, value.encode("iso-8859-1") if isinstance(value, str) else value)
        if schema.name == Date.LOGICAL_NAME:
            return Date.to_logical(schema, value)
        if schema.name == Time.LOGICAL_NAME:
            return Time.to_logical(schema, value)
        if schema.name == Timestamp.LOGICAL_NAME:
            return Timestamp.to_logical(schema, value)
        kind = schema.type
        if kind is Type.BYTES:
            return value.encode("iso-8859-1") if isinstance(value, str) else bytes(value)
        if kind in (Type.FLOAT32, Type.FLOAT64):
            return float(value)
        if kind is Type.ARRAY:
            return [self._connect_default(schema.value_schema, v) for v in value]
        if kind is Type.MAP:
            if isinstance(value, list):
                return {
                    self._connect_default(schema.key_schema, e["key"]): self._connect_default(
                        schema.value_schema, e["value"]
                    )
                    for e in value
                }
            return {k: self._connect_default(schema.value_schema, v) for k, v in value.items()}
        if kind is Type.STRUCT:
            struct = Struct(schema)
            for f in schema.fields:
                if f.name in value:
                    struct.put(f.name, self._connect_default(f.schema, value[f.name]))
            return struct
        return value

    # -- Avro -> Connect value ---------------------------------------------------------------------------

    def to_connect(self, schema: Schema, avro: Any) -> ToConnect:
        """A function turning what fastavro read (for Avro schema ``avro``) into a Connect value of ``schema``."""
        kind = schema.type
        name = schema.name
        if kind is Type.INT64 and name == Timestamp.LOGICAL_NAME:
            return _utc
        if kind.is_primitive:
            return _identity
        if kind is Type.ARRAY:
            item = self.to_connect(schema.value_schema, None)
            if item is _identity:
                return _identity
            return lambda v: None if v is None else [item(x) for x in v]
        if kind is Type.MAP:
            value_fn = self.to_connect(schema.value_schema, None)
            key_fn = self.to_connect(schema.key_schema, None)
            if schema.key_schema.type is Type.STRING and not schema.key_schema.optional:
                if value_fn is _identity:
                    return _identity
                return lambda v: None if v is None else {k: value_fn(x) for k, x in v.items()}
            return lambda v: None if v is None else {key_fn(e["key"]): value_fn(e["value"]) for e in v}
        if name == UNION_NAME:
            return self._union_value(schema)
        return self._struct_to_connect(schema)

    def _struct_to_connect(self, schema: Schema) -> ToConnect:
        """``def struct(value)``, generated per schema: the decoded dict's values taken in one go, a line
        only for a field that needs a conversion, the Struct made as ``Struct.from_decoded`` makes it,
        inline. fastavro fills the dict in the writer schema's field order, which ``schema`` was mapped
        from, field for field; a dict of another size is read by name. Not validated again: fastavro
        decoded the values with that schema."""
        names = [self._name(f.name) for f in schema.fields]
        scope: dict[str, Any] = {"Struct": Struct, "_new": object.__new__, "schema": schema, "names": names}
        lines = [
            "def struct(value):",
            "    if value is None:",
            "        return None",
            "    if type(value) is tuple:  # fastavro's (record name, value) inside a union",
            "        value = value[1]",
            "    v = [*value.values()]",
            f"    if len(v) != {len(names)}:",
            "        g = value.get",
            "        v = [g(name) for name in names]",
            *self._struct_lines(schema, scope, "    "),
            "    return s",
        ]
        return _generated("struct", lines, scope)

    def _struct_lines(self, schema: Schema, scope: dict[str, Any], indent: str) -> list[str]:
        """Lines making ``s``, the Struct of ``schema``, from ``v``, the decoded values in field order."""
        lines = []
        for i, f in enumerate(schema.fields):
            fn = self.to_connect(f.schema, None)
            if fn is _utc:  # inline: a Timestamp field is in most records
                scope["datetime"], scope["UTC"] = dt.datetime, dt.UTC
                lines += [
                    f"{indent}x = v[{i}]",
                    f"{indent}if isinstance(x, datetime) and x.tzinfo is None:",
                    f"{indent}    v[{i}] = x.replace(tzinfo=UTC)",
                ]
            elif fn is not _identity:
                scope[f"f{i}"] = fn
                lines.append(f"{indent}v[{i}] = f{i}(v[{i}])")
        return [*lines, f"{indent}s = _new(Struct)", f"{indent}s.schema = schema", f"{indent}s._values = v"]

    def reader(
        self,
        schema: Schema,
        avro: Any,
        decode: Callable[..., Any],
        *args: Any,
        values: Callable[[bytes], list[Any]] | None = None,
    ) -> ToConnect:
        """``def read(record)``, generated per schema: ``decode(BytesIO(record), *args)`` (positioned
        after Confluent's 5-byte header) made a Connect value of ``schema`` as :meth:`to_connect`
        makes it, in one function for a struct (no call between the decoder and the Struct).
        ``values``: a struct's field values straight from the record (``avro_decoder``), where the
        schema allows it, instead of ``decode``'s dict."""
        to_connect = self.to_connect(schema, avro)
        if values is not None and schema.type is Type.STRUCT and schema.name != UNION_NAME:
            scope: dict[str, Any] = {
                "Struct": Struct,
                "_new": object.__new__,
                "schema": schema,
                "values": values,
            }
            lines = [
                "def read(record):",
                "    v = values(record)",
                *self._struct_lines(schema, scope, "    "),
                "    return s",
            ]
            return _generated("read", lines, scope)
        scope = {
            "Struct": Struct,
            "_new": object.__new__,
            "schema": schema,
            "to_connect": to_connect,
            "decode": decode,
            "BytesIO": io.BytesIO,
        }
        scope.update({f"e{i}": arg for i, arg in enumerate(args)})
        lines = [
            "def read(record):",
            "    fo = BytesIO(record)",
            "    fo.seek(5)",
            "    value = decode(fo" + "".join(f", e{i}" for i in range(len(args))) + ")",
        ]
        if schema.type is Type.STRUCT and schema.name != UNION_NAME:
            lines += [
                "    if type(value) is dict:",
                "        v = [*value.values()]",
                f"        if len(v) == {len(schema.fields)}:",
                *self._struct_lines(schema, scope, "            "),
                "            return s",
            ]
        lines.append("    return to_connect(value)")
        return _generated("read", lines, scope)

    def _union_value(self, schema: Schema) -> ToConnect:
        branches: list[tuple[Field, ToConnect]] = [
            (f, self.to_connect(f.schema, None)) for f in schema.fields
        ]

        def union(value: Any) -> Any:
            if value is None:
                return None
            record_name = None
            if isinstance(value, tuple):
                record_name, value = value
            for field, fn in branches:
                if _matches(field, value, record_name):
                    return Struct(schema).put(field, fn(value))
            raise DataException(
                f"No branch of union {[f.name for f, _ in branches]} matches a {type(value).__name__}"
            )

        return union


def _generated(name: str, lines: list[str], scope: dict[str, Any]) -> Callable[[Any], Any]:
    exec("\n".join(lines), scope)  # source built from field indexes and repr()'d names only
    function: Callable[[Any], Any] = scope[name]
    return function


def scrub_name(name: str) -> str:
    """``name`` as Confluent's ``AvroData.doScrubName`` makes it a valid Avro name: left alone when it is
    one; else URL-encoded as Java's ``URLEncoder`` does (UTF-8, space as ``+``), ``x`` put before a
    leading digit, and every character other than ``[A-Za-z0-9_]`` replaced by ``_``."""
    if not name or (_VALID.fullmatch(name) and not name[0].isdigit()):
        return name
    encoded = urllib.parse.quote_plus(name, safe="*").replace("~", "%7E")  # Java encodes ~, Python not
    if encoded[0].isdigit():
        encoded = "x" + encoded
    return _INVALID.sub("_", encoded)


def _full(avro: Mapping[str, Any]) -> str:
    name = str(avro["name"])
    namespace = avro.get("namespace")
    return f"{namespace}.{name}" if namespace and "." not in name else name


def _is_map_entry(avro: Any) -> bool:
    if not isinstance(avro, dict) or avro.get("type") != "record":
        return False
    return _full(avro).startswith(MAP_ENTRY_FULL_NAME) and [f["name"] for f in avro["fields"]] == [
        "key",
        "value",
    ]


def _branch_name(avro: Any) -> str:
    if isinstance(avro, dict):
        if avro.get("type") in ("record", "enum", "fixed"):
            return str(avro["name"]).rpartition(".")[2]
        return _branch_name(avro["type"])
    return str(avro)


_PY_TYPES: Final[dict[Type, tuple[type, ...]]] = {
    Type.BOOLEAN: (bool,),
    Type.INT8: (int,),
    Type.INT16: (int,),
    Type.INT32: (int, dt.date, dt.time),
    Type.INT64: (int, dt.datetime),
    Type.FLOAT32: (float,),
    Type.FLOAT64: (float,),
    Type.STRING: (str,),
    Type.BYTES: (bytes, decimal.Decimal),
    Type.ARRAY: (list,),
    Type.MAP: (dict, list),
    Type.STRUCT: (dict,),
}


def _matches(field: Field, value: Any, record_name: str | None) -> bool:
    kind = field.schema.type
    if kind is Type.STRUCT:
        return record_name is not None and record_name.rpartition(".")[2] == field.name
    if isinstance(value, bool) and kind is not Type.BOOLEAN:
        return False
    return isinstance(value, _PY_TYPES[kind])


def _bytes(value: Any) -> Any:
    if value is None or isinstance(value, bytes):
        return value
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, str):  # JSON-ish callers sometimes hand base64 text
        return base64.b64decode(value)
    return value


def _utc(value: Any) -> Any:
    if isinstance(value, dt.datetime) and value.tzinfo is None:
        return value.replace(tzinfo=dt.UTC)
    return value
