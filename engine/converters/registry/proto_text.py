"""Protobuf schemas as ``.proto`` text, both ways: a ``FileDescriptorProto`` printed as ``.proto``
source (what Java's ProtobufConverter registers), and ``.proto`` source with its imports compiled
back into ``FileDescriptorProto``\\s by protoc.

protoc comes from ``grpcio-tools`` (the ``registry`` extra): it is the reference compiler, in a
wheel for every platform, so imports, well-known types, options, proto2 and proto3 read exactly as
Java's converter wrote them, with no translation of a third-party syntax tree. It runs as a child
process (``python -m grpc_tools.protoc``), awaited, once per new schema: its errors come back as
text for the ``DataException``, and the event loop never waits for it. Files a registry never
holds because every reader knows them (``google/protobuf/*``, shipped with protoc;
``google/type/date.proto``, ``google/type/timeofday.proto``, ``confluent/type/decimal.proto`` and
``confluent/meta.proto``, written here) are put beside the schema's own.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from engine.api.errors import DataException
from engine.converters.registry.proto_meta import meta_params

__all__ = ["KNOWN_FILES", "compile_proto", "is_builtin", "proto_text"]

_SCALARS: Final = {
    1: "double",
    2: "float",
    3: "int64",
    4: "uint64",
    5: "int32",
    6: "fixed64",
    7: "fixed32",
    8: "bool",
    9: "string",
    12: "bytes",
    13: "uint32",
    15: "sfixed32",
    16: "sfixed64",
    17: "sint32",
    18: "sint64",
}
_TYPE_GROUP, _TYPE_MESSAGE, _TYPE_ENUM = 10, 11, 14
_LABEL_REPEATED, _LABEL_REQUIRED = 3, 2
_INDENT: Final = "  "

KNOWN_FILES: Final = {
    "google/type/date.proto": (
        'syntax = "proto3";\npackage google.type;\n\n'
        "message Date {\n  int32 year = 1;\n  int32 month = 2;\n  int32 day = 3;\n}\n"
    ),
    "google/type/timeofday.proto": (
        'syntax = "proto3";\npackage google.type;\n\n'
        "message TimeOfDay {\n  int32 hours = 1;\n  int32 minutes = 2;\n  int32 seconds = 3;\n"
        "  int32 nanos = 4;\n}\n"
    ),
    "confluent/type/decimal.proto": (
        'syntax = "proto3";\npackage confluent.type;\n\n'
        "message Decimal {\n  bytes value = 1;\n  uint32 precision = 2;\n  int32 scale = 3;\n}\n"
    ),
    "confluent/meta.proto": (
        'syntax = "proto3";\npackage confluent;\n\nimport "google/protobuf/descriptor.proto";\n\n'
        "message Meta {\n  string doc = 1;\n  map<string, string> params = 2;\n  repeated string tags = 3;\n"
        "  repeated Rule rules = 4;\n}\n\n"
        "message Rule {\n  string name = 1;\n  string doc = 2;\n  string expr = 3;\n  string sql = 4;\n}\n\n"
        "extend google.protobuf.FileOptions {\n  Meta file_meta = 1088;\n}\n"
        "extend google.protobuf.MessageOptions {\n  Meta message_meta = 1088;\n}\n"
        "extend google.protobuf.FieldOptions {\n  Meta field_meta = 1088;\n}\n"
        "extend google.protobuf.EnumOptions {\n  Meta enum_meta = 1088;\n}\n"
        "extend google.protobuf.EnumValueOptions {\n  Meta enum_value_meta = 1088;\n}\n"
    ),
}
"""The files every Confluent reader knows without a registry reference (their published definitions)."""


def is_builtin(name: str) -> bool:
    """An import every reader resolves without a reference (confluent-kafka's ``_is_builtin``)."""
    return name.startswith(("confluent/", "google/protobuf/", "google/type/"))


# -- FileDescriptorProto -> .proto text ----------------------------------------------------------------


def proto_text(fdp: Any) -> str:
    """``fdp`` as ``.proto`` source that protoc compiles back to the same descriptor."""
    syntax = fdp.syntax or "proto2"
    lines = [f'syntax = "{syntax}";']
    if fdp.package:
        lines.append(f"package {fdp.package};")
    if fdp.dependency:
        lines.append("")
        public = set(fdp.public_dependency)
        for index, dependency in enumerate(fdp.dependency):
            lines.append(f'import {"public " if index in public else ""}"{dependency}";')
    for message in fdp.message_type:
        lines.append("")
        _message(message, 0, syntax, lines)
    for enum in fdp.enum_type:
        lines.append("")
        _enum(enum, 0, lines)
    extendees: dict[str, list[Any]] = {}
    for extension in fdp.extension:
        extendees.setdefault(extension.extendee, []).append(extension)
    for extendee, extensions in extendees.items():
        lines.append("")
        lines.append(f"extend {extendee} {{")
        lines.extend(f"{_INDENT}{_field(e, {}, syntax, in_oneof=False)}" for e in extensions)
        lines.append("}")
    return "\n".join(lines) + "\n"


def _message(message: Any, depth: int, syntax: str, lines: list[str]) -> None:
    pad = _INDENT * depth
    inner = pad + _INDENT
    lines.append(f"{pad}message {message.name} {{")
    # a map entry declaring types of its own cannot be written as map<K, V>: it stays a message
    # (without the map_entry option protoc refuses to read), the field a repeated one: same bytes
    entries = {
        n.name: n
        for n in message.nested_type
        if n.options.map_entry and not n.nested_type and not n.enum_type
    }
    oneofs: dict[int, list[Any]] = {}
    for field in message.field:
        if field.HasField("oneof_index") and not field.proto3_optional:
            oneofs.setdefault(field.oneof_index, []).append(field)
    printed_oneofs: set[int] = set()
    for field in message.field:
        if field.HasField("oneof_index") and not field.proto3_optional:
            index = field.oneof_index
            if index in printed_oneofs:
                continue
            printed_oneofs.add(index)
            lines.append(f"{inner}oneof {message.oneof_decl[index].name} {{")
            lines.extend(
                f"{inner}{_INDENT}{_field(m, entries, syntax, in_oneof=True)}" for m in oneofs[index]
            )
            lines.append(f"{inner}}}")
            continue
        lines.append(f"{inner}{_field(field, entries, syntax, in_oneof=False)}")
    for nested in message.nested_type:
        if nested.name not in entries:
            if nested.options.map_entry:
                nested = type(nested).FromString(nested.SerializeToString())
                nested.options.ClearField("map_entry")
            _message(nested, depth + 1, syntax, lines)
    for enum in message.enum_type:
        _enum(enum, depth + 1, lines)
    for start, end in ((r.start, r.end) for r in message.reserved_range):
        lines.append(f"{inner}reserved {start}{'' if end - 1 == start else f' to {end - 1}'};")
    lines.append(f"{pad}}}")


def _field(field: Any, entries: Mapping[str, Any], syntax: str, *, in_oneof: bool) -> str:
    type_name = field.type_name
    entry = entries.get(type_name.rpartition(".")[2]) if type_name else None
    if entry is not None and field.label == _LABEL_REPEATED:
        key, value = (next(f for f in entry.field if f.number == n) for n in (1, 2))
        kind = f"map<{_type(key)}, {_type(value)}>"
        label = ""
    else:
        kind = _type(field)
        label = ""
        if field.label == _LABEL_REPEATED:
            label = "repeated "
        elif field.label == _LABEL_REQUIRED:
            label = "required "
        elif not in_oneof and (field.proto3_optional or syntax == "proto2"):
            label = "optional "
    options = []
    if field.HasField("default_value"):
        default = field.default_value
        options.append(f'default = "{default}"' if field.type in (9, 12) else f"default = {default}")
    if field.options.HasField("packed"):
        options.append(f"packed = {'true' if field.options.packed else 'false'}")
    if field.options.deprecated:
        options.append("deprecated = true")
    if field.HasField("json_name") and field.json_name != _json_name(field.name):
        options.append(f'json_name = "{field.json_name}"')
    params = meta_params(field.options.SerializeToString())
    if params:
        pairs = ", ".join(f"{{key: {json.dumps(k)}, value: {json.dumps(v)}}}" for k, v in params.items())
        options.append(f"(confluent.field_meta) = {{params: [{pairs}]}}")
    suffix = f" [{', '.join(options)}]" if options else ""
    return f"{label}{kind} {field.name} = {field.number}{suffix};"


def _type(field: Any) -> str:
    if field.type in (_TYPE_MESSAGE, _TYPE_ENUM, _TYPE_GROUP) or (field.type_name and not field.type):
        return str(field.type_name)
    return _SCALARS[field.type]


def _enum(enum: Any, depth: int, lines: list[str]) -> None:
    pad = _INDENT * depth
    lines.append(f"{pad}enum {enum.name} {{")
    if enum.options.allow_alias:
        lines.append(f"{pad}{_INDENT}option allow_alias = true;")
    lines.extend(f"{pad}{_INDENT}{value.name} = {value.number};" for value in enum.value)
    lines.append(f"{pad}}}")


def _json_name(name: str) -> str:
    parts = name.split("_")
    return parts[0] + "".join(p[:1].upper() + p[1:] for p in parts[1:])


# -- .proto text -> FileDescriptorProtos ----------------------------------------------------------------


async def compile_proto(main: str, files: Mapping[str, str], *, main_name: str = "schema.proto") -> list[Any]:
    """The ``FileDescriptorProto``\\s of ``main`` and everything it imports, dependencies first.

    ``files`` maps import paths to their source (a schema's references, resolved); the known
    files fill in what they leave out. A file protoc refuses raises ``DataException`` with its
    message.
    """
    try:
        import grpc_tools
    except ImportError:
        raise DataException(
            "the registry holds this Protobuf schema as .proto text, and reading .proto text needs "
            "grpcio-tools (its protoc): pip install 'connect-engine[registry]'"
        ) from None
    from google.protobuf import descriptor_pb2

    include = Path(grpc_tools.__file__).parent / "_proto"
    with tempfile.TemporaryDirectory(prefix="connect-engine-proto-") as work:
        root = Path(work) / "src"
        for name, text in {**KNOWN_FILES, **files, main_name: main}.items():
            target = root / name
            if not target.resolve().is_relative_to(root.resolve()):
                raise DataException(f"Protobuf import path {name!r} leaves the schema's directory")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        out = Path(work) / "set.pb"
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            f"--proto_path={root}",
            f"--proto_path={include}",
            "--include_imports",
            f"--descriptor_set_out={out}",
            main_name,
            cwd=work,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={**os.environ, "PYTHONWARNINGS": "ignore"},
        )
        stdout, stderr = await process.communicate()
        if process.returncode != 0:
            message = (stderr or stdout).decode(errors="replace").strip().replace(str(root) + os.sep, "")
            raise DataException(f"protoc refused the .proto schema: {message}")
        descriptor_set = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())
    return list(descriptor_set.file)
