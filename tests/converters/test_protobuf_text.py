"""ProtobufConverter with ``.proto`` text schemas (what Java's ProtobufConverter registers) and schema
references, against a real registry (Apicurio) and confluent-kafka's ProtobufSerializer.

Apicurio hands a schema back as it was registered (it ignores ``format=serialized``), so Confluent's
Python deserializer, which decodes only base64 schemas, cannot read a text schema from it; the
payload bytes are compared instead: ours written under the ``.proto`` text we registered against
theirs written by ProtobufSerializer for a message class compiled from that same text.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory

from engine.api.errors import DataException
from engine.converters.registry.proto_text import KNOWN_FILES, compile_proto, proto_text
from engine.converters.registry.protobuf import ProtobufConverter
from engine.data.values import Struct
from tests.converters.test_protobuf_converter import _as_dict, _plain, _row

pytestmark = pytest.mark.timeout(240)

ADDRESS = (
    'syntax = "proto3";\npackage common;\n\nmessage Address {\n  string city = 1;\n  int32 zip = 2;\n}\n'
)
ORDER = (
    'syntax = "proto3";\npackage shop;\n\nimport "common/address.proto";\nimport "google/protobuf/timestamp.proto";\n\n'
    "message Order {\n  int64 id = 1;\n  common.Address ship_to = 2;\n  google.protobuf.Timestamp at = 3;\n"
    "  repeated string tags = 4;\n  Status status = 5;\n  enum Status {\n    NEW = 0;\n    SHIPPED = 1;\n  }\n}\n"
    "message Other {\n  string note = 1;\n}\n"
)


@pytest.fixture
def client(schema_registry_url: str) -> Iterator[SchemaRegistryClient]:
    with SchemaRegistryClient({"url": schema_registry_url}) as sr_client:
        yield sr_client


def _converter(url: str, **extra: Any) -> ProtobufConverter:
    converter = ProtobufConverter()
    converter.configure({"schema.registry.url": url, **extra}, False)
    return converter


def _classes(main: str, files: dict[str, str], name: str, main_name: str = "main.proto") -> Any:
    """The message class ``name`` compiled by protoc from ``main`` and its imports, in a pool of its own."""
    compiled = asyncio.run(compile_proto(main, files, main_name=main_name))
    pool = descriptor_pool.DescriptorPool()
    for fdp in compiled:
        pool.Add(fdp)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(name))


def _latest_text(client: SchemaRegistryClient, subject: str) -> str:
    text = client.get_latest_version(subject).schema.schema_str
    assert text is not None
    return text


def _post(client: SchemaRegistryClient, subject: str, body: dict[str, Any]) -> int:
    """Register as Java's converter does: the raw REST call, ``.proto`` text and references."""
    answer = client._rest_client.post(f"subjects/{subject}/versions", body)
    return int(answer["id"])


def test_registered_as_proto_text_by_default_and_read_back(
    schema_registry_url: str, client: SchemaRegistryClient
) -> None:
    schema, value = _row()
    topic = f"p-{uuid.uuid4().hex[:10]}"
    data = _converter(schema_registry_url).from_connect_data(topic, schema, value)
    assert data is not None
    registered = _latest_text(client, f"{topic}-value")
    assert registered.startswith('syntax = "proto3";\npackage shop;\n')
    assert "message Row {" in registered
    assert "map<string, int64> by_name = 16;" in registered
    assert "optional string opt = 8;" in registered
    back = _converter(schema_registry_url).to_connect_data(topic, data)
    assert _plain(back.value) == _plain(value)
    serialized = _converter(schema_registry_url, **{"schema.format": "serialized"})
    again = serialized.from_connect_data(f"p-{uuid.uuid4().hex[:10]}", schema, value)
    assert again is not None
    assert again[5:] == data[5:]  # the same bytes whichever form the schema was registered in
    assert _plain(serialized.to_connect_data(topic, data).value) == _plain(value)


