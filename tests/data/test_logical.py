"""Logical types round-trip through their primitive forms as Connect's do."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest

from engine.api.errors import DataException
from engine.data import Date, Decimal, Schema, Time, Timestamp


@pytest.mark.parametrize(
    ("value", "scale", "wire"),
    [
        ("0", 0, b"\x00"),
        ("1.27", 2, b"\x7f"),
        ("1.28", 2, b"\x00\x80"),
        ("-1.28", 2, b"\x80"),
        ("-1.29", 2, b"\xff\x7f"),
        ("-0.001", 3, b"\xff"),
        (
            "123456789012345678901234567890.12345",
            5,
            (12345678901234567890123456789012345).to_bytes(15, "big"),
        ),
    ],
)
def test_decimal_bytes_are_minimal_twos_complement(value: str, scale: int, wire: bytes) -> None:
    """Unscaled value as BigInteger.toByteArray would write it, and back."""
    schema = Decimal.schema(scale)
    assert Decimal.from_logical(schema, decimal.Decimal(value)) == wire
    back = Decimal.to_logical(schema, wire)
    assert back == decimal.Decimal(value)
    assert back.as_tuple().exponent == -scale


def test_decimal_schema_and_errors() -> None:
    """The schema carries the scale parameter; a scale mismatch or missing scale is rejected."""
    schema = Decimal.schema(2)
    assert schema.name == "org.apache.kafka.connect.data.Decimal"
    assert dict(schema.parameters or {}) == {"scale": "2"}
    assert schema.version == 1
    with pytest.raises(DataException, match="mismatching scale"):
        Decimal.from_logical(schema, decimal.Decimal("1.5"))
    with pytest.raises(DataException, match="scale parameter not found"):
        Decimal.scale(Schema.BYTES_SCHEMA)


def test_date_time_timestamp_round_trips() -> None:
    """Days since epoch, millis of day, epoch millis (negative values included)."""
    assert Date.from_logical(Date.schema(), dt.date(1970, 1, 2)) == 1
    assert Date.from_logical(Date.schema(), dt.date(1969, 12, 31)) == -1
    assert Date.to_logical(Date.schema(), 19000) == dt.date(2022, 1, 8)
    assert Time.from_logical(Time.schema(), dt.time(1, 2, 3, 456789)) == 3723456
    assert Time.to_logical(Time.schema(), 3723456) == dt.time(1, 2, 3, 456000)
    stamp = dt.datetime(2024, 5, 6, 7, 8, 9, 123000, tzinfo=dt.UTC)
    millis = Timestamp.from_logical(Timestamp.schema(), stamp)
    assert millis == 1714979289123
    assert Timestamp.to_logical(Timestamp.schema(), millis) == stamp
    assert Timestamp.to_logical(Timestamp.schema(), -1) == dt.datetime(
        1969, 12, 31, 23, 59, 59, 999000, tzinfo=dt.UTC
    )
    assert (
        Timestamp.from_logical(
            Timestamp.schema(), dt.datetime(1969, 12, 31, 23, 59, 59, 999500, tzinfo=dt.UTC)
        )
        == -1
    )


def test_temporal_errors() -> None:
    """Wrong schema, time-of-day on a Date, and out-of-range Time values fail."""
    with pytest.raises(DataException, match="schema does not match"):
        Date.from_logical(Schema.INT32_SCHEMA, dt.date(2020, 1, 1))
    with pytest.raises(DataException, match="should not have any time fields"):
        Date.from_logical(Date.schema(), dt.datetime(2020, 1, 1, 1, tzinfo=dt.UTC))
    assert Date.from_logical(Date.schema(), dt.datetime(1970, 1, 3, tzinfo=dt.UTC)) == 2
    with pytest.raises(DataException, match="Time values must use"):
        Time.to_logical(Time.schema(), 86_400_000)
