"""Non-struct Connect values as Protobuf's wrapper messages (``google/protobuf/wrappers.proto``), and
back, as Confluent's ProtobufConverter reads them with ``wrapper.for.raw.primitives=true``.

Protobuf has no top-level scalar: a STRING value travels as a ``google.protobuf.StringValue``, the
registered schema being ``wrappers.proto`` itself and the message indexes naming the wrapper, which
is what confluent-kafka's ProtobufSerializer writes for such a message. Reading, a root wrapper is
the bare (optional) primitive; with ``wrapper.for.raw.primitives=false`` it stays a struct with
its one ``value`` field.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from engine.data.builder import SchemaBuilder
from engine.data.schema import Schema, Type

__all__ = ["WRAPPED_TYPES", "unwrapped_schema", "wrapper_file", "wrapper_name"]

WRAPPED_TYPES: Final = {
    Type.BOOLEAN: "BoolValue",
    Type.INT8: "Int32Value",
    Type.INT16: "Int32Value",
    Type.INT32: "Int32Value",
    Type.INT64: "Int64Value",
    Type.FLOAT32: "FloatValue",
    Type.FLOAT64: "DoubleValue",
    Type.STRING: "StringValue",
    Type.BYTES: "BytesValue",
}
_READ_AS: Final[dict[str, Callable[[], SchemaBuilder]]] = {
    "google.protobuf.BoolValue": SchemaBuilder.bool,
    "google.protobuf.Int32Value": SchemaBuilder.int32,
    "google.protobuf.UInt32Value": SchemaBuilder.int64,
    "google.protobuf.Int64Value": SchemaBuilder.int64,
    "google.protobuf.UInt64Value": SchemaBuilder.int64,
    "google.protobuf.FloatValue": SchemaBuilder.float32,
    "google.protobuf.DoubleValue": SchemaBuilder.float64,
    "google.protobuf.StringValue": SchemaBuilder.string,
    "google.protobuf.BytesValue": SchemaBuilder.bytes,
}


def wrapper_name(schema: Schema) -> str | None:
    """The wrapper message a non-struct ``schema`` travels in (``None``: it cannot be wrapped)."""
    if schema.name is not None:  # a logical type (Decimal, Date, ...) or an enum: no wrapper holds it
        return None
    found = WRAPPED_TYPES.get(schema.type)
    return None if found is None else f"google.protobuf.{found}"


def wrapper_file() -> tuple[Any, dict[str, int]]:
    """(``wrappers.proto`` as a ``FileDescriptorProto``, message index by full name)."""
    from google.protobuf import descriptor_pb2, wrappers_pb2

    fdp = descriptor_pb2.FileDescriptorProto.FromString(wrappers_pb2.DESCRIPTOR.serialized_pb)
    return fdp, {f"{fdp.package}.{m.name}": i for i, m in enumerate(fdp.message_type)}


def unwrapped_schema(descriptor: Any) -> Schema | None:
    """The optional primitive a root wrapper message reads as, or ``None`` if it is no wrapper."""
    make = _READ_AS.get(descriptor.full_name)
    if make is None or [f.name for f in descriptor.fields] != ["value"]:
        return None
    return make().optional().build()
