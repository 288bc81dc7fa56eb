"""ProtobufConverter against a real registry (Apicurio) and confluent-kafka's ProtobufSerializer /
ProtobufDeserializer, both ways. Their message classes are built from the schema *their* client
fetches (``format=serialized``) in a descriptor pool holding the types Confluent's readers know
(google.protobuf.Timestamp, google.type.Date/TimeOfDay, confluent.type.Decimal) — not from ours.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.confluent.type import decimal_pb2
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory, timestamp_pb2
from google.type import date_pb2, timeofday_pb2  # type: ignore[import-untyped]

from engine.api.errors import DataException
from engine.converters import converter_for
from engine.converters.registry.protobuf import ProtobufConverter
from engine.data.builder import SchemaBuilder
from engine.data.logical import Date, Decimal, Time, Timestamp
from engine.data.schema import Schema
from engine.data.values import Struct

# the first test to ask for the registry may fetch (~115 MB, once) and start it: more than the default 60 s
pytestmark = pytest.mark.timeout(240)

ENUM = {
    "io.confluent.connect.protobuf.Enum": "Color",
    "io.confluent.connect.protobuf.Enum.RED": "0",
    "io.confluent.connect.protobuf.Enum.GREEN": "1",
}


def _row() -> tuple[Schema, Struct]:
    inner = SchemaBuilder.struct().name("shop.Inner").field("n", Schema.INT32_SCHEMA).build()
    item = SchemaBuilder.struct().name("shop.Item").field("k", Schema.STRING_SCHEMA).build()
    schema = (
        SchemaBuilder.struct()
        .name("shop.Row")
        .field("b", Schema.BOOLEAN_SCHEMA)
        .field("i32", Schema.INT32_SCHEMA)
        .field("i64", Schema.INT64_SCHEMA)
        .field("f32", Schema.FLOAT32_SCHEMA)
        .field("f64", Schema.FLOAT64_SCHEMA)
        .field("s", Schema.STRING_SCHEMA)
        .field("raw", Schema.BYTES_SCHEMA)
        .field("opt", Schema.OPTIONAL_STRING_SCHEMA)
        .field("opt_set", Schema.OPTIONAL_INT64_SCHEMA)
        .field("price", Decimal.schema(2))
        .field("day", Date.schema())
        .field("at", Time.schema())
        .field("ts", Timestamp.schema())
        .field("tags", SchemaBuilder.array(Schema.STRING_SCHEMA).build())
        .field("items", SchemaBuilder.array(item).build())
        .field("by_name", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT64_SCHEMA).build())
        .field("by_id", SchemaBuilder.map(Schema.INT32_SCHEMA, inner).build())
        .field("color", SchemaBuilder.string().parameters(ENUM).build())
        .field(
            "inner",
            SchemaBuilder.struct().name("shop.Inner").field("n", Schema.INT32_SCHEMA).optional().build(),
        )
        .build()
    )
    inner_opt = schema.field("inner").schema  # type: ignore[union-attr]
    value = (
        Struct(schema)
        .put("b", True)
        .put("i32", -5)
        .put("i64", 2**40)
        .put("f32", 1.5)
        .put("f64", 2.25)
        .put("s", "héllo")
        .put("raw", b"\x00\xff")
        .put("opt", None)
        .put("opt_set", 0)
        .put("price", decimal.Decimal("-1234.56"))
        .put("day", dt.date(2024, 2, 29))
        .put("at", dt.time(13, 14, 15, 123000))
        .put("ts", dt.datetime(2024, 2, 29, 1, 2, 3, 456000, tzinfo=dt.UTC))
        .put("tags", ["a", "b"])
        .put("items", [Struct(item).put("k", "x")])
        .put("by_name", {"x": 1})
        .put("by_id", {7: Struct(inner).put("n", 9)})
        .put("color", "GREEN")
        .put("inner", Struct(inner_opt).put("n", 3))
    )
    return schema, value


def _plain(value: Any) -> Any:
    """A Connect value without its schemas (ours read back carry the tag parameters)."""
    if isinstance(value, Struct):
        return {f.name: _plain(value.get(f.name)) for f in value.schema.fields}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


@pytest.fixture
def client(schema_registry_url: str) -> Iterator[SchemaRegistryClient]:
    with SchemaRegistryClient({"url": schema_registry_url}) as sr_client:
        yield sr_client


def _converter(url: str, **extra: Any) -> ProtobufConverter:
    converter = ProtobufConverter()
    converter.configure({"schema.registry.url": url, **extra}, False)
    return converter


def _their_class(client: SchemaRegistryClient, schema_id: int, name: str) -> Any:
    """The message class Confluent's side would have, from the registry's serialized schema."""
    text = client.get_schema(schema_id, fmt="serialized").schema_str
    pool = descriptor_pool.DescriptorPool()
    for module in (timestamp_pb2, date_pb2, timeofday_pb2, decimal_pb2):
        pool.AddSerializedFile(module.DESCRIPTOR.serialized_pb)
    pool.Add(descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(text)))  # type: ignore[arg-type]
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(name))


def _as_dict(schema: Schema, value: Struct) -> dict[str, Any]:
    """The proto3 JSON mapping of the row, written by hand for Confluent's side."""
    return {
        "b": True,
        "i32": -5,
        "i64": str(2**40),
        "f32": 1.5,
        "f64": 2.25,
        "s": "héllo",
        "raw": base64.b64encode(b"\x00\xff").decode(),
        "opt_set": "0",
        "price": {"value": base64.b64encode((-123456).to_bytes(3, "big", signed=True)).decode(), "scale": 2},
        "day": {"year": 2024, "month": 2, "day": 29},
        "at": {"hours": 13, "minutes": 14, "seconds": 15, "nanos": 123000000},
        "ts": "2024-02-29T01:02:03.456Z",
        "tags": ["a", "b"],
        "items": [{"k": "x"}],
        "by_name": {"x": "1"},
        "by_id": {"7": {"n": 9}},
        "color": "GREEN",
        "inner": {"n": 3},
    }


