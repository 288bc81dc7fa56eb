"""The JsonConverter's compiled fast path (per-schema envelopes and codecs) writes and reads exactly what
the generic path does, is taken for the common records, and keeps its caches within ``schemas.cache.size``."""

from __future__ import annotations

import datetime as dt
import decimal
import math
import random
from typing import Any

import pytest

from engine.api.errors import DataException
from engine.converters.json_converter import JsonConverter
from engine.converters.json_envelope import Envelopes
from engine.data import Date, Decimal, Schema, SchemaAndValue, SchemaBuilder, Struct, Time, Timestamp


class _Off(Envelopes):
    """No fast path: every record the generic way (what the converter did before it had one)."""

    def write(self, schema: Schema, value: Any) -> bytes | None:
        return None

    def read(self, value: bytes) -> SchemaAndValue | None:
        return None

    def learn(self, value: bytes, schema: Schema | None) -> None:
        return None


def converter(generic: bool = False, **configs: Any) -> JsonConverter:
    c = JsonConverter()
    c.configure({k.replace("_", "."): v for k, v in configs.items()}, False)
    if generic:
        c._envelopes = _Off(
            0,
            schemas_enabled=True,
            decimal_numeric=False,
            replace_null_with_default=True,
            schema_json=c.schema_json,
            schema_of=lambda _: None,
        )
    return c


def outcome(call: Any) -> Any:
    """What a call gives: its result, or its exception's type and message (so errors compare too)."""
    try:
        return ("ok", call())
    except Exception as exc:
        return ("raised", type(exc), str(exc))


