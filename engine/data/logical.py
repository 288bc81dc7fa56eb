"""Logical types: named schemas over a primitive, with conversions both ways.

=========  ===============================================  =========  ==========================
class      schema name                                      primitive  Python value
=========  ===============================================  =========  ==========================
Decimal    ``org.apache.kafka.connect.data.Decimal``        BYTES      ``decimal.Decimal``
Date       ``org.apache.kafka.connect.data.Date``           INT32      ``datetime.date``
Time       ``org.apache.kafka.connect.data.Time``           INT32      ``datetime.time``
Timestamp  ``org.apache.kafka.connect.data.Timestamp``      INT64      ``datetime.datetime`` (UTC)
=========  ===============================================  =========  ==========================

``from_logical`` gives the primitive (what goes on the wire), ``to_logical`` the Python value.
Decimal bytes are the unscaled value as big-endian two's complement, minimal length (Java's
``BigInteger.toByteArray``); the scale lives in the ``scale`` parameter. Naive datetimes and
times are taken as UTC; aware ones are converted (Kafka's ``java.util.Date`` has no zone).
"""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Final

from engine.api.errors import DataException
from engine.data.builder import SchemaBuilder
from engine.data.schema import Schema

__all__ = ["Date", "Decimal", "Time", "Timestamp"]

_EPOCH: Final = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_EPOCH_DATE: Final = dt.date(1970, 1, 1)
_MILLIS_PER_DAY: Final = 24 * 60 * 60 * 1000
_ONE_MS: Final = dt.timedelta(milliseconds=1)


def _check_name(schema: Schema, name: str, what: str) -> None:
    if schema.name != name:
        raise DataException(f"Requested conversion of {what} object but the schema does not match.")


class Decimal:
    """Arbitrary-precision decimal with a fixed scale, as ``bytes`` of the unscaled value."""

    LOGICAL_NAME: Final = "org.apache.kafka.connect.data.Decimal"
    SCALE_FIELD: Final = "scale"

    @classmethod
    def builder(cls, scale: int) -> SchemaBuilder:
        return SchemaBuilder.bytes().name(cls.LOGICAL_NAME).parameter(cls.SCALE_FIELD, str(scale)).version(1)

    @classmethod
    def schema(cls, scale: int) -> Schema:
        return cls.builder(scale).build()

    @classmethod
    def scale(cls, schema: Schema) -> int:
        raw = (schema.parameters or {}).get(cls.SCALE_FIELD)
        if raw is None:
            raise DataException("Invalid Decimal schema: scale parameter not found.")
        try:
            return int(raw)
        except ValueError:
            raise DataException(f"Invalid scale parameter found in Decimal schema: {raw}") from None

    @classmethod
    def from_logical(cls, schema: Schema, value: decimal.Decimal) -> bytes:
        """The unscaled value's bytes; the scale must equal the schema's (no silent rounding)."""
        if not value.is_finite():
            raise DataException(f"Decimal value must be finite: {value}")
        sign, digits, exponent = value.as_tuple()
        assert isinstance(exponent, int)  # finite, checked above
        if -exponent != cls.scale(schema):
            raise DataException("BigDecimal has mismatching scale value for given Decimal schema")
        unscaled = int("".join(map(str, digits)) or "0") * (-1 if sign else 1)
        return unscaled_to_bytes(unscaled)

    @classmethod
    def to_logical(cls, schema: Schema, value: bytes) -> decimal.Decimal:
        unscaled = int.from_bytes(value, "big", signed=True)
        digits = tuple(int(d) for d in str(abs(unscaled)))
        return decimal.Decimal((int(unscaled < 0), digits, -cls.scale(schema)))  # exact: no context rounding


def unscaled_to_bytes(n: int) -> bytes:
    """``BigInteger.toByteArray``: shortest two's complement, at least one byte."""
    bits = (n if n >= 0 else ~n).bit_length() + 1  # +1 for the sign bit
    return n.to_bytes((bits + 7) // 8, "big", signed=True)


class Date:
    """A calendar date as days since the Unix epoch."""

    LOGICAL_NAME: Final = "org.apache.kafka.connect.data.Date"

    @classmethod
    def builder(cls) -> SchemaBuilder:
        return SchemaBuilder.int32().name(cls.LOGICAL_NAME).version(1)

    @classmethod
    def schema(cls) -> Schema:
        return cls.builder().build()

    @classmethod
    def from_logical(cls, schema: Schema, value: dt.date) -> int:
        _check_name(schema, cls.LOGICAL_NAME, "Date")
        if isinstance(value, dt.datetime):
            if value.timetz().replace(tzinfo=None) != dt.time():
                raise DataException(
                    "Kafka Connect Date type should not have any time fields set to non-zero values."
                )
            value = value.date()
        return (value - _EPOCH_DATE).days

    @classmethod
    def to_logical(cls, schema: Schema, value: int) -> dt.date:
        _check_name(schema, cls.LOGICAL_NAME, "Date")
        try:
            return _EPOCH_DATE + dt.timedelta(days=value)
        except OverflowError:
            raise DataException(f"Date value out of range: {value}") from None


class Time:
    """A time of day (no date) as milliseconds since midnight; sub-millisecond parts are dropped."""

    LOGICAL_NAME: Final = "org.apache.kafka.connect.data.Time"

    @classmethod
    def builder(cls) -> SchemaBuilder:
        return SchemaBuilder.int32().name(cls.LOGICAL_NAME).version(1)

    @classmethod
    def schema(cls) -> Schema:
        return cls.builder().build()

    @classmethod
    def from_logical(cls, schema: Schema, value: dt.time) -> int:
        _check_name(schema, cls.LOGICAL_NAME, "Time")
        offset = value.utcoffset()
        millis = ((value.hour * 60 + value.minute) * 60 + value.second) * 1000 + value.microsecond // 1000
        if offset is not None:
            millis = (millis - offset // _ONE_MS) % _MILLIS_PER_DAY
        return millis

    @classmethod
    def to_logical(cls, schema: Schema, value: int) -> dt.time:
        _check_name(schema, cls.LOGICAL_NAME, "Time")
        if not 0 <= value < _MILLIS_PER_DAY:
            raise DataException(
                "Time values must use number of milliseconds greater than 0 and less than 86400000"
            )
        seconds, millis = divmod(value, 1000)
        minutes, second = divmod(seconds, 60)
        hour, minute = divmod(minutes, 60)
        return dt.time(hour, minute, second, millis * 1000)


class Timestamp:
    """An instant as milliseconds since the Unix epoch (UTC)."""

    LOGICAL_NAME: Final = "org.apache.kafka.connect.data.Timestamp"

    @classmethod
    def builder(cls) -> SchemaBuilder:
        return SchemaBuilder.int64().name(cls.LOGICAL_NAME).version(1)

    @classmethod
    def schema(cls) -> Schema:
        return cls.builder().build()

    @classmethod
    def from_logical(cls, schema: Schema, value: dt.datetime) -> int:
        _check_name(schema, cls.LOGICAL_NAME, "Timestamp")
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.UTC)
        return (value - _EPOCH) // _ONE_MS

    @classmethod
    def to_logical(cls, schema: Schema, value: int) -> dt.datetime:
        _check_name(schema, cls.LOGICAL_NAME, "Timestamp")
        try:
            return _EPOCH + dt.timedelta(milliseconds=value)
        except OverflowError:
            raise DataException(f"Timestamp value out of range: {value}") from None
