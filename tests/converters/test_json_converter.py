"""JsonConverter writes exactly Kafka's bytes and reads them back."""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

import pytest

from engine.api.errors import ConfigException, DataException
from engine.converters import JsonConverter
from engine.data import Date, Decimal, Schema, SchemaAndValue, SchemaBuilder, Struct, Time, Timestamp


def converter(**configs: Any) -> JsonConverter:
    c = JsonConverter()
    c.configure({k.replace("_", "."): v for k, v in configs.items()}, False)
    return c


def record_schema() -> Schema:
    return SchemaBuilder.struct().name("r").field("id", Schema.INT32_SCHEMA).build()


class TestEnvelope:
    def test_struct(self) -> None:
        """Struct schema: fields before optional/name; each field entry ends with its name."""
        value = Struct(record_schema()).put("id", 1)
        out = converter().from_connect_data("t", record_schema(), value)
        assert out == (
            b'{"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"}],'
            b'"optional":false,"name":"r"},"payload":{"id":1}}'
        )
        assert converter().to_connect_data("t", out) == SchemaAndValue(record_schema(), value)

    @pytest.mark.parametrize(
        ("schema", "value", "expected"),
        [
            (Schema.STRING_SCHEMA, "foo", b'{"schema":{"type":"string","optional":false},"payload":"foo"}'),
            (
                Schema.OPTIONAL_INT64_SCHEMA,
                None,
                b'{"schema":{"type":"int64","optional":true},"payload":null}',
            ),
            (Schema.BOOLEAN_SCHEMA, True, b'{"schema":{"type":"boolean","optional":false},"payload":true}'),
            (Schema.FLOAT64_SCHEMA, 1.0, b'{"schema":{"type":"double","optional":false},"payload":1.0}'),
            (Schema.FLOAT64_SCHEMA, 1e10, b'{"schema":{"type":"double","optional":false},"payload":1.0E10}'),
            (Schema.FLOAT32_SCHEMA, 0.1, b'{"schema":{"type":"float","optional":false},"payload":0.1}'),
            (
                Schema.BYTES_SCHEMA,
                b"\x00\x01\xff",
                b'{"schema":{"type":"bytes","optional":false},"payload":"AAH/"}',
            ),
            (
                Schema.STRING_SCHEMA,
                'é"\\\n\x01',
                b'{"schema":{"type":"string","optional":false},"payload":"\xc3\xa9\\"\\\\\\n\\u0001"}',
            ),
            (
                SchemaBuilder.array(Schema.INT8_SCHEMA).optional().build(),
                [1, 2],
                b'{"schema":{"type":"array","items":{"type":"int8","optional":false},"optional":true},"payload":[1,2]}',
            ),
            (
                SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT16_SCHEMA).build(),
                {"a": 1},
                b'{"schema":{"type":"map","keys":{"type":"string","optional":false},'
                b'"values":{"type":"int16","optional":false},"optional":false},"payload":{"a":1}}',
            ),
            (
                SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.STRING_SCHEMA).build(),
                {1: "a", 2: "b"},
                b'{"schema":{"type":"map","keys":{"type":"int32","optional":false},'
                b'"values":{"type":"string","optional":false},"optional":false},"payload":[[1,"a"],[2,"b"]]}',
            ),
            (
                SchemaBuilder.int32()
                .name("n")
                .version(2)
                .doc("d")
                .parameter("p", "v")
                .default_value(7)
                .build(),
                5,
                b'{"schema":{"type":"int32","optional":false,"name":"n","version":2,"doc":"d",'
                b'"parameters":{"p":"v"},"default":7},"payload":5}',
            ),
            (
                Schema.OPTIONAL_STRING_SCHEMA,
                "x",
                b'{"schema":{"type":"string","optional":true},"payload":"x"}',
            ),
        ],
    )
    def test_exact_bytes_and_round_trip(self, schema: Schema, value: Any, expected: bytes) -> None:
        """Kafka's key order, type names and Jackson's number/string forms; reading gives the value back."""
        assert converter().from_connect_data("t", schema, value) == expected
        back = converter().to_connect_data("t", expected)
        assert back.schema == schema
        assert back.value == (value if schema.type.name != "FLOAT32" else pytest.approx(value))

    def test_null_handling(self) -> None:
        """No schema and no value is a tombstone; null payload with a default gives the default."""
        assert converter().from_connect_data("t", None, None) is None
        assert converter().to_connect_data("t", None) == SchemaAndValue.NULL
        with_default = SchemaBuilder.int32().optional().default_value(3).build()
        assert converter().from_connect_data("t", with_default, None) == (
            b'{"schema":{"type":"int32","optional":true,"default":3},"payload":3}'
        )
        raw = b'{"schema":{"type":"int32","optional":true,"default":3},"payload":null}'
        assert converter().to_connect_data("t", raw).value == 3
        assert converter(replace_null_with_default="false").to_connect_data("t", raw).value is None
        with pytest.raises(DataException, match="null value for field that is required"):
            converter().from_connect_data("t", Schema.INT32_SCHEMA, None)

    def test_schemaless_value_with_schemas_enabled(self) -> None:
        """A value without schema is still enveloped, with a null schema."""
        assert converter().from_connect_data("t", None, {"a": [1, 2.5]}) == (
            b'{"schema":null,"payload":{"a":[1,2.5]}}'
        )

    def test_logical_types(self) -> None:
        """Decimal as base64 bytes (or a number), Date/Time/Timestamp as integers."""
        schema = (
            SchemaBuilder.struct()
            .field("d", Decimal.schema(2))
            .field("day", Date.schema())
            .field("t", Time.schema())
            .field("ts", Timestamp.schema())
            .build()
        )
        value = (
            Struct(schema)
            .put("d", decimal.Decimal("-1.29"))
            .put("day", dt.date(1970, 1, 11))
            .put("t", dt.time(0, 0, 1))
            .put("ts", dt.datetime(1970, 1, 1, 0, 0, 2, tzinfo=dt.UTC))
        )
        out = converter().from_connect_data("t", schema, value)
        assert out == (
            b'{"schema":{"type":"struct","fields":['
            b'{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","version":1,'
            b'"parameters":{"scale":"2"},"field":"d"},'
            b'{"type":"int32","optional":false,"name":"org.apache.kafka.connect.data.Date","version":1,"field":"day"},'
            b'{"type":"int32","optional":false,"name":"org.apache.kafka.connect.data.Time","version":1,"field":"t"},'
            b'{"type":"int64","optional":false,"name":"org.apache.kafka.connect.data.Timestamp","version":1,'
            b'"field":"ts"}],"optional":false},'
            b'"payload":{"d":"/38=","day":10,"t":1000,"ts":2000}}'
        )
        assert converter().to_connect_data("t", out).value == value

    def test_decimal_numeric(self) -> None:
        """decimal.format=NUMERIC writes BigDecimal.toString and reads the exact number back."""
        c = converter(decimal_format="numeric")
        out = c.from_connect_data("t", Decimal.schema(3), decimal.Decimal("-12.500"))
        assert out == (
            b'{"schema":{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal",'
            b'"version":1,"parameters":{"scale":"3"}},"payload":-12.500}'
        )
        assert c.to_connect_data("t", out).value.as_tuple() == decimal.Decimal("-12.500").as_tuple()

    def test_bad_input(self) -> None:
        """Missing envelope fields, bad JSON and wrong payload kinds are DataExceptions."""
        with pytest.raises(DataException, match='requires "schema" and "payload"'):
            converter().to_connect_data("t", b'{"a":1}')
        with pytest.raises(DataException, match="serialization error"):
            converter().to_connect_data("t", b"{nope")
        with pytest.raises(DataException, match="Invalid type for INT32"):
            converter().to_connect_data("t", b'{"schema":{"type":"int32"},"payload":"x"}')
        with pytest.raises(DataException, match="Unknown schema type: nope"):
            converter().to_connect_data("t", b'{"schema":{"type":"nope"},"payload":1}')
        with pytest.raises(DataException, match="Invalid type for INT32: class str"):
            converter().from_connect_data("t", Schema.INT32_SCHEMA, "1")
        with pytest.raises(DataException, match="Mismatching schema"):
            converter().from_connect_data("t", None, Struct(record_schema()).put("id", 1))


