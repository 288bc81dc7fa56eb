"""The schema-registry converters against a real registry (Apicurio, ``tests/schema_registry.py``) and
Confluent's own Python serdes (``confluent-kafka``): bytes ours write they read, and the reverse,
over a table of schemas covering every Connect type; the caches; and every kind of bad input.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import subprocess
import sys
import urllib.parse
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from engine.api.errors import ConfigException, DataException
from engine.converters import converter_for
from engine.converters.registry.avro import AvroConverter
from engine.converters.registry.json_schema import JsonSchemaConverter
from engine.converters.registry.json_schema_data import JsonSchemaData
from engine.data.builder import SchemaBuilder
from engine.data.logical import Date, Decimal, Time, Timestamp
from engine.data.schema import Schema, SchemaAndValue
from engine.data.values import Struct
from tests.integration.tls import make_certificates, terminating
from tests.schema_registry import free_port

# the first test to ask for the registry may fetch (~115 MB, once) and start it: more than the default 60 s
pytestmark = pytest.mark.timeout(240)

ENUM = {
    "io.confluent.connect.avro.Enum": "com.example.Color",
    "io.confluent.connect.avro.Enum.RED": "RED",
    "io.confluent.connect.avro.Enum.GREEN": "GREEN",
}


def _row() -> tuple[Schema, Struct]:
    inner = SchemaBuilder.struct().name("com.example.Inner").field("n", Schema.INT32_SCHEMA).build()
    schema = (
        SchemaBuilder.struct()
        .name("com.example.Row")
        .version(3)
        .doc("every type")
        .field("b", Schema.BOOLEAN_SCHEMA)
        .field("i8", Schema.INT8_SCHEMA)
        .field("i16", Schema.INT16_SCHEMA)
        .field("i32", Schema.INT32_SCHEMA)
        .field("i64", Schema.INT64_SCHEMA)
        .field("f32", Schema.FLOAT32_SCHEMA)
        .field("f64", Schema.FLOAT64_SCHEMA)
        .field("s", Schema.STRING_SCHEMA)
        .field("raw", Schema.BYTES_SCHEMA)
        .field("opt", Schema.OPTIONAL_STRING_SCHEMA)
        .field("opt_set", Schema.OPTIONAL_INT64_SCHEMA)
        .field("with_default", SchemaBuilder.int32().default_value(42).build())
        .field("price", Decimal.builder(2).parameter("connect.decimal.precision", "10").build())
        .field("day", Date.schema())
        .field("at", Time.schema())
        .field("ts", Timestamp.schema())
        .field("tags", SchemaBuilder.array(Schema.STRING_SCHEMA).build())
        .field("by_name", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT64_SCHEMA).build())
        .field("by_id", SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.STRING_SCHEMA).build())
        .field("inner", inner)
        .field(
            "maybe_inner",
            SchemaBuilder.struct()
            .name("com.example.Maybe")
            .field("m", Schema.STRING_SCHEMA)
            .optional()
            .build(),
        )
        .field("params", SchemaBuilder.string().parameter("origin", "test").build())
        .build()
    )
    value = (
        Struct(schema)
        .put("b", True)
        .put("i8", -8)
        .put("i16", 1600)
        .put("i32", -(2**31))
        .put("i64", 2**40)
        .put("f32", 1.5)
        .put("f64", 2.25)
        .put("s", "héllo")
        .put("raw", b"\x00\xff")
        .put("opt", None)
        .put("opt_set", 7)
        .put("with_default", 5)
        .put("price", decimal.Decimal("1234.56"))
        .put("day", dt.date(2024, 2, 29))
        .put("at", dt.time(13, 14, 15, 123000))
        .put("ts", dt.datetime(2024, 2, 29, 1, 2, 3, 456000, tzinfo=dt.UTC))
        .put("tags", ["a", "b"])
        .put("by_name", {"x": 1})
        .put("by_id", {1: "one", 2: "two"})
        .put("inner", Struct(inner).put("n", 9))
        .put("maybe_inner", None)
        .put("params", "p")
    )
    return schema, value


def _with_enum() -> tuple[Schema, Struct]:
    schema = (
        SchemaBuilder.struct()
        .name("com.example.Paint")
        .field("color", SchemaBuilder.string().parameters(ENUM).build())
        .build()
    )
    return schema, Struct(schema).put("color", "GREEN")


CASES: dict[str, Callable[[], tuple[Schema, Any]]] = {
    "every_type": _row,
    "enum": _with_enum,
    "primitive_string": lambda: (Schema.STRING_SCHEMA, "plain"),
    "primitive_int64": lambda: (Schema.INT64_SCHEMA, 2**50),
    "optional_int32": lambda: (Schema.OPTIONAL_INT32_SCHEMA, 12),
    "decimal": lambda: (Decimal.schema(3), decimal.Decimal("-0.125")),
    "timestamp": lambda: (Timestamp.schema(), dt.datetime(1999, 12, 31, 23, 59, 59, tzinfo=dt.UTC)),
    "array_of_structs": lambda: _array_of_structs(),
}


def _array_of_structs() -> tuple[Schema, Any]:
    item = SchemaBuilder.struct().name("com.example.Item").field("k", Schema.STRING_SCHEMA).build()
    return SchemaBuilder.array(item).build(), [Struct(item).put("k", "a"), Struct(item).put("k", "b")]


@pytest.fixture
def client(schema_registry_url: str) -> Iterator[SchemaRegistryClient]:
    """Confluent's own registry client (closed after the test: it holds an HTTP session)."""
    with SchemaRegistryClient({"url": schema_registry_url}) as sr_client:
        yield sr_client


