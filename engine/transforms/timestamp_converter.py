"""``TimestampConverter``: converts a timestamp between Unix epoch numbers, formatted strings and
Connect's ``Date`` / ``Time`` / ``Timestamp`` logical types, for a whole key/value or one field.

Every conversion goes through epoch milliseconds in UTC (Kafka's ``java.util.Date``). Python
values: ``Timestamp`` is an aware ``datetime.datetime`` (UTC), ``Date`` a ``datetime.date``,
``Time`` a ``datetime.time``, ``unix`` an ``int`` and ``string`` a ``str``. Without a schema the
source type is inferred from the value: Kafka can only tell ``java.util.Date`` (always a
Timestamp), Long and String apart; here ``date`` and ``time`` values are read as Date and Time.
Precision below a millisecond is lost, as in Kafka.
"""

from __future__ import annotations

import datetime as dt
from abc import abstractmethod
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Final

from engine.api.config_def import ConfigDef, ConfigType, Importance, ValidString, java_str
from engine.api.errors import ConfigException, ConnectException, DataException
from engine.api.records import ConnectRecord
from engine.api.transforms import Transformation
from engine.data.builder import SchemaBuilder
from engine.data.logical import Date, Time, Timestamp
from engine.data.schema import Schema, Type
from engine.data.values import Struct
from engine.transforms.java_time_format import InvalidPatternError, SimpleDateFormat
from engine.transforms.schema_util import (
    REPLACE_NULL_WITH_DEFAULT_CONFIG,
    copy_schema_basics,
    define_replace_null_with_default,
    field_value,
    require_map,
    type_name,
)

__all__ = ["TimestampConverter", "TimestampConverterKey", "TimestampConverterValue"]

STRING, UNIX, DATE, TIME, TIMESTAMP = "string", "unix", "Date", "Time", "Timestamp"
PURPOSE: Final = "converting timestamp formats"
_MS_PER_DAY: Final = 86_400_000
_EPOCH: Final = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_EPOCH_DATE: Final = dt.date(1970, 1, 1)
_ONE_MS: Final = dt.timedelta(milliseconds=1)
_UNIX_SCALE: Final = {"seconds": -1000, "milliseconds": 1, "microseconds": 1000, "nanoseconds": 1_000_000}
"""Units per millisecond; negative: milliseconds per unit."""

_SCHEMAS: Final[dict[str, tuple[Schema, Schema]]] = {
    STRING: (Schema.STRING_SCHEMA, Schema.OPTIONAL_STRING_SCHEMA),
    UNIX: (Schema.INT64_SCHEMA, Schema.OPTIONAL_INT64_SCHEMA),
    DATE: (Date.schema(), Date.builder().optional().build()),
    TIME: (Time.schema(), Time.builder().optional().build()),
    TIMESTAMP: (Timestamp.schema(), Timestamp.builder().optional().build()),
}


def _java_div(a: int, b: int) -> int:
    """Java's integer division (truncates toward zero), as ``TimeUnit`` conversions do."""
    q = abs(a) // b
    return q if a >= 0 else -q


def _expect(value: Any, kind: type | tuple[type, ...], what: str) -> None:
    if not isinstance(value, kind) or isinstance(value, bool):
        raise DataException(f"{what}, but found {java_str(type(value))}")