def test_proto_text_payload_is_byte_for_byte_confluents(
    schema_registry_url: str, client: SchemaRegistryClient
) -> None:
    schema, value = _row()
    topic = f"p-{uuid.uuid4().hex[:10]}"
    data = _converter(schema_registry_url).from_connect_data(topic, schema, value)
    assert data is not None
    text = _latest_text(client, f"{topic}-value")
    assert "repeated ByIdEntry by_id = 17;" in text  # its entry declares Inner: no map<> syntax for it
    expected = {**_as_dict(schema, value), "by_id": [{"key": 7, "value": {"n": 9}}]}
    cls = _classes(text, {}, "shop.Row", main_name="shop/Row.proto")
    theirs = json_format.ParseDict(expected, cls())
    other = f"p-{uuid.uuid4().hex[:10]}"
    serialized = ProtobufSerializer(cls, client, {"auto.register.schemas": True})(
        theirs, SerializationContext(other, MessageField.VALUE)
    )
    assert serialized[5:] == data[5:]  # message index [0], then the message: Confluent's bytes
    parsed = cls.FromString(data[6:])
    assert json_format.MessageToDict(parsed, preserving_proto_field_name=True) == expected
    # theirs, framed with the id of our .proto text schema, read by ours
    framed = data[:5] + serialized[5:]
    assert _plain(_converter(schema_registry_url).to_connect_data(topic, framed).value) == _plain(value)


def test_java_style_proto_text_with_a_reference_and_a_well_known_import(
    schema_registry_url: str, client: SchemaRegistryClient
) -> None:
    suffix = uuid.uuid4().hex[:10]
    address_subject, order_subject = f"address-{suffix}", f"orders-{suffix}-value"
    _post(client, address_subject, {"schema": ADDRESS, "schemaType": "PROTOBUF"})
    reference = {"name": "common/address.proto", "subject": address_subject, "version": 1}
    order_id = _post(
        client, order_subject, {"schema": ORDER, "schemaType": "PROTOBUF", "references": [reference]}
    )
    cls = _classes(ORDER, {"common/address.proto": ADDRESS}, "shop.Order")
    message = json_format.ParseDict(
        {
            "id": "7",
            "ship_to": {"city": "Lyon", "zip": 69001},
            "at": "2024-02-29T01:02:03.456Z",
            "tags": ["a"],
            "status": "SHIPPED",
        },
        cls(),
    )
    framed = b"\x00" + order_id.to_bytes(4, "big") + b"\x00" + message.SerializeToString()
    back = _converter(schema_registry_url).to_connect_data(f"orders-{suffix}", framed)
    assert back.schema is not None
    assert back.schema.name == "shop.Order"
    assert back.schema.field("ship_to").schema.name == "common.Address"  # type: ignore[union-attr]
    value = back.value
    assert isinstance(value, Struct)
    assert value.get("id") == 7
    assert _plain(value.get("ship_to")) == {"city": "Lyon", "zip": 69001}
    assert value.get("at") == dt.datetime(2024, 2, 29, 1, 2, 3, 456000, tzinfo=dt.UTC)
    assert value.get("tags") == ["a"]
    assert value.get("status") == "SHIPPED"
    # the second message of the file: message index [1]
    other_cls = _classes(ORDER, {"common/address.proto": ADDRESS}, "shop.Other")
    second = b"\x00" + order_id.to_bytes(4, "big") + b"\x02\x02" + other_cls(note="n").SerializeToString()
    other = _converter(schema_registry_url).to_connect_data(f"orders-{suffix}", second)
    assert other.schema is not None
    assert other.schema.name == "shop.Other"
    assert _plain(other.value) == {"note": "n"}


def test_confluents_serialized_schema_with_a_registered_dependency_is_read(
    schema_registry_url: str, client: SchemaRegistryClient
) -> None:
    cls = _classes(ORDER, {"common/address.proto": ADDRESS}, "shop.Order", main_name="shop/order.proto")
    topic = f"orders-{uuid.uuid4().hex[:10]}"
    message = json_format.ParseDict({"id": "3", "ship_to": {"city": "Oslo"}}, cls())
    data = ProtobufSerializer(cls, client, {"auto.register.schemas": True})(
        message, SerializationContext(topic, MessageField.VALUE)
    )
    registered = client.get_latest_version(f"{topic}-value").schema
    assert [r.name for r in registered.references or ()] == [
        "common/address.proto"
    ]  # registered as a reference
    back = _converter(schema_registry_url).to_connect_data(topic, data)
    assert _plain(back.value.get("ship_to")) == {"city": "Oslo", "zip": 0}


