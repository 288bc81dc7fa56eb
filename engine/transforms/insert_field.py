"""``InsertField``: add the record's topic, partition, offset, timestamp or a static value as fields.

Each field config takes a name with an optional suffix: ``!`` makes the inserted field required
in the schema, ``?`` (the default) optional. A tombstone (null value) passes unchanged, as in Kafka.
``offset.field`` needs sink records.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from engine.api.config_def import ConfigDef, ConfigType, Importance
from engine.api.errors import DataException
from engine.api.records import ConnectRecord, SinkRecord
from engine.data.builder import SchemaBuilder
from engine.data.logical import Timestamp
from engine.data.schema import Schema
from engine.data.struct import Struct
from engine.transforms.header_from import copy_schema_basics, require_map, require_struct, type_name
from engine.transforms.key_or_value import (
    REPLACE_NULL_DOC,
    REPLACE_NULL_WITH_DEFAULT,
    KeyOrValue,
    field_value,
    key_and_value_variants,
)

__all__ = ["InsertField", "InsertFieldKey", "InsertFieldValue"]

PURPOSE = "field insertion"
TOPIC, PARTITION, OFFSET, TIMESTAMP = "topic.field", "partition.field", "offset.field", "timestamp.field"
STATIC_FIELD, STATIC_VALUE = "static.field", "static.value"
_SUFFIX_DOC = " Suffix with <code>!</code> to make this a required field, or <code>?</code> to keep it optional (the default)."


@dataclass(frozen=True, slots=True)
class InsertionSpec:
    name: str
    optional: bool

    @classmethod
    def parse(cls, spec: str | None) -> InsertionSpec | None:
        if not spec:
            return None
        if spec.endswith("?"):
            return cls(spec[:-1], True)
        if spec.endswith("!"):
            return cls(spec[:-1], False)
        return cls(spec, True)


def _epoch_datetime(millis: int) -> dt.datetime:
    return dt.datetime(1970, 1, 1, tzinfo=dt.UTC) + dt.timedelta(milliseconds=millis)


class InsertField(KeyOrValue):
    """Insert field(s) using attributes from the record metadata or a configured static value."""

    CONFIG_DEF = (ConfigDef()
                  .define(TOPIC, ConfigType.STRING, None, None, Importance.MEDIUM,
                          "Field name for Kafka topic." + _SUFFIX_DOC)
                  .define(PARTITION, ConfigType.STRING, None, None, Importance.MEDIUM,
                          "Field name for Kafka partition." + _SUFFIX_DOC)
                  .define(OFFSET, ConfigType.STRING, None, None, Importance.MEDIUM,
                          "Field name for Kafka offset - only applicable to sink connectors." + _SUFFIX_DOC)
                  .define(TIMESTAMP, ConfigType.STRING, None, None, Importance.MEDIUM,
                          "Field name for record timestamp." + _SUFFIX_DOC)
                  .define(STATIC_FIELD, ConfigType.STRING, None, None, Importance.MEDIUM,
                          "Field name for static data field." + _SUFFIX_DOC)
                  .define(STATIC_VALUE, ConfigType.STRING, None, None, Importance.MEDIUM,
                          "Static field value, if field name configured.")
                  .define(REPLACE_NULL_WITH_DEFAULT, ConfigType.BOOLEAN, True, None, Importance.MEDIUM,
                          REPLACE_NULL_DOC))
    Key: ClassVar[type[InsertField]]
    Value: ClassVar[type[InsertField]]

    def configure(self, configs: Mapping[str, Any]) -> None:
        parsed = self.CONFIG_DEF.parse(configs)
        self.topic = InsertionSpec.parse(parsed[TOPIC])
        self.partition = InsertionSpec.parse(parsed[PARTITION])
        self.offset = InsertionSpec.parse(parsed[OFFSET])
        self.timestamp = InsertionSpec.parse(parsed[TIMESTAMP])
        self.static = InsertionSpec.parse(parsed[STATIC_FIELD])
        self.static_value: str | None = parsed[STATIC_VALUE]
        self.replace_null_with_default: bool = parsed[REPLACE_NULL_WITH_DEFAULT]
        self._schemas: dict[Schema, Schema] = {}

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        value = self.operating_value(record)
        if value is None:
            return record
        schema = self.operating_schema(record)
        inserted = self._inserted(record)
        if schema is None:
            updated = dict(require_map(value, PURPOSE))
            updated.update({name: v for name, (v, _) in inserted.items()})
            return self.new_record(record, None, updated)
        struct = require_struct(value, PURPOSE)
        updated_schema = self._updated_schema(struct.schema)
        result = Struct(updated_schema)
        for field in struct.schema.fields:
            result.put(field.name, field_value(struct, field, self.replace_null_with_default))
        for name, (_, typed) in inserted.items():
            result.put(name, typed)
        return self.new_record(record, updated_schema, result)

    def _inserted(self, record: ConnectRecord) -> dict[str, tuple[Any, Any]]:
        """Field name -> (schemaless value, schema value)."""
        values: dict[str, tuple[Any, Any]] = {}
        if self.topic:
            values[self.topic.name] = (record.topic, record.topic)
        if self.partition:
            values[self.partition.name] = (record.kafka_partition, record.kafka_partition)
        if self.offset:
            if not isinstance(record, SinkRecord):
                raise DataException(f"Only SinkRecord supported for [{PURPOSE}], found: {type_name(record)}")
            values[self.offset.name] = (record.kafka_offset, record.kafka_offset)
        if self.timestamp:
            ts = record.timestamp
            values[self.timestamp.name] = (ts, None if ts is None else _epoch_datetime(ts))
        if self.static:
            values[self.static.name] = (self.static_value, self.static_value)
        return values

    def _updated_schema(self, schema: Schema) -> Schema:
        cached = self._schemas.get(schema)
        if cached is not None:
            return cached
        builder = copy_schema_basics(schema, SchemaBuilder.struct())
        for field in schema.fields:
            builder.field(field.name, field.schema)
        for spec, required, optional in (
                (self.topic, Schema.STRING_SCHEMA, Schema.OPTIONAL_STRING_SCHEMA),
                (self.partition, Schema.INT32_SCHEMA, Schema.OPTIONAL_INT32_SCHEMA),
                (self.offset, Schema.INT64_SCHEMA, Schema.OPTIONAL_INT64_SCHEMA),
                (self.timestamp, Timestamp.schema(), Timestamp.builder().optional().build()),
                (self.static, Schema.STRING_SCHEMA, Schema.OPTIONAL_STRING_SCHEMA)):
            if spec is not None:
                builder.field(spec.name, optional if spec.optional else required)
        cached = self._schemas[schema] = builder.build()
        return cached


InsertFieldKey, InsertFieldValue = key_and_value_variants(InsertField)
