"""Schema references (``references`` in the registry API) for Avro and JSON Schema, against a real
registry (Apicurio) and confluent-kafka's serdes both ways: theirs, written under a schema that
uses a type from another subject, read by ours; ours, written under that same schema
(``use.latest.version``), read by theirs. Protobuf's imports are in ``test_protobuf_text.py``."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka.schema_registry import Schema as RegistrySchema
from confluent_kafka.schema_registry import SchemaReference, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from engine.api.errors import DataException
from engine.converters.registry.avro import AvroConverter
from engine.converters.registry.json_schema import JsonSchemaConverter
from engine.converters.registry.references import inline_avro, inline_json_schema
from engine.data.values import Struct
from tests.converters.faulty_registry import FaultyRegistry

pytestmark = pytest.mark.timeout(240)

ADDRESS_AVRO = {
    "type": "record",
    "name": "Address",
    "namespace": "com.example",
    "fields": [{"name": "city", "type": "string"}, {"name": "zip", "type": "int"}],
}
CUSTOMER_AVRO = {
    "type": "record",
    "name": "Customer",
    "namespace": "com.example",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "home", "type": "Address"},  # relative to com.example
        {"name": "work", "type": ["null", "com.example.Address"], "default": None},
    ],
}
ADDRESS_JSON = {
    "type": "object",
    "title": "Address",
    "properties": {"city": {"type": "string"}, "zip": {"type": "integer"}},
    "required": ["city", "zip"],
    "additionalProperties": False,
}
CUSTOMER_JSON = {
    "type": "object",
    "title": "Customer",
    "properties": {"id": {"type": "integer"}, "home": {"$ref": "address.json"}},
    "required": ["id", "home"],
    "additionalProperties": False,
}


@pytest.fixture
def client(schema_registry_url: str) -> Iterator[SchemaRegistryClient]:
    with SchemaRegistryClient({"url": schema_registry_url}) as sr_client:
        yield sr_client


def _plain(value: Any) -> Any:
    if isinstance(value, Struct):
        return {f.name: _plain(value.get(f.name)) for f in value.schema.fields}
    return value


def _register_with_reference(
    client: SchemaRegistryClient, kind: str, main: Any, referenced: Any, name: str
) -> tuple[str, RegistrySchema]:
    suffix = uuid.uuid4().hex[:10]
    ref_subject, topic = f"ref-{suffix}", f"customers-{suffix}"
    client.register_schema(ref_subject, RegistrySchema(json.dumps(referenced), kind))
    schema = RegistrySchema(json.dumps(main), kind, [SchemaReference(name, ref_subject, 1)])
    client.register_schema(f"{topic}-value", schema)
    return topic, schema


def test_avro_references_both_ways(schema_registry_url: str, client: SchemaRegistryClient) -> None:
    topic, schema = _register_with_reference(
        client, "AVRO", CUSTOMER_AVRO, ADDRESS_AVRO, "com.example.Address"
    )
    ctx = SerializationContext(topic, MessageField.VALUE)
    customer = {"id": 7, "home": {"city": "Lyon", "zip": 69001}, "work": {"city": "Oslo", "zip": 150}}
    theirs = AvroSerializer(
        client, schema, conf={"auto.register.schemas": False, "use.latest.version": True}
    )(customer, ctx)
    ours = AvroConverter()
    ours.configure(
        {
            "schema.registry.url": schema_registry_url,
            "use.latest.version": True,
            "auto.register.schemas": False,
        },
        False,
    )
    back = ours.to_connect_data(topic, theirs)
    assert back.schema is not None
    assert back.schema.field("home").schema.name == "com.example.Address"  # type: ignore[union-attr]
    assert _plain(back.value) == customer
    written = ours.from_connect_data(topic, back.schema, back.value)
    assert written == theirs  # the same id (the subject's latest) and the same bytes
    assert AvroDeserializer(client)(written, ctx) == customer


def test_json_schema_references_both_ways(schema_registry_url: str, client: SchemaRegistryClient) -> None:
    topic, schema = _register_with_reference(client, "JSON", CUSTOMER_JSON, ADDRESS_JSON, "address.json")
    ctx = SerializationContext(topic, MessageField.VALUE)
    customer = {"id": 7, "home": {"city": "Lyon", "zip": 69001}}
    theirs = JSONSerializer(
        schema, client, conf={"auto.register.schemas": False, "use.latest.version": True}
    )(customer, ctx)
    ours = JsonSchemaConverter()
    ours.configure(
        {
            "schema.registry.url": schema_registry_url,
            "use.latest.version": True,
            "auto.register.schemas": False,
            "json.fail.invalid.schema": True,
        },
        False,
    )
    back = ours.to_connect_data(topic, theirs)
    assert back.schema is not None
    assert back.schema.field("home").schema.name == "Address"  # type: ignore[union-attr]
    assert _plain(back.value) == customer
    written = ours.from_connect_data(topic, back.schema, back.value)
    assert written is not None
    assert written[:5] == theirs[:5]
    assert JSONDeserializer(None, schema_registry_client=client)(written, ctx) == customer


def test_a_reference_that_fails_to_resolve_names_it_with_its_subject(
    schema_registry_url: str, client: SchemaRegistryClient
) -> None:
    suffix = uuid.uuid4().hex[:10]
    ref_subject = f"ref-{suffix}"
    client.register_schema(ref_subject, RegistrySchema(json.dumps(ADDRESS_AVRO), "AVRO"))
    schema = RegistrySchema(
        json.dumps(CUSTOMER_AVRO), "AVRO", [SchemaReference("com.example.Address", ref_subject, 1)]
    )
    schema_id = client.register_schema(f"c-{suffix}-value", schema)
    faulty = FaultyRegistry(schema_registry_url, fail_first=0)
    faulty.refuse = f"/subjects/{ref_subject}/versions/1"  # that one answers 404 from here on
    with faulty.running():
        ours = AvroConverter()
        ours.configure({"schema.registry.url": faulty.url}, False)
        with pytest.raises(
            DataException,
            match=rf"schema id {schema_id} cannot be converted.*com.example.Address.*subject {ref_subject}, "
            r"version 1.*error code: 40402",
        ):
            ours.to_connect_data("t", b"\x00" + schema_id.to_bytes(4, "big") + b"\x02")


def test_inlining_defines_each_named_type_once_and_refuses_ref_cycles() -> None:
    inlined = inline_avro(CUSTOMER_AVRO, {"com.example.Address": json.dumps(ADDRESS_AVRO)})
    fields = {f["name"]: f["type"] for f in inlined["fields"]}
    assert fields["home"]["name"] == "com.example.Address"
    assert fields["work"] == ["null", "com.example.Address"]  # defined once, then used by name
    cyclic = {"type": "object", "properties": {"next": {"$ref": "#"}}}
    with pytest.raises(DataException, match=r"\$ref # refers to itself"):
        inline_json_schema(cyclic, {})
    local = {
        "definitions": {"a": {"type": "string"}},
        "type": "object",
        "properties": {"x": {"$ref": "#/definitions/a"}},
    }
    assert inline_json_schema(local, {})["properties"]["x"] == {"type": "string"}
    with pytest.raises(DataException, match=r"names no schema reference"):
        inline_json_schema({"$ref": "other.json"}, {})