def test_use_latest_version_writes_under_a_proto_text_schema(
    schema_registry_url: str, client: SchemaRegistryClient
) -> None:
    schema, value = _row()
    topic = f"p-{uuid.uuid4().hex[:10]}"
    first = _converter(schema_registry_url).from_connect_data(topic, schema, value)
    assert first is not None
    latest = _converter(schema_registry_url, **{"use.latest.version": True, "auto.register.schemas": False})
    data = latest.from_connect_data(topic, schema, value)
    assert data == first


def test_a_proto_text_schema_protoc_refuses_names_protocs_message(
    schema_registry_url: str, client: SchemaRegistryClient
) -> None:
    subject = f"broken-{uuid.uuid4().hex[:10]}"
    broken = 'syntax = "proto3";\nmessage Broken {\n  Missing m = 1;\n}\n'
    schema_id = _post(client, subject, {"schema": broken, "schemaType": "PROTOBUF"})
    with pytest.raises(
        DataException, match=rf"schema id {schema_id} cannot be converted.*protoc refused.*Missing"
    ):
        _converter(schema_registry_url).to_connect_data("t", b"\x00" + schema_id.to_bytes(4, "big") + b"\x00")


def test_known_files_are_confluents_definitions() -> None:
    """The files written here for protoc declare what confluent-kafka's own descriptors declare."""
    from confluent_kafka.schema_registry.confluent import meta_pb2
    from confluent_kafka.schema_registry.confluent.type import decimal_pb2
    from google.type import date_pb2, timeofday_pb2  # type: ignore[import-untyped]

    for module in (meta_pb2, decimal_pb2, date_pb2, timeofday_pb2):
        theirs = descriptor_pb2.FileDescriptorProto.FromString(module.DESCRIPTOR.serialized_pb)
        ours = asyncio.run(compile_proto(KNOWN_FILES[theirs.name], {}, main_name=theirs.name))[-1]
        assert _shape(ours) == _shape(theirs), theirs.name


def _shape(fdp: Any) -> Any:
    """What a file declares, without options, json names and source info."""

    def fields(message: Any) -> Any:
        return (
            message.name,
            [(f.name, f.number, f.type, f.label, f.type_name.lstrip(".")) for f in message.field],
            sorted(fields(n) for n in message.nested_type),
        )

    extensions = [(e.name, e.number, e.extendee.lstrip("."), e.type_name.lstrip(".")) for e in fdp.extension]
    return fdp.package, [fields(m) for m in fdp.message_type], sorted(extensions)


def test_proto_text_round_trips_through_protoc() -> None:
    from engine.converters.registry.protobuf_data import ProtobufData

    schema, _ = _row()
    data = ProtobufData()
    fdp, _ = data.file_for(schema)
    compiled = asyncio.run(compile_proto(proto_text(fdp), {}, main_name=fdp.name))
    from_text = data.to_connect_schema(data.descriptor_in(compiled, [0]))
    from_descriptor = data.to_connect_schema(data.descriptor_in([fdp], [0]))
    assert from_text == from_descriptor
    assert json.dumps(str(from_text))  # a plain, printable schema