class TestSchemaless:
    @pytest.mark.parametrize(
        ("value", "expected"),
        [
            ({"a": 1, "b": [True, None, "x"], "c": 1.5}, b'{"a":1,"b":[true,null,"x"],"c":1.5}'),
            ("s", b'"s"'),
            (42, b"42"),
            (b"hi", b'"aGk="'),
            ({1: "a"}, b'[[1,"a"]]'),
            ([1e-5, 100.0, float("nan")], b'[1.0E-5,100.0,"NaN"]'),
        ],
    )
    def test_writes_inferred_json(self, value: Any, expected: bytes) -> None:
        """Without schemas the value's own shape decides the JSON."""
        assert converter(schemas_enable="false").from_connect_data("t", None, value) == expected

    def test_round_trip(self) -> None:
        """JSON objects come back as dicts, integers as int, other numbers as float."""
        c = converter(schemas_enable=False)
        value = {"a": 1, "b": [True, None, "x"], "c": 1.5, "d": {"e": -3}}
        result = c.to_connect_data("t", c.from_connect_data("t", None, value))
        assert result == SchemaAndValue(None, value)
        assert isinstance(result.value["c"], float)
        assert c.to_connect_data("t", b"null") == SchemaAndValue(None, None)

    def test_bad_config(self) -> None:
        """An unknown decimal.format is a ConfigException."""
        with pytest.raises(ConfigException, match=r"decimal\.format"):
            converter(decimal_format="HEX")


@pytest.mark.parametrize(
    "value",
    [
        {"id": 1, "name": "customer-1", "amount": 1.5, "active": True, "nested": {"a": [1, 2, None, "x"]}},
        "héllo ✓",
        -0.0,
        0.001,
        9999999.5,
        123456.789,
        2**62,
        -(2**63),
        [],
        {},
        0.1,
        1 / 3,
        100.0,
        5e-3,
    ],
)
def test_the_schemaless_fast_path_writes_what_the_jackson_writer_writes(value: object) -> None:
    from engine.converters import jackson

    assert jackson.dumps_plain(value) == jackson.dumps(value)


@pytest.mark.parametrize("value", ["\x01", "a\tb", 1e7, 1e-4, 2**63, float("nan"), (1,), b"x", {1: "a"}])
def test_values_jackson_writes_differently_take_the_slow_path(value: object) -> None:
    from engine.converters import jackson

    assert jackson.dumps_plain(value) is None
