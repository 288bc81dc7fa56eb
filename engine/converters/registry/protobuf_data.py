r"""Connect schemas and values <-> Protobuf (proto3), after Confluent's ``ProtobufData``.

Connect -> Protobuf: a top-level struct is a message in a file of its own (package = the struct
name's namespace; an unnamed struct is ``ConnectDefault1``); nested structs, map entries and enums
are nested types. Field numbers come from the ``io.confluent.connect.protobuf.Tag`` parameter, else
the field's position + 1. INT8/INT16/INT32 are ``int32``, INT64 ``int64``, FLOAT32 ``float``,
FLOAT64 ``double``; arrays are ``repeated``; maps with string/integer/boolean keys are ``map<K, V>``,
others a repeated ``<Field>Entry`` message (``key`` = 1, ``value`` = 2); Decimal is
``confluent.type.Decimal``, Date ``google.type.Date``, Time ``google.type.TimeOfDay``, Timestamp
``google.protobuf.Timestamp`` (imported, never referenced: readers know them, as Confluent's do);
an optional scalar is a proto3 ``optional`` field; a string with the
``io.confluent.connect.protobuf.Enum`` parameter an enum (its symbols the
``io.confluent.connect.protobuf.Enum.<symbol>`` parameters, valued with their numbers).

Protobuf -> Connect is the reverse: message and ``optional`` fields are optional, other scalars
and repeated fields required; every field carries its tag parameter. Descriptors come from
``FileDescriptorProto``\s: a base64 one (what Confluent's Python serializer registers), or those
protoc compiles from ``.proto`` text (``proto_text``), with the files the schema imports.
"""

from __future__ import annotations

import base64
import datetime as dt
import keyword
import operator
from collections.abc import Callable
from typing import Any, Final

from engine.api.errors import DataException
from engine.converters.registry.proto_meta import (
    CONNECT_TYPE,
    META_EXTENSION,
    META_FILE,
    meta_option,
    meta_params,
    varint,
)
from engine.data.builder import SchemaBuilder
from engine.data.logical import Date, Decimal, Time, Timestamp, unscaled_to_bytes
from engine.data.schema import Schema, Type
from engine.data.values import Struct

__all__ = ["ProtobufData"]

TAG_PARAM: Final = "io.confluent.connect.protobuf.Tag"
ENUM_PARAM: Final = "io.confluent.connect.protobuf.Enum"
DEFAULT_NAME: Final = "ConnectDefault1"
_TIMESTAMP: Final = ("google/protobuf/timestamp.proto", ".google.protobuf.Timestamp")
_DATE: Final = ("google/type/date.proto", ".google.type.Date")
_TIME: Final = ("google/type/timeofday.proto", ".google.type.TimeOfDay")
_DECIMAL: Final = ("confluent/type/decimal.proto", ".confluent.type.Decimal")
_DESCRIPTOR: Final = "google/protobuf/descriptor.proto"
_MAP_KEY_TYPES: Final = {Type.STRING, Type.INT32, Type.INT64, Type.BOOLEAN, Type.INT8, Type.INT16}
_EPOCH: Final = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)

Convert = Callable[[Any], Any]