def test_round_trip_through_the_registry(schema_registry_url: str) -> None:
    schema, value = _row()
    topic = f"p-{uuid.uuid4().hex[:10]}"
    data = _converter(schema_registry_url).from_connect_data(topic, schema, value)
    assert data is not None
    assert data[:1] == b"\x00"
    assert data[5:6] == b"\x00"  # message index [0]
    back = _converter(schema_registry_url).to_connect_data(topic, data)
    assert back.value.schema.name == "shop.Row"
    assert _plain(back.value) == _plain(value)
    assert back.schema.field("opt").schema.optional  # type: ignore[union-attr]
    assert not back.schema.field("i32").schema.optional  # type: ignore[union-attr]


def test_ours_read_by_confluent_and_theirs_read_by_ours(
    schema_registry_url: str, client: SchemaRegistryClient
) -> None:
    schema, value = _row()
    topic = f"p-{uuid.uuid4().hex[:10]}"
    # serialized: Apicurio hands back what was registered, and Confluent's Python reader decodes
    # only base64 schemas (.proto text is compared byte for byte in test_protobuf_text.py)
    ours = _converter(schema_registry_url, **{"schema.format": "serialized"})
    data = ours.from_connect_data(topic, schema, value)
    assert data is not None
    schema_id = int.from_bytes(data[1:5], "big")
    cls = _their_class(client, schema_id, "shop.Row")
    ctx = SerializationContext(topic, MessageField.VALUE)
    message = ProtobufDeserializer(cls, {}, client)(data, ctx)
    as_dict = json_format.MessageToDict(message, preserving_proto_field_name=True)
    assert as_dict == _as_dict(schema, value)

    other = f"p-{uuid.uuid4().hex[:10]}"
    theirs = json_format.ParseDict(_as_dict(schema, value), cls())
    serialized = ProtobufSerializer(cls, client, {"auto.register.schemas": True})(
        theirs, SerializationContext(other, MessageField.VALUE)
    )
    back = _converter(schema_registry_url).to_connect_data(other, serialized)
    assert _plain(back.value) == _plain(value)


def test_the_java_name_resolves(schema_registry_url: str) -> None:
    converter = converter_for(
        "io.confluent.connect.protobuf.ProtobufConverter", {"schema.registry.url": schema_registry_url}, False
    )
    assert type(converter) is ProtobufConverter


def test_a_top_level_schema_no_wrapper_holds_is_refused(schema_registry_url: str) -> None:
    with pytest.raises(DataException, match="Protobuf needs a struct at the top level"):
        _converter(schema_registry_url).from_connect_data("t", Date.schema(), dt.date(2024, 1, 1))