def _topic() -> str:
    return f"t-{uuid.uuid4().hex[:10]}"


def _avro(url: str, **extra: Any) -> AvroConverter:
    converter = AvroConverter()
    converter.configure({"schema.registry.url": url, **extra}, False)
    return converter


def _json(url: str, **extra: Any) -> JsonSchemaConverter:
    converter = JsonSchemaConverter()
    converter.configure({"schema.registry.url": url, **extra}, False)
    return converter


def _plain_avro(schema: Schema, value: Any) -> Any:
    """The value as Confluent's Python AvroDeserializer gives it (records as dicts, MapEntry arrays)."""
    if value is None:
        return None
    if schema.type.name == "STRUCT":
        return {f.name: _plain_avro(f.schema, value.get(f.name)) for f in schema.fields}
    if schema.type.name == "ARRAY":
        return [_plain_avro(schema.value_schema, v) for v in value]
    if schema.type.name == "MAP":
        if schema.key_schema.type.name == "STRING":
            return {k: _plain_avro(schema.value_schema, v) for k, v in value.items()}
        return [{"key": k, "value": _plain_avro(schema.value_schema, v)} for k, v in value.items()]
    return value


def _close(a: Any, b: Any) -> bool:
    return bool(a == b)


# -- ours -> ours -------------------------------------------------------------------------------------


@pytest.mark.parametrize("make", [_avro, _json], ids=["avro", "json_schema"])
@pytest.mark.parametrize("case", CASES)
def test_round_trip_through_the_registry(
    schema_registry_url: str, make: Callable[..., Any], case: str
) -> None:
    schema, value = CASES[case]()
    topic = _topic()
    writer, reader = make(schema_registry_url), make(schema_registry_url)
    data = writer.from_connect_data(topic, schema, value)
    assert data is not None
    assert data[0] == 0
    back = reader.to_connect_data(topic, data)
    assert back.value == value
    if make is _avro:
        assert back.schema == schema
    else:  # JSON Schema keeps every type; FLOAT32 values come back as Python floats
        assert back.schema.type == schema.type


def test_one_registry_round_trip_per_schema_not_per_record(schema_registry_url: str) -> None:
    schema, value = _row()
    topic = _topic()
    writer, reader = _avro(schema_registry_url), _avro(schema_registry_url)
    assert writer.settings is not None
    assert reader.settings is not None
    records = [writer.from_connect_data(topic, schema, value) for _ in range(50)]
    assert writer.settings.client.requests == 1
    for data in records:
        assert reader.to_connect_data(topic, data).value == value
    assert reader.settings.client.requests == 1


def test_tombstones(schema_registry_url: str) -> None:
    converter = _avro(schema_registry_url)
    assert converter.from_connect_data("t", Schema.OPTIONAL_STRING_SCHEMA, None) is None
    assert converter.to_connect_data("t", None) is SchemaAndValue.NULL


def test_names_from_java_and_ours_resolve_to_the_converters(schema_registry_url: str) -> None:
    for name in (
        "io.confluent.connect.avro.AvroConverter",
        "engine.converters.registry.avro.AvroConverter",
        "AvroConverter",
    ):
        assert type(converter_for(name, {"schema.registry.url": schema_registry_url}, False)) is AvroConverter
    for name in ("io.confluent.connect.json.JsonSchemaConverter", "JsonSchemaConverter"):
        converter = converter_for(name, {"schema.registry.url": schema_registry_url}, True)
        assert type(converter) is JsonSchemaConverter