def _well_known(pb2: Any, pool: Any) -> None:
    """Add google.type.Date/TimeOfDay and confluent.type.Decimal (their published definitions) to ``pool``."""
    fdp = pb2.FieldDescriptorProto

    def file(name: str, package: str, message: str, fields: list[tuple[str, int, int]]) -> None:
        proto = pb2.FileDescriptorProto(name=name, package=package, syntax="proto3")
        msg = proto.message_type.add(name=message)
        for field_name, number, kind in fields:
            msg.field.add(name=field_name, number=number, type=kind, label=fdp.LABEL_OPTIONAL)
        pool.Add(proto)

    file(
        _DATE[0],
        "google.type",
        "Date",
        [("year", 1, fdp.TYPE_INT32), ("month", 2, fdp.TYPE_INT32), ("day", 3, fdp.TYPE_INT32)],
    )
    file(
        _TIME[0],
        "google.type",
        "TimeOfDay",
        [
            ("hours", 1, fdp.TYPE_INT32),
            ("minutes", 2, fdp.TYPE_INT32),
            ("seconds", 3, fdp.TYPE_INT32),
            ("nanos", 4, fdp.TYPE_INT32),
        ],
    )
    meta = pb2.FileDescriptorProto(
        name=META_FILE, package="confluent", syntax="proto3", dependency=["google/protobuf/descriptor.proto"]
    )
    message = meta.message_type.add(name="Meta")
    message.field.add(name="doc", number=1, type=fdp.TYPE_STRING, label=fdp.LABEL_OPTIONAL)
    message.field.add(
        name="params",
        number=2,
        type=fdp.TYPE_MESSAGE,
        label=fdp.LABEL_REPEATED,
        type_name=".confluent.Meta.ParamsEntry",
    )
    message.field.add(name="tags", number=3, type=fdp.TYPE_STRING, label=fdp.LABEL_REPEATED)
    message.field.add(
        name="rules", number=4, type=fdp.TYPE_MESSAGE, label=fdp.LABEL_REPEATED, type_name=".confluent.Rule"
    )
    entry = message.nested_type.add(name="ParamsEntry")
    entry.field.add(name="key", number=1, type=fdp.TYPE_STRING, label=fdp.LABEL_OPTIONAL)
    entry.field.add(name="value", number=2, type=fdp.TYPE_STRING, label=fdp.LABEL_OPTIONAL)
    entry.options.map_entry = True
    rule = meta.message_type.add(name="Rule")
    for number, rule_field in enumerate(("name", "doc", "expr", "sql"), start=1):
        rule.field.add(name=rule_field, number=number, type=fdp.TYPE_STRING, label=fdp.LABEL_OPTIONAL)
    for extension, extendee in (
        ("file_meta", "FileOptions"),
        ("message_meta", "MessageOptions"),
        ("field_meta", "FieldOptions"),
        ("enum_meta", "EnumOptions"),
        ("enum_value_meta", "EnumValueOptions"),
    ):
        meta.extension.add(
            name=extension,
            number=META_EXTENSION,
            type=fdp.TYPE_MESSAGE,
            label=fdp.LABEL_OPTIONAL,
            type_name=".confluent.Meta",
            extendee=f".google.protobuf.{extendee}",
        )
    pool.Add(meta)
    file(
        _DECIMAL[0],
        "confluent.type",
        "Decimal",
        [("value", 1, fdp.TYPE_BYTES), ("precision", 2, fdp.TYPE_UINT32), ("scale", 3, fdp.TYPE_INT32)],
    )