def test_int8_and_int16_ride_in_confluent_field_meta_both_ways(
    schema_registry_url: str, client: SchemaRegistryClient
) -> None:
    from confluent_kafka.schema_registry.confluent import meta_pb2

    from engine.data.builder import SchemaBuilder
    from engine.data.schema import Schema, Type

    schema = (
        SchemaBuilder.struct()
        .name("shop.Small")
        .field("a", Schema.INT8_SCHEMA)
        .field("b", Schema.INT16_SCHEMA)
        .field("c", Schema.OPTIONAL_INT8_SCHEMA)
        .build()
    )
    value = Struct(schema).put("a", -3).put("b", 300).put("c", 5)
    for form in ("text", "serialized"):
        topic = f"p-{uuid.uuid4().hex[:10]}"
        data = _converter(schema_registry_url, **{"schema.format": form}).from_connect_data(
            topic, schema, value
        )
        assert data is not None
        back = _converter(schema_registry_url).to_connect_data(topic, data)
        assert back.schema is not None
        assert [f.schema.type for f in back.schema.fields] == [Type.INT8, Type.INT16, Type.INT8]
        assert _plain(back.value) == {"a": -3, "b": 300, "c": 5}
    # the option is Confluent's own Meta: their generated meta_pb2 reads it from our .proto text
    topic = f"p-{uuid.uuid4().hex[:10]}"
    _converter(schema_registry_url).from_connect_data(topic, schema, value)
    registered = _latest_text(client, f"{topic}-value")
    assert 'import "confluent/meta.proto";' in registered
    assert '[(confluent.field_meta) = {params: [{key: "connect.type", value: "int8"}]}]' in registered
    compiled = asyncio.run(compile_proto(registered, {}, main_name="shop/Small.proto"))
    pool = descriptor_pool.DescriptorPool()
    pool.AddSerializedFile(descriptor_pb2.DESCRIPTOR.serialized_pb)
    pool.AddSerializedFile(meta_pb2.DESCRIPTOR.serialized_pb)
    for fdp in compiled:
        if fdp.name not in ("google/protobuf/descriptor.proto", "confluent/meta.proto"):
            pool.Add(fdp)
    options = pool.FindMessageTypeByName("shop.Small").fields_by_name["b"].GetOptions()
    field_meta = meta_pb2.field_meta  # type: ignore[attr-defined]  # generated code, no stubs
    assert dict(options.Extensions[field_meta].params) == {"connect.type": "int16"}


@pytest.mark.parametrize(
    ("connect", "value", "wrapper"),
    [
        ("STRING", "héllo", "StringValue"),
        ("INT64", 2**40, "Int64Value"),
        ("INT32", -7, "Int32Value"),
        ("BOOLEAN", True, "BoolValue"),
        ("FLOAT64", 2.5, "DoubleValue"),
        ("BYTES", b"\x00\xff", "BytesValue"),
    ],
)
def test_non_struct_values_travel_in_wrapper_messages_both_ways(
    schema_registry_url: str, client: SchemaRegistryClient, connect: str, value: Any, wrapper: str
) -> None:
    from google.protobuf import wrappers_pb2

    from engine.converters.registry.protobuf_data import decode_indexes
    from engine.data.schema import Schema

    schema = getattr(Schema, f"{connect}_SCHEMA")
    cls = getattr(wrappers_pb2, wrapper)
    ctx_topic = f"w-{uuid.uuid4().hex[:10]}"
    ctx = SerializationContext(ctx_topic, MessageField.VALUE)
    ours = _converter(schema_registry_url, **{"schema.format": "serialized"}).from_connect_data(
        ctx_topic, schema, value
    )
    assert ours is not None
    # Confluent's Python reader cannot load a schema that is wrappers.proto itself (its pool already
    # has the file: "duplicate symbol"), so ours is read with the wrapper class after the indexes
    indexes, used = decode_indexes(memoryview(ours)[5:])
    assert indexes == [[m.name for m in cls.DESCRIPTOR.file.message_types_by_name.values()].index(wrapper)]
    assert cls.FromString(ours[5 + used :]).value == value
    theirs = ProtobufSerializer(cls, client, {"auto.register.schemas": True})(cls(value=value), ctx)
    assert theirs[5:] == ours[5:]  # the wrapper's message indexes, then the same message bytes
    back = _converter(schema_registry_url).to_connect_data(ctx_topic, theirs)
    assert back.schema is not None
    assert back.schema.optional
    assert (
        back.schema.type.name == connect
    )  # the schema of the wrapper the indexes name, not the file's first
    assert back.value == value
    text_topic = f"w-{uuid.uuid4().hex[:10]}"
    as_text = _converter(schema_registry_url).from_connect_data(text_topic, schema, value)
    assert as_text is not None
    assert _converter(schema_registry_url).to_connect_data(text_topic, as_text).value == value
    kept = _converter(schema_registry_url, **{"wrapper.for.raw.primitives": False}).to_connect_data(
        text_topic, as_text
    )
    assert isinstance(kept.value, Struct)
    assert kept.value.get("value") == value
