"""KIP-1054 ``schema.content``: a schema in the JsonConverter's config reads plain JSON messages as
Connect data (Kafka 4.2), directly and in a running sink connector."""

from __future__ import annotations

import json
from typing import Any

import pytest

from engine import Engine
from engine.api.errors import ConfigException, DataException
from engine.converters import JsonConverter
from engine.data import Schema, SchemaBuilder, Struct
from engine.testing import eventually
from engine.topics.memory import MemoryTopics
from tests.worker.probes import SINK, SINKS

SCHEMA_JSON = {
    "type": "struct",
    "name": "order",
    "optional": False,
    "fields": [
        {"field": "id", "type": "int32", "optional": False},
        {"field": "note", "type": "string", "optional": True, "default": "none"},
    ],
}
EXPECTED = (
    SchemaBuilder.struct()
    .name("order")
    .field("id", Schema.INT32_SCHEMA)
    .field("note", SchemaBuilder.string().optional().default_value("none").build())
    .build()
)


def converter(**configs: Any) -> JsonConverter:
    c = JsonConverter()
    c.configure({"schema.content": json.dumps(SCHEMA_JSON), **configs}, False)
    return c


def test_a_plain_json_message_is_read_with_the_configured_schema() -> None:
    result = converter().to_connect_data("t", b'{"id": 7, "note": "hi"}')
    assert result.schema == EXPECTED
    assert isinstance(result.value, Struct)
    assert (result.value.get("id"), result.value.get("note")) == (7, "hi")


def test_an_envelope_gives_its_payload_and_its_own_schema_is_ignored() -> None:
    envelope = {"schema": {"type": "string", "optional": False}, "payload": {"id": 3}}
    result = converter().to_connect_data("t", json.dumps(envelope).encode())
    assert result.schema == EXPECTED
    assert result.value.get("id") == 3
    assert (
        result.value.get_without_default("note") == "none"
    )  # replace.null.with.default, as Connect reads it


def test_a_message_that_does_not_fit_the_schema_is_a_data_error() -> None:
    with pytest.raises(DataException):
        converter().to_connect_data("t", b'{"id": "seven"}')


def test_a_null_message_stays_null_and_writing_is_unchanged() -> None:
    c = converter()
    assert c.to_connect_data("t", None).value is None
    written = json.loads(c.from_connect_data("t", EXPECTED, Struct(EXPECTED).put("id", 1)) or b"")
    assert set(written) == {"schema", "payload"}


def test_with_schemas_disabled_the_content_is_not_used() -> None:
    result = converter(**{"schemas.enable": "false"}).to_connect_data("t", b'{"id": 7}')
    assert (result.schema, result.value) == (None, {"id": 7})


def test_without_schema_content_plain_json_is_still_refused() -> None:
    plain = JsonConverter()
    plain.configure({}, False)
    with pytest.raises(DataException, match='requires "schema" and "payload" fields'):
        plain.to_connect_data("t", b'{"id": 7}')


@pytest.mark.parametrize("content", ["{not json", '{"fields": []}', '"int32"', "null"])
def test_a_schema_content_that_is_no_schema_is_refused_naming_the_key(content: str) -> None:
    with pytest.raises(ConfigException, match=r"^Invalid value .* for configuration schema\.content: "):
        JsonConverter().configure({"schema.content": content}, False)


def test_the_key_is_declared_as_connect_declares_it() -> None:
    key = JsonConverter().config().config_keys["schema.content"]
    assert (key.type.value, key.default, key.importance.value) == ("STRING", None, "HIGH")


async def test_a_sink_connector_receives_structs_from_plain_json() -> None:
    SINKS.clear()
    topics = MemoryTopics()
    await topics.open()
    await topics.create_topic("in", 1)
    producer = topics.producer()
    await producer.send("in", None, b'{"id": 1}', partition=0)
    await producer.send("in", None, b'{"id": 2, "note": "x"}', partition=0)
    async with Engine({"task.shutdown.graceful.timeout.ms": "1000"}, topics=topics) as engine:
        await engine.create_connector(
            "snk",
            {
                "connector.class": SINK,
                "topics": "in",
                "key.converter": "org.apache.kafka.connect.storage.StringConverter",
                "value.converter": "org.apache.kafka.connect.json.JsonConverter",
                "value.converter.schema.content": json.dumps(SCHEMA_JSON),
            },
        )
        await eventually(lambda: len(SINKS["snk"].received) == 2 if "snk" in SINKS else False)
        got = SINKS["snk"].received
        assert [r.value_schema for r in got] == [EXPECTED, EXPECTED]
        assert [(r.value.get("id"), r.value.get("note")) for r in got] == [(1, "none"), (2, "x")]