class TimestampConverter(Transformation[ConnectRecord]):
    """Abstract base of ``TimestampConverter.Key`` / ``TimestampConverter.Value``."""

    OVERVIEW_DOC = (
        "Convert timestamps between different formats such as Unix epoch, strings, and Connect "
        "Date/Timestamp types.Applies to individual fields or to the entire value.<p/>Use the concrete "
        "transformation type designed for the record key "
        "(<code>engine.transforms.timestamp_converter.TimestampConverter.Key</code>) or value "
        "(<code>engine.transforms.timestamp_converter.TimestampConverter.Value</code>)."
    )
    FIELD_CONFIG = "field"
    TARGET_TYPE_CONFIG = "target.type"
    FORMAT_CONFIG = "format"
    UNIX_PRECISION_CONFIG = "unix.precision"
    CONFIG_DEF = define_replace_null_with_default(
        ConfigDef()
        .define(
            FIELD_CONFIG,
            ConfigType.STRING,
            "",
            importance=Importance.HIGH,
            documentation="The field containing the timestamp, or empty if the entire value is a timestamp",
        )
        .define(
            TARGET_TYPE_CONFIG,
            ConfigType.STRING,
            validator=ValidString.in_(STRING, UNIX, DATE, TIME, TIMESTAMP),
            importance=Importance.HIGH,
            documentation="The desired timestamp representation: string, unix, Date, Time, or Timestamp",
        )
        .define(
            FORMAT_CONFIG,
            ConfigType.STRING,
            "",
            importance=Importance.MEDIUM,
            documentation="A SimpleDateFormat-compatible format for the timestamp. Used to generate the "
            "output when type=string or used to parse the input if the input is a string.",
        )
        .define(
            UNIX_PRECISION_CONFIG,
            ConfigType.STRING,
            "milliseconds",
            validator=ValidString.in_("nanoseconds", "microseconds", "milliseconds", "seconds"),
            importance=Importance.LOW,
            documentation="The desired Unix precision for the timestamp: seconds, milliseconds, "
            "microseconds, or nanoseconds. Used to generate the output when type=unix or "
            "used to parse the input if the input is a Long.Note: This SMT will cause "
            "precision loss during conversions from, and to, values with sub-millisecond "
            "components.",
        )
    )

    Key: ClassVar[type[TimestampConverter]]
    Value: ClassVar[type[TimestampConverter]]

    def __init__(self) -> None:
        self.field = ""
        self.target_type = TIMESTAMP
        self.format: SimpleDateFormat | None = None
        self.unix_precision = "milliseconds"
        self.replace_null_with_default: bool = True
        self._schemas: dict[Schema, Schema] = {}
        self._to_raw: dict[str, Callable[[Any], int]] = {
            STRING: self._string_to_raw,
            UNIX: self._unix_to_raw,
            DATE: self._date_to_raw,
            TIME: self._time_to_raw,
            TIMESTAMP: self._timestamp_to_raw,
        }
        self._to_type: Callable[[int], Any] = self._to_timestamp

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        parsed = self.CONFIG_DEF.parse(configs)
        self.field = parsed[self.FIELD_CONFIG]
        self.target_type = parsed[self.TARGET_TYPE_CONFIG]
        self.unix_precision = parsed[self.UNIX_PRECISION_CONFIG]
        self.replace_null_with_default = parsed[REPLACE_NULL_WITH_DEFAULT_CONFIG]
        pattern: str = parsed[self.FORMAT_CONFIG]
        self._schemas = {}
        if self.target_type == STRING and not pattern.strip():
            raise ConfigException(
                "TimestampConverter requires format option to be specified when using string timestamps"
            )
        self.format = None
        if pattern.strip():
            prefix = (
                "TimestampConverter requires a SimpleDateFormat-compatible pattern for string timestamps: "
            )
            try:
                self.format = SimpleDateFormat(pattern)
            except InvalidPatternError as exc:
                raise ConfigException(prefix + pattern) from exc
            except ValueError as exc:  # valid in Java, not supported here
                raise ConfigException(f"{prefix}{pattern} ({exc})") from exc
        self._to_type = {
            STRING: self._to_string,
            UNIX: self._to_unix,
            DATE: self._to_date,
            TIME: self._to_time,
            TIMESTAMP: self._to_timestamp,
        }[self.target_type]

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        schema, value = self._operating(record)
        if schema is None:
            return self._apply_schemaless(record, value)
        return self._apply_with_schema(record, schema, value)

    # -- record shapes -------------------------------------------------------------------------

    def _apply_with_schema(self, record: ConnectRecord, schema: Schema, value: Any) -> ConnectRecord:
        if not self.field:
            updated = _SCHEMAS[self.target_type][schema.optional]
            return self._updated(record, updated, self.convert(value, _type_from_schema(schema)))
        if value is not None and not isinstance(value, Struct):
            raise DataException(f"Only Struct objects supported for [{PURPOSE}], found: {type_name(value)}")
        updated_schema = self._schemas.get(schema)
        if updated_schema is None:
            updated_schema = self._updated_schema(schema)
            if len(self._schemas) >= 16:
                self._schemas.clear()
            self._schemas[schema] = updated_schema
        return self._updated(record, updated_schema, self._convert_struct(value, updated_schema))

    def _updated_schema(self, schema: Schema) -> Schema:
        builder = copy_schema_basics(schema, SchemaBuilder.struct())
        for field in schema.fields:
            if field.name == self.field:
                builder.field(field.name, _SCHEMAS[self.target_type][field.schema.optional])
            else:
                builder.field(field.name, field.schema)
        if schema.optional:
            builder.optional()
        if schema.default_value is not None:
            builder.default_value(self._convert_struct(schema.default_value, builder.build()))
        return builder.build()

    def _convert_struct(self, value: Struct | None, updated_schema: Schema) -> Struct | None:
        if value is None:
            return None
        updated = Struct(updated_schema)
        for field in value.schema.fields:
            item = field_value(value, field, self.replace_null_with_default)
            if field.name == self.field:
                item = self.convert(item, _type_from_schema(field.schema))
            updated.put(field.name, item)
        return updated

    def _apply_schemaless(self, record: ConnectRecord, raw: Any) -> ConnectRecord:
        if raw is None or not self.field:
            return self._updated(record, None, self.convert(raw))
        value = require_map(raw, PURPOSE)
        updated = dict(value)
        updated[self.field] = self.convert(value.get(self.field))
        return self._updated(record, None, updated)

    # -- conversions ---------------------------------------------------------------------------

    def convert(self, timestamp: Any, source_type: str | None = None) -> Any:
        """``timestamp`` (of ``source_type``, inferred when None) as the target type; None stays None."""
        if timestamp is None:
            return None
        raw = self._to_raw[source_type or _infer_type(timestamp)](timestamp)
        try:
            return self._to_type(raw)
        except (OverflowError, ValueError) as exc:
            raise DataException(f"Timestamp out of range: {raw} ms since the epoch") from exc

    def _string_to_raw(self, value: Any) -> int:
        _expect(value, str, "Expected string timestamp to be a String")
        if self.format is None:
            raise DataException(
                "TimestampConverter requires format option to be specified when using string timestamps"
            )
        try:
            return self.format.parse(value)
        except ValueError as exc:
            raise DataException(
                f"Could not parse timestamp: value ({value}) does not match pattern "
                f"({self.format.to_pattern()})"
            ) from exc

    def _unix_to_raw(self, value: Any) -> int:
        _expect(value, int, "Expected Unix timestamp to be a Long")
        scale = _UNIX_SCALE[self.unix_precision]
        return int(value) * -scale if scale < 0 else _java_div(int(value), scale)

    @staticmethod
    def _date_to_raw(value: Any) -> int:
        _expect(value, dt.date, "Expected Date to be a datetime.date")
        if isinstance(value, dt.datetime):
            return TimestampConverter._timestamp_to_raw(value)
        days: int = (value - _EPOCH_DATE).days
        return days * _MS_PER_DAY

    @staticmethod
    def _time_to_raw(value: Any) -> int:
        _expect(value, dt.time, "Expected Time to be a datetime.time")
        return Time.from_logical(Time.schema(), value)

    @staticmethod
    def _timestamp_to_raw(value: Any) -> int:
        _expect(value, dt.datetime, "Expected Timestamp to be a datetime.datetime")
        aware = value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)
        millis: int = (aware - _EPOCH) // _ONE_MS
        return millis

    def _to_string(self, raw: int) -> str:
        assert self.format is not None  # configure() refuses target.type=string without a format
        return self.format.format(raw)

    def _to_unix(self, raw: int) -> int:
        scale = _UNIX_SCALE[self.unix_precision]
        return _java_div(raw, -scale) if scale < 0 else raw * scale

    @staticmethod
    def _to_date(raw: int) -> dt.date:
        return _EPOCH_DATE + dt.timedelta(days=raw // _MS_PER_DAY)

    @staticmethod
    def _to_time(raw: int) -> dt.time:
        return Time.to_logical(Time.schema(), raw % _MS_PER_DAY)

    @staticmethod
    def _to_timestamp(raw: int) -> dt.datetime:
        return _EPOCH + dt.timedelta(milliseconds=raw)

    # -- Key / Value ---------------------------------------------------------------------------

    @abstractmethod
    def _operating(self, record: ConnectRecord) -> tuple[Schema | None, Any]:
        """The schema and value this variant works on."""

    @abstractmethod
    def _updated(self, record: ConnectRecord, schema: Schema | None, value: Any) -> ConnectRecord: ...


def _type_from_schema(schema: Schema) -> str:
    """The source format a schema implies: logical name first, then STRING (formatted) or INT64 (unix)."""
    by_name = {Timestamp.LOGICAL_NAME: TIMESTAMP, Date.LOGICAL_NAME: DATE, Time.LOGICAL_NAME: TIME}
    if schema.name in by_name:
        return by_name[schema.name]
    if schema.type is Type.STRING:
        return STRING
    if schema.type is Type.INT64:
        return UNIX
    raise ConnectException(f"Schema {schema} does not correspond to a known timestamp type format")


def _infer_type(value: Any) -> str:
    if isinstance(value, dt.datetime):
        return TIMESTAMP
    if isinstance(value, dt.date):
        return DATE
    if isinstance(value, dt.time):
        return TIME
    if isinstance(value, int) and not isinstance(value, bool):
        return UNIX
    if isinstance(value, str):
        return STRING
    raise DataException(f"TimestampConverter does not support {java_str(type(value))} objects as timestamps")


class TimestampConverterKey(TimestampConverter):
    """Converts the record key (or a field of it)."""

    __qualname__ = "TimestampConverter.Key"

    def _operating(self, record: ConnectRecord) -> tuple[Schema | None, Any]:
        return record.key_schema, record.key

    def _updated(self, record: ConnectRecord, schema: Schema | None, value: Any) -> ConnectRecord:
        return record.new_record(key_schema=schema, key=value)


class TimestampConverterValue(TimestampConverter):
    """Converts the record value (or a field of it)."""

    __qualname__ = "TimestampConverter.Value"

    def _operating(self, record: ConnectRecord) -> tuple[Schema | None, Any]:
        return record.value_schema, record.value

    def _updated(self, record: ConnectRecord, schema: Schema | None, value: Any) -> ConnectRecord:
        return record.new_record(value_schema=schema, value=value)


TimestampConverterKey.__name__ = "Key"
TimestampConverterValue.__name__ = "Value"
TimestampConverter.Key = TimestampConverterKey
TimestampConverter.Value = TimestampConverterValue
