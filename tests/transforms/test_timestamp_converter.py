"""TimestampConverter: every source/target pair through epoch millis, whole value or one field."""

from __future__ import annotations

import datetime as dt

import pytest

from engine.api.errors import ConfigException, ConnectException, DataException
from engine.api.records import SourceRecord
from engine.data import Date, Schema, SchemaBuilder, Struct, Time, Timestamp
from engine.transforms.java_time_format import SimpleDateFormat
from engine.transforms.timestamp_converter import TimestampConverter

MILLIS = 1483425001864  # 2017-01-03T06:30:01.864Z
WHEN = dt.datetime(2017, 1, 3, 6, 30, 1, 864000, tzinfo=dt.UTC)
FORMAT = "yyyy MM dd HH mm ss SSS z"
STRING = "2017 01 03 06 30 01 864 UTC"


def _smt(cls: type[TimestampConverter] = TimestampConverter.Value, **configs: str) -> TimestampConverter:
    t = cls()
    t.configure({k.replace("_", "."): v for k, v in configs.items()})
    return t


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("Timestamp", WHEN),
        ("Date", dt.date(2017, 1, 3)),
        ("Time", dt.time(6, 30, 1, 864000)),
        ("unix", MILLIS),
        ("string", STRING),
    ],
)
@pytest.mark.parametrize("source", [WHEN, MILLIS, STRING])
def test_schemaless_conversions(source: object, target: str, expected: object) -> None:
    out = _smt(target_type=target, format=FORMAT).apply(SourceRecord(topic="t", value=source))
    assert out.value == expected
    assert out.value_schema is None


@pytest.mark.parametrize(
    ("schema", "source"),
    [
        (Timestamp.schema(), WHEN),
        (Schema.INT64_SCHEMA, MILLIS),
        (Schema.STRING_SCHEMA, STRING),
    ],
)
@pytest.mark.parametrize(
    ("target", "target_schema"),
    [
        ("Timestamp", Timestamp.schema()),
        ("Date", Date.schema()),
        ("Time", Time.schema()),
        ("unix", Schema.INT64_SCHEMA),
        ("string", Schema.STRING_SCHEMA),
    ],
)
def test_with_schema_whole_value(schema: Schema, source: object, target: str, target_schema: Schema) -> None:
    out = _smt(target_type=target, format=FORMAT).apply(
        SourceRecord(topic="t", value_schema=schema, value=source)
    )
    assert out.value_schema == target_schema


def test_date_and_time_sources() -> None:
    out = _smt(target_type="unix").apply(
        SourceRecord(topic="t", value_schema=Date.schema(), value=dt.date(2017, 1, 3))
    )
    assert out.value == 1483401600000
    out = _smt(target_type="unix").apply(
        SourceRecord(topic="t", value_schema=Time.schema(), value=dt.time(0, 0, 1))
    )
    assert out.value == 1000


def test_optional_schema_and_null_value() -> None:
    out = _smt(target_type="Timestamp").apply(
        SourceRecord(topic="t", value_schema=Schema.OPTIONAL_INT64_SCHEMA, value=None)
    )
    assert out.value is None
    assert out.value_schema == Timestamp.builder().optional().build()


@pytest.mark.parametrize(
    ("precision", "unix"),
    [
        ("seconds", 1483425001),
        ("milliseconds", MILLIS),
        ("microseconds", MILLIS * 1000),
        ("nanoseconds", MILLIS * 1_000_000),
    ],
)
def test_unix_precision_both_ways(precision: str, unix: int) -> None:
    assert (
        _smt(target_type="unix", unix_precision=precision).apply(SourceRecord(topic="t", value=WHEN)).value
        == unix
    )
    back = (
        _smt(target_type="Timestamp", unix_precision=precision)
        .apply(SourceRecord(topic="t", value=unix))
        .value
    )
    assert back == (WHEN.replace(microsecond=0) if precision == "seconds" else WHEN)