def test_subject_name_strategies(schema_registry_url: str, client: SchemaRegistryClient) -> None:
    schema, value = _with_enum()
    topic = _topic()
    for strategy, subject in [
        ("TopicNameStrategy", f"{topic}-value"),
        ("io.confluent.kafka.serializers.subject.RecordNameStrategy", "com.example.Paint"),
        ("TopicRecordNameStrategy", f"{topic}-com.example.Paint"),
    ]:
        _avro(schema_registry_url, **{"value.subject.name.strategy": strategy}).from_connect_data(
            topic, schema, value
        )
        assert subject in client.get_subjects()


# -- ours -> Confluent's serdes, and back -------------------------------------------------------------


@pytest.mark.parametrize("case", CASES)
def test_avro_ours_read_by_confluent_and_theirs_read_by_ours(
    schema_registry_url: str, client: SchemaRegistryClient, case: str
) -> None:
    schema, value = CASES[case]()
    topic = _topic()
    ctx = SerializationContext(topic, MessageField.VALUE)
    ours = _avro(schema_registry_url)
    data = ours.from_connect_data(topic, schema, value)
    theirs = AvroDeserializer(client)(data, ctx)
    expected = _plain_avro(schema, value)
    if schema.name == Decimal.LOGICAL_NAME:  # a top-level bytes schema: Confluent's serdes pass the bytes raw
        expected = Decimal.from_logical(schema, value)
    if isinstance(expected, dict) and "at" in expected:
        expected["at"] = value.get("at")  # fastavro reads time-millis as datetime.time
    assert theirs == expected
    # Confluent's serializer writes under the same Avro schema text; ours reads it back to Connect data.
    avro_text = json.dumps(ours.avro_data.from_connect_schema(schema))
    other_topic = _topic()
    serialized = AvroSerializer(client, avro_text)(
        expected, SerializationContext(other_topic, MessageField.VALUE)
    )
    back = _avro(schema_registry_url).to_connect_data(other_topic, serialized)
    assert back.value == value
    assert back.schema == schema


@pytest.mark.parametrize("case", CASES)
def test_json_schema_ours_read_by_confluent_and_theirs_read_by_ours(
    schema_registry_url: str, client: SchemaRegistryClient, case: str
) -> None:
    schema, value = CASES[case]()
    topic = _topic()
    ctx = SerializationContext(topic, MessageField.VALUE)
    data = _json(schema_registry_url).from_connect_data(topic, schema, value)
    theirs = JSONDeserializer(None, schema_registry_client=client)(data, ctx)  # validates against the schema
    data_mapping = JsonSchemaData()
    expected = json.loads(json.dumps(data_mapping.to_json(schema)(value), default=float))
    assert theirs == expected
    schema_text = json.dumps(data_mapping.from_connect_schema(schema))
    other_topic = _topic()
    serialized = JSONSerializer(schema_text, client)(
        theirs, SerializationContext(other_topic, MessageField.VALUE)
    )
    back = _json(schema_registry_url).to_connect_data(other_topic, serialized)
    assert back.value == value


def test_avro_written_by_confluent_with_a_hand_written_schema(
    schema_registry_url: str, client: SchemaRegistryClient
) -> None:
    """A schema no Connect converter made: plain unions, an enum, a fixed, a nullable record."""
    avro = {
        "type": "record",
        "name": "Order",
        "namespace": "shop",
        "fields": [
            {"name": "id", "type": "long"},
            {"name": "note", "type": ["null", "string"], "default": None},
            {"name": "either", "type": ["int", "string"]},
            {"name": "state", "type": {"type": "enum", "name": "State", "symbols": ["NEW", "DONE"]}},
            {"name": "hash", "type": {"type": "fixed", "name": "Hash", "size": 2}},
            {
                "name": "amount",
                "type": {"type": "bytes", "logicalType": "decimal", "precision": 6, "scale": 2},
            },
        ],
    }
    topic = _topic()
    record = {
        "id": 1,
        "note": "hi",
        "either": "text",
        "state": "DONE",
        "hash": b"ab",
        "amount": decimal.Decimal("10.50"),
    }
    data = AvroSerializer(client, json.dumps(avro))(record, SerializationContext(topic, MessageField.VALUE))
    back = _avro(schema_registry_url).to_connect_data(topic, data)
    assert back.schema.name == "shop.Order"  # type: ignore[union-attr]
    assert back.value.get("id") == 1
    assert back.value.get("note") == "hi"
    assert back.value.get("either").get("string") == "text"
    assert back.value.get("state") == "DONE"
    assert back.schema.field("state").schema.parameters["io.confluent.connect.avro.Enum.DONE"] == "DONE"  # type: ignore[index, union-attr]
    assert back.value.get("hash") == b"ab"
    assert back.value.get("amount") == decimal.Decimal("10.50")
    assert back.schema.field("note").schema.optional  # type: ignore[union-attr]