class ProtobufData:
    """The mapping, over one private descriptor pool (so no clash with generated code in the process)."""

    def __init__(self) -> None:
        from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, timestamp_pb2

        self._pb2 = descriptor_pb2
        self._factory = message_factory
        self._new_pool = descriptor_pool.DescriptorPool
        self._timestamp = timestamp_pb2.DESCRIPTOR.serialized_pb

    # -- Connect -> Protobuf schema ----------------------------------------------------------------------

    def from_connect_schema(self, schema: Schema) -> tuple[str, Any]:
        """(registry schema text: base64 FileDescriptorProto, the message descriptor)."""
        fdp, descriptor = self.file_for(schema)
        return base64.b64encode(fdp.SerializeToString()).decode(), descriptor

    def file_for(self, schema: Schema) -> tuple[Any, Any]:
        """(the ``FileDescriptorProto`` holding ``schema``'s message, the message descriptor)."""
        if schema.type is not Type.STRUCT:
            raise DataException(f"Protobuf needs a struct at the top level, not {schema.type}")
        package, _, name = (schema.name or DEFAULT_NAME).rpartition(".")
        fdp = self._pb2.FileDescriptorProto(syntax="proto3")
        if package:
            fdp.package = package
        message = fdp.message_type.add(name=name)
        imports: set[str] = set()
        self._message(schema, message, imports)
        fdp.dependency.extend(sorted(imports))
        full_name = f"{package}.{name}" if package else name
        fdp.name = f"{full_name.replace('.', '/')}.proto"
        return fdp, self._load([fdp], full_name)

    def _load(self, files: list[Any], full_name: str) -> Any:
        """The message descriptor, from a pool of its own (two versions of one message never clash);
        ``files`` dependencies first, those every reader knows (already in the pool) skipped."""
        pool = self._new_pool()
        pool.AddSerializedFile(self._timestamp)
        pool.AddSerializedFile(self._pb2.DESCRIPTOR.serialized_pb)
        _well_known(self._pb2, pool)
        known = {"google/protobuf/timestamp.proto", _DATE[0], _TIME[0], _DECIMAL[0], _DESCRIPTOR, META_FILE}
        for fdp in files:
            if fdp.name not in known:
                pool.Add(fdp)
        return pool.FindMessageTypeByName(full_name)

    def parse_serialized(self, schema_text: str) -> Any | None:
        """The ``FileDescriptorProto`` of a base64 schema, or ``None`` for ``.proto`` text."""
        try:
            raw = base64.b64decode(schema_text, validate=True)
        except ValueError:
            return None
        return self._pb2.FileDescriptorProto.FromString(raw)

    def descriptor_in(self, files: list[Any], indexes: list[int]) -> Any:
        """The message descriptor at message ``indexes`` of the last of ``files`` (the others its imports)."""
        fdp = files[-1]
        if not fdp.message_type:
            raise DataException("the Protobuf schema declares no message")
        try:
            message = fdp.message_type[indexes[0]]
            path = [message.name]
            for index in indexes[1:]:
                message = message.nested_type[index]
                path.append(message.name)
        except IndexError:
            raise DataException(f"the Protobuf schema has no message at indexes {indexes}") from None
        full_name = ".".join(([fdp.package] if fdp.package else []) + path)
        return self._load(files, full_name)

    def _message(self, schema: Schema, message: Any, imports: set[str]) -> None:
        fdp = self._pb2.FieldDescriptorProto
        used: set[str] = set()
        for field in schema.fields:
            fs = field.schema
            tag = int((fs.parameters or {}).get(TAG_PARAM, field.index + 1))
            proto = message.field.add(name=field.name, number=tag, label=fdp.LABEL_OPTIONAL)
            kind = fs.type
            if kind is Type.ARRAY:
                proto.label = fdp.LABEL_REPEATED
                self._typed(proto, fs.value_schema, message, field.name, imports, used)
                continue
            if kind is Type.MAP:
                proto.label = fdp.LABEL_REPEATED
                entry_name = _camel(field.name) + "Entry"
                entry = message.nested_type.add(name=entry_name)
                key, value = fs.key_schema, fs.value_schema
                if key.type in _MAP_KEY_TYPES and not key.optional and key.name is None:
                    entry.options.map_entry = True
                for entry_field, number, sub in (("key", 1, key), ("value", 2, value)):
                    ef = entry.field.add(name=entry_field, number=number, label=fdp.LABEL_OPTIONAL)
                    self._typed(ef, sub, entry, entry_field, imports, set())
                proto.type = fdp.TYPE_MESSAGE
                proto.type_name = entry_name
                continue
            self._typed(proto, fs, message, field.name, imports, used)
            if fs.optional and proto.type != fdp.TYPE_MESSAGE:
                proto.proto3_optional = True
                proto.oneof_index = len(message.oneof_decl)
                message.oneof_decl.add(name=f"_{field.name}")
        # proto3 wants the synthetic oneofs after every real one; we declare none, so order holds

    def _typed(
        self, proto: Any, schema: Schema, message: Any, field_name: str, imports: set[str], used: set[str]
    ) -> None:
        fdp = self._pb2.FieldDescriptorProto
        kind, name = schema.type, schema.name
        for logical, (path, type_name) in (
            (Timestamp.LOGICAL_NAME, _TIMESTAMP),
            (Date.LOGICAL_NAME, _DATE),
            (Time.LOGICAL_NAME, _TIME),
            (Decimal.LOGICAL_NAME, _DECIMAL),
        ):
            if name == logical:
                proto.type, proto.type_name = fdp.TYPE_MESSAGE, type_name
                imports.add(path)
                return
        if kind is Type.STRING and schema.parameters and ENUM_PARAM in schema.parameters:
            enum_name = schema.parameters[ENUM_PARAM].rpartition(".")[2]
            if enum_name not in used:
                used.add(enum_name)
                enum = message.enum_type.add(name=enum_name)
                prefix = ENUM_PARAM + "."
                for key, number in schema.parameters.items():
                    if key.startswith(prefix):
                        enum.value.add(name=key[len(prefix) :], number=int(number))
            proto.type, proto.type_name = fdp.TYPE_ENUM, enum_name
            return
        if kind in (Type.INT8, Type.INT16) and name is None:
            proto.type = fdp.TYPE_INT32  # the Connect type rides in confluent.field_meta, as Java writes it
            proto.options.MergeFromString(meta_option({CONNECT_TYPE: kind.value}))
            imports.add(META_FILE)
            return
        simple = {
            Type.INT8: fdp.TYPE_INT32,
            Type.INT16: fdp.TYPE_INT32,
            Type.INT32: fdp.TYPE_INT32,
            Type.INT64: fdp.TYPE_INT64,
            Type.FLOAT32: fdp.TYPE_FLOAT,
            Type.FLOAT64: fdp.TYPE_DOUBLE,
            Type.BOOLEAN: fdp.TYPE_BOOL,
            Type.STRING: fdp.TYPE_STRING,
            Type.BYTES: fdp.TYPE_BYTES,
        }
        if kind in simple:
            proto.type = simple[kind]
            return
        if kind is Type.STRUCT:
            nested_name = (name or "").rpartition(".")[2] or _camel(field_name)
            if nested_name not in used:
                used.add(nested_name)
                self._message(schema, message.nested_type.add(name=nested_name), imports)
            proto.type, proto.type_name = fdp.TYPE_MESSAGE, nested_name
            return
        raise DataException(
            f"Protobuf cannot hold a {kind} directly inside a repeated field or map ({field_name})"
        )

    # -- descriptors from the registry -------------------------------------------------------------------

    def descriptor_for(self, schema_text: str, indexes: list[int]) -> Any:
        """The message descriptor of a base64 ``FileDescriptorProto`` (no imports but the known ones)."""
        fdp = self.parse_serialized(schema_text)
        if fdp is None:
            raise DataException(
                "the Protobuf schema is .proto text; compile it first (proto_text.compile_proto)"
            )
        return self.descriptor_in([fdp], indexes)

    # -- Protobuf descriptor -> Connect schema -----------------------------------------------------------

    def to_connect_schema(self, descriptor: Any) -> Schema:
        return self._struct(descriptor, optional=False)

    def _struct(self, descriptor: Any, *, optional: bool) -> Schema:
        builder = SchemaBuilder.struct().name(descriptor.full_name)
        for field in descriptor.fields:
            builder.field(field.name, self._field(field))
        if optional:
            builder.optional()
        return builder.build()

    def _field(self, field: Any) -> Schema:
        repeated = field.is_repeated
        if (repeated and field.message_type is not None and field.message_type.GetOptions().map_entry) or (
            repeated and field.message_type is not None and _is_entry(field.message_type)
        ):
            entry = field.message_type
            key = self._single(entry.fields_by_name["key"], optional=False)
            value = self._single(entry.fields_by_name["value"], optional=False)
            return SchemaBuilder.map(key, value).parameter(TAG_PARAM, str(field.number)).build()
        if repeated:
            return (
                SchemaBuilder.array(self._single(field, optional=False))
                .parameter(TAG_PARAM, str(field.number))
                .build()
            )
        optional = field.message_type is not None or field.has_presence
        return self._single(field, optional=optional, tag=field.number)

    def _single(self, field: Any, *, optional: bool, tag: int | None = None) -> Schema:
        fd = self._pb2.FieldDescriptorProto
        kind = field.type
        builder: SchemaBuilder
        if kind == fd.TYPE_MESSAGE:
            name = field.message_type.full_name
            logical = {
                "google.protobuf.Timestamp": Timestamp.builder,
                "google.type.Date": Date.builder,
                "google.type.TimeOfDay": Time.builder,
            }.get(name)
            if logical is not None:
                builder = logical()
            elif name == "confluent.type.Decimal":
                builder = Decimal.builder(0)  # scale rides in each value; see to_connect
            else:
                nested = self._struct(field.message_type, optional=optional)
                if tag is None:
                    return nested
                builder = SchemaBuilder.struct().name(nested.name or "")
                for f in nested.fields:
                    builder.field(f.name, f.schema)
        elif kind == fd.TYPE_ENUM:
            enum = field.enum_type
            builder = SchemaBuilder.string().parameter(ENUM_PARAM, enum.name)
            for value in enum.values:
                builder.parameter(f"{ENUM_PARAM}.{value.name}", str(value.number))
        else:
            factory = {
                fd.TYPE_INT32: SchemaBuilder.int32,
                fd.TYPE_SINT32: SchemaBuilder.int32,
                fd.TYPE_SFIXED32: SchemaBuilder.int32,
                fd.TYPE_UINT32: SchemaBuilder.int64,
                fd.TYPE_FIXED32: SchemaBuilder.int64,
                fd.TYPE_INT64: SchemaBuilder.int64,
                fd.TYPE_SINT64: SchemaBuilder.int64,
                fd.TYPE_SFIXED64: SchemaBuilder.int64,
                fd.TYPE_UINT64: SchemaBuilder.int64,
                fd.TYPE_FIXED64: SchemaBuilder.int64,
                fd.TYPE_FLOAT: SchemaBuilder.float32,
                fd.TYPE_DOUBLE: SchemaBuilder.float64,
                fd.TYPE_BOOL: SchemaBuilder.bool,
                fd.TYPE_STRING: SchemaBuilder.string,
                fd.TYPE_BYTES: SchemaBuilder.bytes,
            }.get(kind)
            if factory is None:
                raise DataException(f"Unsupported Protobuf field type {kind} ({field.full_name})")
            if kind in (fd.TYPE_INT32, fd.TYPE_SINT32, fd.TYPE_SFIXED32):
                connect_type = meta_params(field.GetOptions().SerializeToString()).get(CONNECT_TYPE)
                factory = {"int8": SchemaBuilder.int8, "int16": SchemaBuilder.int16}.get(
                    connect_type or "", factory
                )
            builder = factory()
        if tag is not None:
            builder.parameter(TAG_PARAM, str(tag))
        if optional:
            builder.optional()
        return builder.build()

    # -- values ------------------------------------------------------------------------------------------

    def message_class(self, descriptor: Any) -> Any:
        return self._factory.GetMessageClass(descriptor)

    def writer(self, schema: Schema, descriptor: Any, prefix: bytes = b"") -> Callable[[Any], bytes]:
        """``def write(v)``, generated per schema: ``prefix`` and the message of ``v`` serialized.

        A Struct of ``schema`` has its values unpacked in one go, each plain scalar set by a line of
        its own (no call per field), a plain map copied key by key (upb's ``update`` costs more), other
        fields through their fillers; anything else goes the general way (:meth:`_filler`), which
        raises the typed error."""
        cls = self.message_class(descriptor)
        fill = self._filler(schema, descriptor)
        fd = self._pb2.FieldDescriptorProto
        scope: dict[str, Any] = {
            "cls": cls,
            "fill": fill,
            "Struct": Struct,
            "schema": schema,
            "prefix": prefix,
        }
        serialized = "prefix + m.SerializeToString()" if prefix else "m.SerializeToString()"
        fields = schema.fields
        if not fields:
            return _generated(
                "write",
                ["def write(v):", "    m = cls()", "    fill(m, v)", f"    return {serialized}"],
                scope,
            )
        lines = [
            "def write(v):",
            "    m = cls()",
            "    if type(v) is Struct and (v.schema is schema or v.schema == schema):",
            "        " + "".join(f"a{i}, " for i in range(len(fields))) + "= v._values",
        ]
        for i, field in enumerate(fields):
            proto = descriptor.fields_by_name[field.name]
            fs = field.schema
            a = f"a{i}"
            if fs.default_value is not None:
                scope[f"d{i}"] = fs.default_value
                lines += [f"        if {a} is None:", f"            {a} = d{i}"]
            if self._plain_scalar(fs, proto):
                lines += [f"        if {a} is not None:", f"            {_set_attr('m', field.name, a)}"]
            elif self._plain_map(fs, proto):
                lines += [
                    f"        if {a}:",
                    f"            t = {_get_attr('m', field.name)}",
                    f"            for k in {a}:",
                    f"                t[k] = {a}[k]",
                ]
            else:
                scope[f"s{i}"] = self._field_filler(field.name, fs, proto, fd)
                lines.append(f"        s{i}(m, {a})")
        lines += ["    else:", "        fill(m, v)", f"    return {serialized}"]
        return _generated("write", lines, scope)

    def _plain_scalar(self, schema: Schema, proto: Any) -> bool:
        """A scalar field set and read as it is (no enum, bytes or float32 conversion, no message)."""
        return (
            schema.type not in (Type.MAP, Type.ARRAY)
            and proto.message_type is None
            and self._scalar_in(schema, proto) is _same
            and self._value_out(schema, proto) is _same
        )

    def _plain_map(self, schema: Schema, proto: Any) -> bool:
        """A ``map<K, V>`` of scalars whose keys and values are set and read as they are."""
        if schema.type is not Type.MAP or proto.message_type is None:
            return False
        entry = proto.message_type
        if not entry.GetOptions().map_entry:
            return False
        key, value = entry.fields_by_name["key"], entry.fields_by_name["value"]
        return value.message_type is None and all(
            self._scalar_in(sub, part) is _same and self._value_out(sub, part) is _same
            for sub, part in ((schema.key_schema, key), (schema.value_schema, value))
        )

    def _filler(self, schema: Schema, descriptor: Any) -> Callable[[Any, Any], None]:
        fd = self._pb2.FieldDescriptorProto
        steps: list[tuple[int, Callable[[Any, Any], None]]] = []
        plain: list[tuple[int, str]] = []  # scalars set as they are: setattr here, no call per field
        for i, field in enumerate(schema.fields):
            proto = descriptor.fields_by_name[field.name]
            kind = field.schema.type
            if (
                kind not in (Type.MAP, Type.ARRAY)
                and proto.message_type is None
                and self._scalar_in(field.schema, proto) is _same
            ):
                plain.append((i, field.name))
            else:
                steps.append((i, self._field_filler(field.name, field.schema, proto, fd)))

        defaults = [
            (i, f.schema.default_value)
            for i, f in enumerate(schema.fields)
            if f.schema.default_value is not None
        ]

        def fill(message: Any, value: Any) -> None:
            if type(value) is Struct and (value.schema is schema or value.schema == schema):
                values = value._values  # the Struct's own list, in field order: no lookup by name
                if defaults:
                    values = [*values]
                    for i, default in defaults:
                        if values[i] is None:
                            values[i] = default
            elif isinstance(value, Struct):
                values = [value.get(f.name) for f in schema.fields]
            else:
                raise DataException(
                    f"Expected a Struct for schema {schema.name or 'struct'}, got {type(value).__name__}"
                )
            for i, name in plain:
                v = values[i]
                if v is not None:
                    setattr(message, name, v)
            for i, step in steps:
                step(message, values[i])

        return fill

    def _field_filler(self, name: str, schema: Schema, proto: Any, fd: Any) -> Callable[[Any, Any], None]:
        """Set field ``name`` of a message from its Connect value."""
        kind = schema.type
        if kind is Type.MAP:
            entry = proto.message_type
            key_set = self._scalar_in(schema.key_schema, entry.fields_by_name["key"])
            value_proto = entry.fields_by_name["value"]
            if entry.GetOptions().map_entry:
                if value_proto.message_type is not None:
                    value_fill = self._message_in(schema.value_schema, value_proto)

                    def fill_map_messages(message: Any, v: Any) -> None:
                        target = getattr(message, name)
                        for k, x in (v or {}).items():
                            value_fill(target[key_set(k)], x)

                    return fill_map_messages
                value_set = self._scalar_in(schema.value_schema, value_proto)

                def fill_map(message: Any, v: Any) -> None:
                    target = getattr(message, name)
                    for k, x in (v or {}).items():
                        target[key_set(k)] = value_set(x)

                return fill_map
            key_fill = self._slot(schema.key_schema, entry.fields_by_name["key"], "key")
            value_fill = self._slot(schema.value_schema, value_proto, "value")

            def fill_entries(message: Any, v: Any) -> None:
                target = getattr(message, name)
                for k, x in (v or {}).items():
                    item = target.add()
                    key_fill(item, k)
                    value_fill(item, x)

            return fill_entries
        if kind is Type.ARRAY:
            if proto.message_type is not None:
                item_fill = self._message_in(schema.value_schema, proto)

                def fill_messages(message: Any, v: Any) -> None:
                    target = getattr(message, name)
                    for x in v or ():
                        item_fill(target.add(), x)

                return fill_messages
            item_set = self._scalar_in(schema.value_schema, proto)

            def fill_repeated(message: Any, v: Any) -> None:
                getattr(message, name).extend(item_set(x) for x in v or ())

            return fill_repeated
        return self._slot(schema, proto, name)

    def _slot(self, schema: Schema, proto: Any, name: str) -> Callable[[Any, Any], None]:
        """Set ``message.<name>`` from one Connect value (skipped when ``None``)."""
        if proto.message_type is not None:
            fill = self._message_in(schema, proto)

            def set_message(message: Any, value: Any) -> None:
                if value is not None:
                    fill(getattr(message, name), value)

            return set_message
        convert = self._scalar_in(schema, proto)

        def set_scalar(message: Any, value: Any) -> None:
            if value is not None:
                setattr(message, name, convert(value))

        return set_scalar

    def _message_in(self, schema: Schema, proto: Any) -> Callable[[Any, Any], None]:
        """Fill a message-typed slot (a sub-message already created) from a Connect value."""
        full = proto.message_type.full_name
        if full == "google.protobuf.Timestamp":

            def timestamp(target: Any, value: Any) -> None:
                target.FromDatetime(value if value.tzinfo else value.replace(tzinfo=dt.UTC))

            return timestamp
        if full == "google.type.Date":

            def date(target: Any, value: Any) -> None:
                target.year, target.month, target.day = value.year, value.month, value.day

            return date
        if full == "google.type.TimeOfDay":

            def time_of_day(target: Any, value: Any) -> None:
                target.hours, target.minutes, target.seconds = value.hour, value.minute, value.second
                target.nanos = value.microsecond * 1000

            return time_of_day
        if full == "confluent.type.Decimal":
            scale = Decimal.scale(schema)
            precision = int((schema.parameters or {}).get("connect.decimal.precision", 0))

            def dec(target: Any, value: Any) -> None:
                target.value = Decimal.from_logical(schema, value)
                target.scale = scale
                if precision:
                    target.precision = precision

            return dec
        return self._filler(schema, proto.message_type)

    def _scalar_in(self, schema: Schema, proto: Any) -> Convert:
        if proto.enum_type is not None:
            values = proto.enum_type.values_by_name

            def enum(value: Any) -> int:
                found = values.get(value)
                if found is None:
                    raise DataException(f"{value!r} is not a symbol of enum {proto.enum_type.name}")
                return int(found.number)

            return enum
        if schema.type is Type.BYTES:
            return bytes
        return _same

    def reader(
        self, schema: Schema, descriptor: Any, *, framed: Callable[[bytes], Any] | None = None
    ) -> Callable[[bytes], Any]:
        """``def read(payload)``, generated per schema: the message parsed and made a Connect value.

        Without ``framed``, ``payload`` is the message; with it, a whole record in Confluent's framing,
        whose message indexes are the single byte ``0`` (the first message, as nearly every record
        names it) or else handed to ``framed``. A struct's fields are read in one ``attrgetter`` call,
        presence asked only of an optional scalar that read as its default, a plain map copied key by
        key, other fields through their getters; the Struct is made unvalidated (protobuf's own typed
        fields), unless a required field came back unset: then the checked path names it."""
        cls = self.message_class(descriptor)
        convert = self._message_out(schema, descriptor)
        scope: dict[str, Any] = {
            "FromString": cls.FromString,
            "convert": convert,
            "framed": framed,
            "Struct": Struct,
            "_new": _new,
            "schema": schema,
        }
        lines = ["def read(payload):"]
        if framed is not None:
            lines += ['    if payload[5:6] != b"\\x00":', "        return framed(payload)"]
        lines.append(f"    m = FromString(payload{'[6:]' if framed is not None else ''})")
        # (a one-field struct goes through convert's checked path, as it always has)
        if descriptor.full_name in _WELL_KNOWN or schema.type is not Type.STRUCT or len(schema.fields) < 2:
            return _generated("read", [*lines, "    return convert(m)"], scope)
        fields = schema.fields
        taken: list[int] = []  # read by attribute, in one attrgetter call
        after: list[str] = []
        required: list[int] = []
        for i, field in enumerate(fields):
            proto = descriptor.fields_by_name[field.name]
            fs = field.schema
            a = f"a{i}"
            if self._plain_map(fs, proto):
                taken.append(i)
                after += [  # a loop: a comprehension is a call of its own, a third of the copy's time
                    "    d = {}",
                    f"    for k in {a}:",
                    f"        d[k] = {a}[k]",
                    f"    {a} = d",
                ]
            elif self._plain_scalar(fs, proto) and not (proto.is_repeated or fs.type is Type.ARRAY):
                taken.append(i)
                if proto.has_presence:
                    after += [f"    if not {a} and not m.HasField({field.name!r}):", f"        {a} = None"]
                    if not fs.optional:
                        required.append(i)
            else:
                scope[f"g{i}"] = self._field_out(fs, proto)
                after.append(f"    {a} = g{i}(m)")
                if not fs.optional:
                    required.append(i)
        if len(taken) > 1:
            scope["take"] = operator.attrgetter(*(fields[i].name for i in taken))
            lines.append("    " + "".join(f"a{i}, " for i in taken) + "= take(m)")
        elif taken:
            lines.append(f"    a{taken[0]} = {_get_attr('m', fields[taken[0]].name)}")
        lines += after
        # a required field can read None only through a getter or a presence check
        lines += [line for i in required for line in (f"    if a{i} is None:", "        return convert(m)")]
        lines += [
            "    s = _new(Struct)",
            "    s.schema = schema",
            "    s._values = [" + ", ".join(f"a{i}" for i in range(len(fields))) + "]",
            "    return s",
        ]
        return _generated("read", lines, scope)

    def _message_out(self, schema: Schema, descriptor: Any) -> Convert:
        full = descriptor.full_name
        if full == "google.protobuf.Timestamp":
            return lambda m: m.ToDatetime(tzinfo=dt.UTC)
        if full == "google.type.Date":
            return lambda m: dt.date(m.year, m.month, m.day)
        if full == "google.type.TimeOfDay":
            return lambda m: dt.time(m.hours, m.minutes, m.seconds, m.nanos // 1000)
        if full == "confluent.type.Decimal":

            def dec(m: Any) -> Any:
                unscaled = int.from_bytes(m.value, "big", signed=True) if m.value else 0
                return Decimal.to_logical(Decimal.schema(m.scale), unscaled_to_bytes(unscaled))

            return dec
        fields = schema.fields
        getters = [
            (field.name, self._field_out(field.schema, descriptor.fields_by_name[field.name]))
            for field in fields
        ]
        # every attribute in one C call; a field that needs more (presence, a conversion) is then
        # read again through its getter
        take_all = operator.attrgetter(*(name for name, _ in getters)) if len(getters) > 1 else None
        redo = [(i, get) for i, (_, get) in enumerate(getters) if not isinstance(get, operator.attrgetter)]
        # a required field can read None only through a getter that checks presence
        required = [i for i, _ in redo if not fields[i].schema.optional]

        def checked(m: Any) -> Any:  # Struct.put names the field a missing required value is for
            out = Struct(schema)
            for name, get in getters:
                out.put(name, get(m))
            return out

        def message(m: Any) -> Any:
            if take_all is None:
                return checked(m)
            values = [*take_all(m)]
            for i, get in redo:
                values[i] = get(m)
            for i in required:
                if values[i] is None:
                    return checked(m)
            # the values are of their fields' types (protobuf's own typed fields, converted above)
            out: Struct = _new(Struct)
            out.schema = schema
            out._values = values
            return out

        return message

    def _field_out(self, schema: Schema, proto: Any) -> Convert:
        name = proto.name
        if schema.type is Type.MAP:
            entry = proto.message_type
            key_out = self._value_out(schema.key_schema, entry.fields_by_name["key"])
            value_out = self._value_out(schema.value_schema, entry.fields_by_name["value"])
            if entry.GetOptions().map_entry:
                if key_out is _same and value_out is _same:

                    def plain_map(m: Any) -> Any:
                        entries = getattr(m, name)
                        return {k: entries[k] for k in entries}  # twice dict()'s speed on upb's maps

                    return plain_map
                return lambda m: {key_out(k): value_out(v) for k, v in getattr(m, name).items()}
            return lambda m: {key_out(e.key): value_out(e.value) for e in getattr(m, name)}
        if schema.type is Type.ARRAY:
            item_out = self._value_out(schema.value_schema, proto)
            return lambda m: [item_out(v) for v in getattr(m, name)]
        value_out = self._value_out(schema, proto)
        if proto.has_presence:
            return lambda m: value_out(getattr(m, name)) if m.HasField(name) else None
        if value_out is _same:
            return operator.attrgetter(name)  # read as is: _message_out reads these all in one call
        return lambda m: value_out(getattr(m, name))

    def _value_out(self, schema: Schema, proto: Any) -> Convert:
        if proto.message_type is not None:
            return self._message_out(schema, proto.message_type)
        if proto.enum_type is not None:
            names = {v.number: v.name for v in proto.enum_type.values}
            return lambda v: names.get(v, str(v))
        if schema.type is Type.FLOAT32:
            return lambda v: float(v)
        if schema.type is Type.BYTES:
            return bytes
        return _same


def _same(value: Any) -> Any:
    return value


_WELL_KNOWN: Final = frozenset(
    ("google.protobuf.Timestamp", "google.type.Date", "google.type.TimeOfDay", "confluent.type.Decimal")
)


def _generated(name: str, lines: list[str], scope: dict[str, Any]) -> Callable[..., Any]:
    exec("\n".join(lines), scope)  # source built from field indexes and repr()'d names only
    function: Callable[..., Any] = scope[name]
    return function


def _get_attr(target: str, name: str) -> str:
    """Source reading field ``name`` of ``target``: attribute syntax where Python allows it."""
    return (
        f"{target}.{name}"
        if name.isidentifier() and not keyword.iskeyword(name)
        else f"getattr({target}, {name!r})"
    )


def _set_attr(target: str, name: str, value: str) -> str:
    if name.isidentifier() and not keyword.iskeyword(name):
        return f"{target}.{name} = {value}"
    return f"setattr({target}, {name!r}, {value})"


_new = object.__new__


def _camel(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_")) or "Field"


def _is_entry(message: Any) -> bool:
    return message.name.endswith("Entry") and [f.name for f in message.fields] == ["key", "value"]


def encode_indexes(indexes: list[int]) -> bytes:
    """Confluent's message-index array: ``[0]`` is the single byte 0, else zigzag varints (count first)."""
    if indexes == [0]:
        return b"\x00"
    return b"".join(varint((n << 1) ^ (n >> 63)) for n in (len(indexes), *indexes))


def decode_indexes(payload: bytes | memoryview) -> tuple[list[int], int]:
    """(message indexes, bytes consumed); an empty array means ``[0]``."""
    values: list[int] = []
    pos = 0
    count = None
    while count is None or len(values) < count:
        shift = result = 0
        while True:
            if pos >= len(payload):
                raise DataException("truncated Protobuf message-index array")
            byte = payload[pos]
            pos += 1
            result |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                break
        decoded = (result >> 1) ^ -(result & 1)
        if count is None:
            count = decoded
            if count == 0:
                return [0], pos
        else:
            values.append(decoded)
    return values, pos