def same(a: Any, b: Any) -> bool:
    """Equal, with NaNs equal and float signs and types compared (``repr`` of the parts)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and repr(a) == repr(b)


EVENT = (
    SchemaBuilder.struct()
    .name("bench.Event")
    .field("name", Schema.STRING_SCHEMA)
    .field("count", Schema.INT32_SCHEMA)
    .field("id", Schema.INT64_SCHEMA)
    .field("active", Schema.BOOLEAN_SCHEMA)
    .field("score", Schema.FLOAT64_SCHEMA)
    .field("note", Schema.OPTIONAL_STRING_SCHEMA)
    .build()
)


def event(i: int) -> Struct:
    return (
        Struct(EVENT)
        .put("name", f"customer-{i}")
        .put("count", i)
        .put("id", 1_700_000_000_000 + i)
        .put("active", i % 2 == 0)
        .put("score", i * 0.25)
        .put("note", None if i % 3 == 0 else f"note {i}")
    )


# -- random schemas and values, right and wrong ----------------------------------------------------

FLOATS = [
    0.0,
    -0.0,
    1e-3,
    9.99e-4,
    1e7,
    9999999.999,
    1e-5,
    1.5e300,
    5e-324,
    0.1,
    1 / 3,
    -2.5,
    123456.789,
    math.inf,
    -math.inf,
    math.nan,
    3.4028235e38,
    1e39,
]
STRINGS = [
    "",
    "plain",
    "é ✓ 😀",
    'q"uote\\',
    "tab\tnl\n",
    "\x01\x1f\x7f",
    "\\u0041",
    "\u2028",
    "\ud800",
    "a" * 300,
]
PRIMITIVES: dict[str, tuple[Schema, list[Any]]] = {
    "int8": (Schema.INT8_SCHEMA, [0, 127, -128, 128, True, 1.0]),
    "int16": (Schema.INT16_SCHEMA, [0, 32767, -32769]),
    "int32": (Schema.INT32_SCHEMA, [7, 2**31 - 1, -(2**31), 2**31, "1"]),
    "int64": (Schema.INT64_SCHEMA, [2**63 - 1, -(2**63), 2**63, 10**18]),
    "float64": (Schema.FLOAT64_SCHEMA, [*FLOATS, 1]),
    "float32": (Schema.FLOAT32_SCHEMA, [*FLOATS, 1]),
    "boolean": (Schema.BOOLEAN_SCHEMA, [True, False, 1]),
    "string": (Schema.STRING_SCHEMA, [*STRINGS, b"x"]),
    "bytes": (Schema.BYTES_SCHEMA, [b"", b"\x00\xff", bytearray(b"ab"), memoryview(b"cd"), "x"]),
    "decimal": (
        Decimal.schema(2),
        [decimal.Decimal("1.25"), decimal.Decimal("-0.00"), decimal.Decimal("1.5"), 1.5],
    ),
    "date": (Date.schema(), [dt.date(2024, 2, 29), dt.datetime(2024, 1, 1, tzinfo=dt.UTC)]),
    "time": (Time.schema(), [dt.time(12, 0, 1, 5000)]),
    "timestamp": (
        Timestamp.schema(),
        [
            dt.datetime(2024, 1, 1, 1, tzinfo=dt.UTC),
            dt.datetime(1969, 12, 31, 23, tzinfo=dt.timezone(dt.timedelta(hours=-1))),
        ],
    ),
}


def optional_of(schema: Schema, rng: random.Random) -> Schema:
    """``schema`` made optional, or given a default, or left required, at random."""
    roll = rng.random()
    if roll < 0.5:
        return schema
    builder = SchemaBuilder(schema.type)
    if schema.name is not None:
        builder.name(schema.name)
    for key, param in (schema.parameters or {}).items():
        builder.parameter(key, param)
    if roll < 0.8:
        builder.optional()
    else:
        _, values = PRIMITIVES[
            next(k for k, (s, _) in PRIMITIVES.items() if s.name == schema.name and s.type is schema.type)
        ]
        builder.default_value(values[0])
    return builder.build()


def random_schema(rng: random.Random, depth: int = 0) -> Schema:
    roll = rng.random()
    if depth >= 2 or roll < 0.5:
        return optional_of(PRIMITIVES[rng.choice(list(PRIMITIVES))][0], rng)
    if roll < 0.65:
        return SchemaBuilder.array(random_schema(rng, depth + 1)).build()
    if roll < 0.8:
        key = rng.choice([Schema.STRING_SCHEMA, Schema.INT32_SCHEMA])
        return SchemaBuilder.map(key, random_schema(rng, depth + 1)).build()
    builder = SchemaBuilder.struct().name(f"s{depth}")
    for i in range(rng.randint(0, 4)):
        builder.field(f"f{i}", random_schema(rng, depth + 1))
    return builder.optional().build() if rng.random() < 0.3 else builder.build()


def random_value(schema: Schema, rng: random.Random) -> Any:
    """A value for ``schema``: mostly valid, sometimes a null, now and then a wrong one."""
    if rng.random() < 0.1:
        return None
    if schema.type.name == "ARRAY":
        return [random_value(schema.value_schema, rng) for _ in range(rng.randint(0, 3))]
    if schema.type.name == "MAP":
        keys = ["k", "é", "\x02", "payload"] if schema.key_schema.type.name == "STRING" else [1, -2, 3]
        return {k: random_value(schema.value_schema, rng) for k in rng.sample(keys, rng.randint(0, 3))}
    if schema.type.name == "STRUCT":
        struct = Struct(schema)
        for f in schema.fields:
            struct._values[f.index] = random_value(f.schema, rng)  # unvalidated: wrong ones too
        return struct
    kind = next(k for k, (s, _) in PRIMITIVES.items() if s.name == schema.name and s.type is schema.type)
    return rng.choice(PRIMITIVES[kind][1])


@pytest.mark.parametrize("decimal_format", ["BASE64", "NUMERIC"])
@pytest.mark.parametrize("replace", ["true", "false"])
@pytest.mark.parametrize("schemas_enable", ["true", "false"])
def test_writes_and_reads_what_the_generic_path_does(
    decimal_format: str, replace: str, schemas_enable: str
) -> None:
    """Many random schemas and values, valid and not: the same bytes, or the same error, both ways."""
    rng = random.Random(f"{decimal_format}{replace}{schemas_enable}")
    configs: dict[str, Any] = {
        "decimal_format": decimal_format,
        "replace_null_with_default": replace,
        "schemas_enable": schemas_enable,
    }
    fast, generic = converter(**configs), converter(generic=True, **configs)
    fast_reader, generic_reader = converter(**configs), converter(generic=True, **configs)
    written = compiled = 0
    for _ in range(400):
        schema = random_schema(rng)
        for _ in range(5):
            value = random_value(schema, rng)
            got = outcome(lambda s=schema, v=value: fast.from_connect_data("t", s, v))
            assert got == outcome(lambda s=schema, v=value: generic.from_connect_data("t", s, v)), (
                schema,
                value,
            )
            if got[0] != "ok" or got[1] is None or schemas_enable == "false":
                continue
            written += 1
            compiled += fast._envelopes.write(schema, value) is not None
            for _ in range(2):  # the second read takes the learnt prefix
                read = outcome(lambda b=got[1]: fast_reader.to_connect_data("t", b))
                expected = outcome(lambda b=got[1]: generic_reader.to_connect_data("t", b))
                assert (read[0] == expected[0] and same(read[1:], expected[1:])) or read == expected, got[1]
    assert schemas_enable == "false" or (written > 300 and compiled > written // 2), (written, compiled)


STRING = b'{"type":"string","optional":false}'
DECIMAL = (
    b'{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","version":1,'
    b'"parameters":{"scale":"2"}}'
)
MAP_WITH_PAYLOAD_KEY = (
    b'{"type":"map","keys":{"type":"string","optional":false},"values":{"type":"int32","optional":false},'
    b'"optional":false,"default":{"payload":1}}'
)


@pytest.mark.parametrize(
    ("schema_json", "good", "odd"),
    [
        (b'{"type":"int64","optional":false}', b"1", b"1234567890123456789}"),
        (b'{"type":"int64","optional":false}', b"1", b"12345678901234567890}"),
        (b'{"type":"double","optional":false}', b"1.0", b"1e400}"),
        (b'{"type":"double","optional":false}', b"1.0", b"NaN}"),
        (b'{"type":"double","optional":false}', b"1.0", b"2}"),
        (STRING, b'"s"', b'"\\ud800"}'),
        (STRING, b'"s"', b'"a","schema":{"type":"int32","optional":false}}'),
        (STRING, b'"s"', b'"a","payload":"b"}'),
        (STRING, b'"s"', b'"a"} '),
        (STRING, b'"s"', b"}"),
        (STRING, b'"s"', b'"a"}}'),
        (STRING, b'"s"', b'"\xff"}'),
        (STRING, b'"s"', b"null}"),
        (b'{"type":"int32","optional":false}', b"1", b"1.0}"),
        (b'{"type":"int32","optional":false}', b"1", b"null}"),
        (b'{"type":"float","optional":false}', b"1.0", b"0.1}"),
        (b'{"type":"bytes","optional":false}', b'""', b'"not base64!"}'),
        (DECIMAL, b'"AH0="', b"1.10}"),
        (DECIMAL, b'"AH0="', b"110}"),
        (MAP_WITH_PAYLOAD_KEY, b"{}", b'{"payload":2}}'),
        (MAP_WITH_PAYLOAD_KEY, b"{}", b"null}"),
        (b"null", b"1", b'{"a":[1,2.5,null,"\\u00e9"]}'),
    ],
)
def test_reads_odd_messages_as_the_generic_path_does(schema_json: bytes, good: bytes, odd: bytes) -> None:
    """After a well-formed message of a schema taught the reader its prefix, an odd one of that schema (19
    digits, non-numbers, duplicate keys, trailing bytes, bad UTF-8, a key ``payload`` inside the schema)
    reads the same, or fails the same, as without the fast path."""
    prefix = b'{"schema":' + schema_json + b',"payload":'
    fast, generic = converter(), converter(generic=True)
    taught = fast.to_connect_data("t", prefix + good + b"}")
    assert fast._envelopes.read(prefix + good + b"}") == taught  # learnt
    raw = prefix + odd
    for _ in range(2):
        got, expected = (
            outcome(lambda: fast.to_connect_data("t", raw)),
            outcome(lambda: generic.to_connect_data("t", raw)),
        )
        assert (got[0] == expected[0] and same(got[1:], expected[1:])) or got == expected


def test_the_common_records_take_the_fast_path() -> None:
    """A 6-field Struct and a FileStream line are written, and read once learnt, by the compiled codecs."""
    c = converter()
    for schema, value in ((EVENT, event(1)), (Schema.STRING_SCHEMA, "a line of a file")):
        written = c._envelopes.write(schema, value)
        assert written is not None
        assert written == converter(generic=True).from_connect_data("t", schema, value)
        assert c._envelopes.read(written) is None  # not learnt yet
        assert c.to_connect_data("t", written) == SchemaAndValue(schema, value)  # the generic read learns it
        assert c._envelopes.read(written) == SchemaAndValue(schema, value)


def test_the_schema_envelope_is_made_once_per_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    """The schema JSON is built once, not per record: the prefix is cached per Schema and spliced."""
    c = converter()
    built: list[Schema] = []
    real = JsonConverter.as_json_schema

    def counting(self: JsonConverter, schema: Schema) -> dict[str, Any]:
        built.append(schema)
        return real(self, schema)

    monkeypatch.setattr(JsonConverter, "as_json_schema", counting)
    out = [c.from_connect_data("t", EVENT, event(i)) for i in range(50)]
    assert [s for s in built if s.type.name == "STRUCT"] == [EVENT]  # the fields' schemas: once, inside it
    assert out[7] == converter(generic=True).from_connect_data("t", EVENT, event(7))


def test_the_caches_hold_at_most_schemas_cache_size() -> None:
    """``schemas.cache.size`` bounds the compiled writers and readers too; evicted schemas still work."""
    c = converter(schemas_cache_size=3)
    schemas = [
        SchemaBuilder.struct().name(f"s{i}").field("x", Schema.INT32_SCHEMA).build() for i in range(10)
    ]
    for _ in range(2):
        for s in schemas:
            raw = c.from_connect_data("t", s, Struct(s).put("x", 1))
            assert raw is not None
            assert c.to_connect_data("t", raw) == SchemaAndValue(s, Struct(s).put("x", 1))
            assert len(c._envelopes._writers) <= 3
            assert len(c._envelopes._readers) <= 3
    assert len(c._envelopes._writers) == len(c._envelopes._readers) == 3


def test_size_zero_caches_nothing_and_still_converts() -> None:
    c = converter(schemas_cache_size=0)
    raw = c.from_connect_data("t", EVENT, event(2))
    assert raw == converter(generic=True).from_connect_data("t", EVENT, event(2))
    assert raw is not None
    assert c.to_connect_data("t", raw) == SchemaAndValue(EVENT, event(2))
    assert len(c._envelopes._writers) == len(c._envelopes._readers) == 0


def test_a_changed_schema_is_picked_up() -> None:
    """A new version of a schema (a field more) gets its own envelope both ways; equal schemas built
    apart share the same bytes; messages of both versions, interleaved, read with their own schema."""
    v2 = SchemaBuilder.struct().name("bench.Event").version(2)
    for f in EVENT.fields:
        v2.field(f.name, f.schema)
    schema2 = v2.field("extra", SchemaBuilder.int32().optional().default_value(5).build()).build()
    writer, reader = converter(), converter()
    one = writer.from_connect_data("t", EVENT, event(1))
    two = writer.from_connect_data(
        "t",
        schema2,
        Struct(schema2).put("name", "n").put("count", 1).put("id", 2).put("active", True).put("score", 0.5),
    )
    assert one is not None
    assert two is not None
    assert b'"version":2' in two
    assert b'"extra":5}}' in two
    assert b'"version"' not in one
    rebuilt = SchemaBuilder.struct().name("bench.Event")
    for f in EVENT.fields:
        rebuilt.field(f.name, f.schema)
    assert writer.from_connect_data("t", rebuilt.build(), event(1)) == one
    for _ in range(3):
        assert reader.to_connect_data("t", one).schema == EVENT
        got = reader.to_connect_data("t", two)
        assert got.schema == schema2
        assert got.value.get("extra") == 5


def test_a_struct_of_an_equal_schema_object_is_written_the_same() -> None:
    """A Struct built on an equal (not the same) Schema object: the compiled writer accepts it."""
    copy = SchemaBuilder.struct().name("bench.Event")
    for f in EVENT.fields:
        copy.field(f.name, f.schema)
    struct = Struct(copy.build())
    for f in EVENT.fields:
        struct.put(f.name, event(4).get(f.name))
    c = converter()
    assert c._envelopes.write(EVENT, struct) == converter(generic=True).from_connect_data(
        "t", EVENT, event(4)
    )


def test_errors_are_the_generic_paths() -> None:
    """A required null and a wrong type still raise Kafka's messages (the compiled path steps aside)."""
    c = converter()
    bad = Struct(EVENT)
    with pytest.raises(DataException, match="null value for field that is required"):
        c.from_connect_data("t", EVENT, bad)
    with pytest.raises(DataException, match="Invalid type for INT32: class str"):
        c.from_connect_data("t", Schema.INT32_SCHEMA, "1")