# -- bad input ----------------------------------------------------------------------------------------


def test_wrong_magic_byte_names_topic(schema_registry_url: str) -> None:
    with pytest.raises(DataException, match=r"topic orders to Avro: Unknown magic byte"):
        _avro(schema_registry_url).to_connect_data("orders", b"\x01\x00\x00\x00\x01\x02")
    with pytest.raises(DataException, match="Unknown magic byte"):
        _json(schema_registry_url).to_connect_data("orders", b"{}")


def test_unknown_schema_id_names_it(schema_registry_url: str) -> None:
    with pytest.raises(
        DataException,
        match=r"topic orders to Avro: Error retrieving Avro value schema for id "
        r"987654 \(schema not found\)",
    ):
        _avro(schema_registry_url).to_connect_data("orders", b"\x00" + (987654).to_bytes(4, "big") + b"\x02")


def test_registry_down_names_the_url_but_never_the_credentials() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    converter = _avro(
        f"http://bob:url-secret@127.0.0.1:{free_port()},{url}", **{"basic.auth.credentials.source": "URL"}
    )
    with pytest.raises(DataException) as raised:
        converter.to_connect_data("orders", b"\x00\x00\x00\x00\x07\x02")
    message = str(raised.value)
    assert "Schema registry unreachable" in message
    assert url in message
    assert "id 7" in message
    assert "url-secret" not in message
    assert "bob" not in message
    user_info = _avro(
        url, **{"basic.auth.credentials.source": "USER_INFO", "basic.auth.user.info": "alice:pw-secret"}
    )
    with pytest.raises(DataException) as raised:
        user_info.from_connect_data("orders", Schema.STRING_SCHEMA, "x")
    assert "pw-secret" not in str(raised.value)
    assert "alice" not in str(raised.value)
    assert "pw-secret" not in repr(user_info.settings.__dict__)


@pytest.mark.parametrize("level", ["BACKWARD", "FORWARD", "FULL"])
def test_incompatible_schema_refused(
    schema_registry_url: str, client: SchemaRegistryClient, level: str
) -> None:
    topic = _topic()
    subject = f"{topic}-value"
    first = SchemaBuilder.struct().name("com.example.V").field("x", Schema.INT32_SCHEMA).build()
    _avro(schema_registry_url).from_connect_data(topic, first, Struct(first).put("x", 1))
    client.set_compatibility(subject, level)
    second = SchemaBuilder.struct().name("com.example.V").field("x", Schema.STRING_SCHEMA).build()
    with pytest.raises(
        DataException,
        match=rf"topic {topic}: the registry refused the Avro schema for subject "
        rf"{subject} .* as incompatible",
    ):
        _avro(schema_registry_url).from_connect_data(topic, second, Struct(second).put("x", "1"))


def test_missing_subject(schema_registry_url: str) -> None:
    topic = _topic()
    with pytest.raises(DataException, match=rf"error looking up the Avro schema for subject {topic}-value"):
        _avro(schema_registry_url, **{"auto.register.schemas": False}).from_connect_data(
            topic, Schema.STRING_SCHEMA, "x"
        )
    with pytest.raises(
        DataException,
        match=rf"error fetching the latest version of the Avro schema for subject {topic}-value",
    ):
        _avro(schema_registry_url, **{"use.latest.version": True}).from_connect_data(
            topic, Schema.STRING_SCHEMA, "x"
        )


def test_use_latest_version_writes_under_the_subjects_latest_schema(schema_registry_url: str) -> None:
    topic = _topic()
    older = SchemaBuilder.struct().name("com.example.V").field("x", Schema.INT32_SCHEMA).build()
    newer = (
        SchemaBuilder.struct()
        .name("com.example.V")
        .field("x", Schema.INT32_SCHEMA)
        .field("y", SchemaBuilder.string().optional().build())
        .build()
    )
    _avro(schema_registry_url).from_connect_data(topic, newer, Struct(newer).put("x", 1))
    data = _avro(
        schema_registry_url, **{"use.latest.version": True, "auto.register.schemas": False}
    ).from_connect_data(topic, older, Struct(older).put("x", 5))
    back = _avro(schema_registry_url).to_connect_data(topic, data)
    assert back.value.get("x") == 5
    assert back.value.get("y") is None


def test_missing_url_is_a_config_error() -> None:
    with pytest.raises(ConfigException, match=r"schema\.registry\.url"):
        AvroConverter().configure({}, False)


