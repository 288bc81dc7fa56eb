"""Avro schemas and values mapped as Confluent's ``AvroData`` maps them, under ``connect.meta.data`` and
``scrub.invalid.names``; the scrubbed names read by Confluent's own deserializer on a real registry; and
the compiled struct paths (a struct of an equal schema object, a default, a missing field).
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext

from engine.api.errors import DataException
from engine.converters.registry.avro import AvroConverter
from engine.converters.registry.avro_data import AvroData, scrub_name
from engine.data.builder import SchemaBuilder
from engine.data.schema import Schema
from engine.data.values import Struct


def _small() -> Schema:
    return (
        SchemaBuilder.struct()
        .name("com.example.Small")
        .field("tiny", Schema.INT8_SCHEMA)
        .field("note", SchemaBuilder.string().doc("a note").parameter("origin", "crm").build())
        .build()
    )


def test_without_connect_meta_data_int8_is_a_plain_int_as_confluent_writes_it() -> None:
    written = AvroData(connect_meta_data=False).from_connect_schema(_small())
    assert written["fields"][0]["type"] == "int"  # Confluent adds connect.type only with the metadata
    with_meta = AvroData().from_connect_schema(_small())
    assert with_meta["fields"][0]["type"] == {"type": "int", "connect.type": "int8"}


def test_without_connect_meta_data_connect_doc_and_parameters_are_not_read() -> None:
    avro = AvroData().from_connect_schema(_small())
    note = AvroData(connect_meta_data=False).to_connect_schema(avro).field("note")
    assert note is not None
    assert note.schema.doc is None
    assert note.schema.parameters is None or "origin" not in note.schema.parameters
    kept = AvroData().to_connect_schema(avro).field("note")
    assert kept is not None
    assert kept.schema.doc == "a note"
    assert (kept.schema.parameters or {})["origin"] == "crm"


@pytest.mark.parametrize(
    ("name", "scrubbed"),
    [
        ("valid_Name9", "valid_Name9"),
        ("9lives", "x9lives"),
        ("my-field", "my_field"),
        ("two words", "two_words"),
        ("caf\u00e9", "caf_C3_A9"),
        ("a~b", "a_7Eb"),
        ("", ""),
    ],
)
def test_scrub_name_is_confluents_do_scrub_name(name: str, scrubbed: str) -> None:
    assert scrub_name(name) == scrubbed


def test_scrub_invalid_names_scrubs_record_namespace_and_field_names() -> None:
    schema = (
        SchemaBuilder.struct()
        .name("com.my-org.1Order")
        .field("order-id", Schema.INT64_SCHEMA)
        .field("2nd", Schema.STRING_SCHEMA)
        .build()
    )
    avro = AvroData(scrub_invalid_names=True).from_connect_schema(schema)
    assert (avro["namespace"], avro["name"]) == ("com.my_org", "x1Order")
    assert [f["name"] for f in avro["fields"]] == ["order_id", "x2nd"]
    value = AvroData(scrub_invalid_names=True).to_avro(schema)(
        Struct(schema).put("order-id", 7).put("2nd", "b")
    )
    assert value == {"order_id": 7, "x2nd": "b"}


def test_scrubbed_names_are_what_confluents_deserializer_reads(schema_registry_url: str) -> None:
    schema = SchemaBuilder.struct().name("com.example.Row").field("first name", Schema.STRING_SCHEMA).build()
    topic = f"t-{uuid.uuid4().hex[:10]}"
    converter = AvroConverter()
    converter.configure({"schema.registry.url": schema_registry_url, "scrub.invalid.names": True}, False)
    data = converter.from_connect_data(topic, schema, Struct(schema).put("first name", "Ada"))
    with SchemaRegistryClient({"url": schema_registry_url}) as client:
        registered = json.loads(client.get_latest_version(f"{topic}-value").schema.schema_str or "{}")
        assert [f["name"] for f in registered["fields"]] == ["first_name"]
        read = AvroDeserializer(client)(data, SerializationContext(topic, MessageField.VALUE))
    assert read == {"first_name": "Ada"}
    back = converter.to_connect_data(topic, data)
    assert back.value.get("first_name") == "Ada"


def _defaults() -> Schema:
    return (
        SchemaBuilder.struct()
        .name("com.example.D")
        .field("n", SchemaBuilder.int32().default_value(42).build())
        .field("raw", Schema.BYTES_SCHEMA)
        .build()
    )


def test_the_compiled_writer_fills_defaults_converts_fields_and_takes_an_equal_schema_object() -> None:
    to_avro = AvroData().to_avro(_defaults())
    other = _defaults()  # equal, not the same object
    assert to_avro(Struct(other).put("raw", bytearray(b"ab"))) == {"n": 42, "raw": b"ab"}
    assert to_avro(None) is None


def test_the_compiled_writer_refuses_what_is_not_a_struct() -> None:
    with pytest.raises(DataException, match=r"Expected a Struct for schema com\.example\.D, got dict"):
        AvroData().to_avro(_defaults())({"n": 1, "raw": b""})


def test_the_compiled_reader_reads_a_dict_by_name_when_its_fields_are_not_the_schemas() -> None:
    schema = _defaults()
    to_connect = AvroData().to_connect(schema, None)
    read: Any = to_connect({"raw": b"x", "n": 5, "extra": 1})
    assert (read.get("n"), read.get("raw")) == (5, b"x")
    assert to_connect({"n": 1, "raw": b"y"}).get("raw") == b"y"