def test_field_with_schema_on_the_key() -> None:
    schema = (
        SchemaBuilder.struct()
        .name("k")
        .field("ts", Schema.INT64_SCHEMA)
        .field("other", Schema.STRING_SCHEMA)
        .build()
    )
    key = Struct(schema).put("ts", MILLIS).put("other", "x")
    out = _smt(TimestampConverter.Key, target_type="string", format=FORMAT, field="ts").apply(
        SourceRecord(topic="t", key_schema=schema, key=key, value="v")
    )
    assert out.key_schema.name == "k"
    assert out.key_schema.field("ts").schema == Schema.STRING_SCHEMA
    assert out.key.get("ts") == STRING
    assert out.key.get("other") == "x"
    assert out.value == "v"


def test_field_with_optional_struct_and_null_value() -> None:
    schema = SchemaBuilder.struct().optional().field("ts", Schema.OPTIONAL_INT64_SCHEMA).build()
    out = _smt(target_type="Date", field="ts").apply(SourceRecord(topic="t", value_schema=schema, value=None))
    assert out.value is None
    assert out.value_schema.optional
    assert out.value_schema.field("ts").schema == Date.builder().optional().build()


def test_field_schemaless() -> None:
    out = _smt(target_type="Timestamp", field="ts").apply(
        SourceRecord(topic="t", value={"ts": MILLIS, "o": 1})
    )
    assert out.value == {"ts": WHEN, "o": 1}
    missing = _smt(target_type="Timestamp", field="ts").apply(SourceRecord(topic="t", value={"o": 1}))
    assert missing.value == {"o": 1, "ts": None}


def test_errors() -> None:
    with pytest.raises(
        DataException, match="Could not parse timestamp: value \\(nope\\) does not match pattern"
    ):
        _smt(target_type="unix", format=FORMAT).apply(SourceRecord(topic="t", value="nope"))
    with pytest.raises(
        DataException, match="TimestampConverter does not support class float objects as timestamps"
    ):
        _smt(target_type="unix").apply(SourceRecord(topic="t", value=1.5))
    with pytest.raises(ConnectException, match="does not correspond to a known timestamp type format"):
        _smt(target_type="unix").apply(SourceRecord(topic="t", value_schema=Schema.INT32_SCHEMA, value=1))
    with pytest.raises(DataException, match="Only Map objects supported in absence of schema"):
        _smt(target_type="unix", field="f").apply(SourceRecord(topic="t", value="x"))


def test_config_errors() -> None:
    with pytest.raises(
        ConfigException, match="requires format option to be specified when using string timestamps"
    ):
        _smt(target_type="string")
    with pytest.raises(
        ConfigException, match="SimpleDateFormat-compatible pattern for string timestamps: bad"
    ):
        _smt(target_type="string", format="bad")
    with pytest.raises(ConfigException, match="String must be one of"):
        _smt(target_type="Instant")
    with pytest.raises(ConfigException, match=r'Missing required configuration "target\.type"'):
        _smt()
    with pytest.raises(ConfigException, match=r"unix\.precision"):
        _smt(target_type="unix", unix_precision="minutes")


@pytest.mark.parametrize(
    ("pattern", "text"),
    [
        ("yyyy-MM-dd'T'HH:mm:ss.SSSZ", "2017-01-03T06:30:01.864+0000"),
        ("yyyy-MM-dd'T'HH:mm:ss.SSSXXX", "2017-01-03T06:30:01.864Z"),
        ("EEE, d MMM yyyy HH:mm:ss.S", "Tue, 3 Jan 2017 06:30:01.864"),
        ("yyMMddhhmmssSSSa", "170103063001864AM"),
    ],
)
def test_simple_date_format_round_trips(pattern: str, text: str) -> None:
    fmt = SimpleDateFormat(pattern)
    assert fmt.format(MILLIS) == text
    assert fmt.parse(text) == MILLIS


def test_simple_date_format_offsets_and_leniency() -> None:
    assert SimpleDateFormat("yyyy-MM-dd HH:mmXXX").parse("2017-01-03 08:30+02:00") == MILLIS - 1864
    assert SimpleDateFormat("yyyy-MM-dd").parse("2016-13-03 and more") == 1483401600000