def test_a_value_of_the_wrong_type_names_topic_and_id(schema_registry_url: str) -> None:
    topic = _topic()
    schema = SchemaBuilder.struct().name("com.example.V").field("x", Schema.INT32_SCHEMA).build()
    converter = _avro(schema_registry_url)
    converter.from_connect_data(topic, schema, Struct(schema).put("x", 1))
    with pytest.raises(DataException, match=rf"Avro data from topic {topic} with schema id \d+"):
        converter.from_connect_data(topic, schema, "not a struct")


def test_registry_credentials_are_masked_in_logged_configs() -> None:
    from engine.config.masking import mask_config

    masked = mask_config(
        {
            "value.converter.basic.auth.user.info": "u:p-secret-1",
            "key.converter.bearer.auth.token": "tok-2",
            "value.converter.schema.registry.ssl.truststore.password": "pw-3",
            "value.converter.schema.registry.url": "https://bob:pw-4@a:8081,https://b:8081",
            "value.converter.auto.register.schemas": "false",
        }
    )
    assert not any(s in repr(masked) for s in ("p-secret-1", "tok-2", "pw-3", "pw-4", "bob"))
    assert masked["value.converter.schema.registry.url"] == "https://[hidden]@a:8081,https://b:8081"
    assert masked["value.converter.auto.register.schemas"] == "false"


def test_tls_to_the_registry_with_schema_registry_ssl_keys(schema_registry_url: str, tmp_path: Path) -> None:
    """The registry behind a TLS terminator: trusted through ``schema.registry.ssl.truststore.*``; an
    untrusted CA is a clear error."""
    certs = make_certificates(tmp_path / "tls")
    backend = urllib.parse.urlsplit(schema_registry_url)
    port = free_port()
    https = f"https://127.0.0.1:{port}{backend.path}"
    schema, value = _with_enum()
    topic = _topic()
    with terminating(certs.server_chain, backend.port or 0, port) as proxy:
        trusted = {
            "schema.registry.ssl.truststore.type": "PEM",
            "schema.registry.ssl.truststore.location": str(certs.ca_pem),
        }
        data = _avro(https, **trusted).from_connect_data(topic, schema, value)
        assert _avro(https, **trusted).to_connect_data(topic, data).value == value
        assert proxy.handshakes >= 2
        untrusted = {
            "schema.registry.ssl.truststore.type": "PEM",
            "schema.registry.ssl.truststore.location": str(certs.other_ca_pem),
        }
        with pytest.raises(DataException, match="CERTIFICATE_VERIFY_FAILED"):
            _avro(https, **untrusted).to_connect_data(topic, data)


def test_the_engine_imports_without_the_registry_extra_and_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    blocked = ("fastavro", "jsonschema", "google", "google.protobuf")
    code = (
        f"import sys\nfor m in {blocked!r}: sys.modules[m] = None\n"
        "import engine, engine.engine, engine.converters.factory, engine.converters.registry.protobuf\n"
        "assert not any(sys.modules.get(m) for m in " + repr(blocked) + ")\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
    monkeypatch.setitem(sys.modules, "fastavro", None)  # import fastavro now raises ImportError
    with pytest.raises(ConfigException, match=r"pip install 'connect-engine\[registry\]'"):
        converter_for("io.confluent.connect.avro.AvroConverter", {"schema.registry.url": "http://x"}, False)


@pytest.mark.parametrize("enhanced", [False, True])
def test_enums_are_avro_enums_only_with_enhanced_avro_schema_support(
    schema_registry_url: str, client: SchemaRegistryClient, enhanced: bool
) -> None:
    schema, value = _with_enum()
    topic = _topic()
    writer = _avro(schema_registry_url, **{"enhanced.avro.schema.support": enhanced})
    data = writer.from_connect_data(topic, schema, value)
    assert data is not None
    registered = json.loads(client.get_latest_version(f"{topic}-value").schema.schema_str or "{}")
    color = registered["fields"][0]["type"]
    if enhanced:
        assert color["type"] == "enum"
        assert color["symbols"] == ["RED", "GREEN"]
    else:  # as Confluent's AvroData: a string, the symbols in connect.parameters
        assert color["type"] == "string"
        assert color["connect.parameters"]["io.confluent.connect.avro.Enum"] == "com.example.Color"
    back = _avro(schema_registry_url).to_connect_data(topic, data)
    assert back.schema == schema
    assert back.value == value
    ctx = SerializationContext(topic, MessageField.VALUE)
    assert AvroDeserializer(client)(data, ctx) == {"color": "GREEN"}
