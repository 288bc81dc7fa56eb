"""String, byte-array and simple header converters, and resolving converters by Kafka name."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest

from engine.api.errors import ConfigException, DataException
from engine.converters import (
    ByteArrayConverter,
    JsonConverter,
    SimpleHeaderConverter,
    StringConverter,
    converter_for,
    header_converter_for,
)
from engine.data import Date, Schema, SchemaAndValue, SchemaBuilder, Timestamp


class TestStringConverter:
    def test_round_trip_and_java_to_string(self) -> None:
        """Text in the configured encoding; non-strings via Java's toString."""
        c = converter_for("org.apache.kafka.connect.storage.StringConverter", {}, is_key=True)
        assert c.from_connect_data("t", Schema.STRING_SCHEMA, "héllo") == "héllo".encode()
        assert c.from_connect_data("t", None, True) == b"true"
        assert c.from_connect_data("t", None, 1e10) == b"1.0E10"
        assert c.from_connect_data("t", None, None) is None
        assert c.to_connect_data("t", b"abc") == SchemaAndValue(Schema.OPTIONAL_STRING_SCHEMA, "abc")
        assert c.to_connect_data("t", None) == SchemaAndValue(Schema.OPTIONAL_STRING_SCHEMA, None)

    def test_encoding(self) -> None:
        """converter.encoding picks the charset; Java's UTF-16 is big-endian with a BOM."""
        latin = StringConverter()
        latin.configure({"converter.encoding": "ISO-8859-1"}, False)
        assert latin.from_connect_data("t", None, "é") == b"\xe9"
        assert latin.to_connect_data("t", b"\xe9").value == "é"
        utf16 = StringConverter()
        utf16.configure({"converter.encoding": "UTF-16"}, False)
        assert utf16.from_connect_data("t", None, "a") == b"\xfe\xff\x00a"
        assert utf16.to_connect_data("t", b"\xfe\xff\x00a").value == "a"
        with pytest.raises(ConfigException, match=r"converter\.encoding"):
            StringConverter().configure({"converter.encoding": "no-such-charset"}, False)


class TestByteArrayConverter:
    def test_pass_through(self) -> None:
        """Bytes go through untouched; other schemas or values are rejected."""
        c = converter_for("ByteArrayConverter", {}, is_key=False)
        assert c.from_connect_data("t", Schema.BYTES_SCHEMA, b"\x00\x01") == b"\x00\x01"
        assert c.from_connect_data("t", None, None) is None
        assert c.to_connect_data("t", b"x") == SchemaAndValue(Schema.OPTIONAL_BYTES_SCHEMA, b"x")
        with pytest.raises(DataException, match="Invalid schema type for ByteArrayConverter: STRING"):
            c.from_connect_data("t", Schema.STRING_SCHEMA, b"x")
        with pytest.raises(DataException, match="not compatible with objects of type class str"):
            c.from_connect_data("t", None, "x")


class TestSimpleHeaderConverter:
    @pytest.mark.parametrize(
        ("schema", "value", "text"),
        [
            (Schema.STRING_SCHEMA, "hello", b"hello"),
            (Schema.BOOLEAN_SCHEMA, True, b"true"),
            (Schema.INT8_SCHEMA, 12, b"12"),
            (Schema.INT32_SCHEMA, 70000, b"70000"),
            (Schema.FLOAT64_SCHEMA, 2.5, b"2.5"),
            (Date.schema(), dt.date(2024, 2, 29), b"2024-02-29"),
            (
                Timestamp.schema(),
                dt.datetime(2024, 1, 2, 3, 4, 5, 6000, tzinfo=dt.UTC),
                b"2024-01-02T03:04:05.006Z",
            ),
            (SchemaBuilder.array(Schema.INT16_SCHEMA).build(), [1, 300], b"[1,300]"),
            (SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA).build(), {"a": "b"}, b'{"a":"b"}'),
        ],
    )
    def test_round_trip(self, schema: Schema, value: object, text: bytes) -> None:
        """Values are written as text and the schema is inferred back from it."""
        c = header_converter_for("org.apache.kafka.connect.storage.SimpleHeaderConverter", {})
        assert c.from_connect_header("t", "h", schema, value) == text
        assert c.to_connect_header("t", "h", text) == SchemaAndValue(schema, value)

    def test_other_forms(self) -> None:
        """Decimals and bytes are written as text; null stays null; odd text stays a string."""
        c = SimpleHeaderConverter()
        assert c.from_connect_header("t", "h", None, decimal.Decimal("1.50")) == b"1.50"
        assert c.from_connect_header("t", "h", None, b"hi") == b"aGk="
        assert c.from_connect_header("t", "h", None, None) is None
        assert c.to_connect_header("t", "h", None) == SchemaAndValue.NULL
        assert c.to_connect_header("t", "h", b"[1,") == SchemaAndValue(Schema.STRING_SCHEMA, "[1,")
        assert c.to_connect_header("t", "h", b'[1,"a"]') == SchemaAndValue(None, [1, "a"])


class TestFactory:
    @pytest.mark.parametrize(
        ("name", "cls"),
        [
            ("org.apache.kafka.connect.json.JsonConverter", JsonConverter),
            ("JsonConverter", JsonConverter),
            ("Json", JsonConverter),
            ("engine.converters.json_converter.JsonConverter", JsonConverter),
            ("engine.converters.json_converter:JsonConverter", JsonConverter),
            ("org.apache.kafka.connect.storage.StringConverter", StringConverter),
            ("String", StringConverter),
            ("org.apache.kafka.connect.converters.ByteArrayConverter", ByteArrayConverter),
            ("ByteArray", ByteArrayConverter),
        ],
    )
    def test_aliases(self, name: str, cls: type) -> None:
        """Kafka class names, our dotted paths and simple/pruned names all resolve."""
        assert type(converter_for(name, {}, is_key=False)) is cls

    def test_configs_reach_the_converter(self) -> None:
        """Per-connector sub-configs (prefix stripped) configure the instance."""
        c = converter_for(
            "org.apache.kafka.connect.json.JsonConverter", {"schemas.enable": "false"}, is_key=True
        )
        assert isinstance(c, JsonConverter)
        assert not c.schemas_enabled
        assert c.converter_type == "key"
        assert c.from_connect_data("t", Schema.INT32_SCHEMA, 1) == b"1"

    def test_header_converters(self) -> None:
        """Header converters are configured with converter.type=header; Simple is header-only."""
        assert isinstance(header_converter_for("SimpleHeaderConverter", {}), SimpleHeaderConverter)
        assert isinstance(header_converter_for("Simple", {}), SimpleHeaderConverter)
        json = header_converter_for("JsonConverter", {})
        assert isinstance(json, JsonConverter)
        assert json.converter_type == "header"
        with pytest.raises(ConfigException, match="is not a Converter"):
            converter_for("SimpleHeaderConverter", {}, is_key=False)

    @pytest.mark.parametrize("name", ["NoSuchConverter", "no.such.module.Converter", "decimal.Nope"])
    def test_unknown_names(self, name: str) -> None:
        """Unknown names are ConfigExceptions."""
        with pytest.raises(ConfigException, match="could not be found"):
            converter_for(name, {}, is_key=False)
