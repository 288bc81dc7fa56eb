"""``InsertField``: add the record's topic, partition, offset, timestamp or a static value as fields.

Each field setting is a name with an optional suffix: ``!`` makes the inserted field required in
the schema, ``?`` (the default) optional. ``offset.field`` needs sink records. A null key/value
(a tombstone) passes unchanged. The timestamp goes in as a ``Timestamp`` (UTC datetime) with a
schema and as epoch milliseconds without one, as Kafka does; a null partition or timestamp is not
inserted.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Final

from engine.api.config_def import ConfigDef, ConfigDefError, ConfigType, Importance
from engine.api.records import ConnectRecord
from engine.data.builder import SchemaBuilder
from engine.data.cache import LRUCache
from engine.data.logical import Timestamp
from engine.data.schema import Schema
from engine.data.values import Struct
from engine.transforms.key_or_value import KeyOrValue, key_and_value_variants
from engine.transforms.schema_util import (
    REPLACE_NULL_WITH_DEFAULT_CONFIG,
    copy_schema_basics,
    define_replace_null_with_default,
    field_value,
    require_map,
    require_sink_record,
    require_struct,
)

__all__ = ["InsertField", "InsertFieldKey", "InsertFieldValue"]

PURPOSE = "field insertion"
TOPIC, PARTITION, OFFSET, TIMESTAMP = "topic.field", "partition.field", "offset.field", "timestamp.field"
STATIC_FIELD, STATIC_VALUE = "static.field", "static.value"
_OPTIONALITY_DOC = (
    "Suffix with <code>!</code> to make this a required field, or <code>?</code> to keep it "
    "optional (the default)."
)
_OPTIONAL_TIMESTAMP: Final = Timestamp.builder().optional().build()
_EPOCH: Final = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


@dataclass(frozen=True, slots=True)
class InsertionSpec:
    """A configured field name and whether the inserted field is optional."""

    name: str
    optional: bool

    @classmethod
    def parse(cls, spec: str | None) -> InsertionSpec | None:
        if spec is None:
            return None
        if spec.endswith("?"):
            return cls(spec[:-1], True)
        if spec.endswith("!"):
            return cls(spec[:-1], False)
        return cls(spec, True)


class InsertField(KeyOrValue):
    """Insert field(s) using attributes from the record metadata or a configured static value."""

    CONFIG_DEF = define_replace_null_with_default(
        ConfigDef()
        .define(
            TOPIC,
            ConfigType.STRING,
            None,
            None,
            Importance.MEDIUM,
            "Field name for Kafka topic. " + _OPTIONALITY_DOC,
        )
        .define(
            PARTITION,
            ConfigType.STRING,
            None,
            None,
            Importance.MEDIUM,
            "Field name for Kafka partition. " + _OPTIONALITY_DOC,
        )
        .define(
            OFFSET,
            ConfigType.STRING,
            None,
            None,
            Importance.MEDIUM,
            "Field name for Kafka offset - only applicable to sink connectors.<br/>" + _OPTIONALITY_DOC,
        )
        .define(
            TIMESTAMP,
            ConfigType.STRING,
            None,
            None,
            Importance.MEDIUM,
            "Field name for record timestamp. " + _OPTIONALITY_DOC,
        )
        .define(
            STATIC_FIELD,
            ConfigType.STRING,
            None,
            None,
            Importance.MEDIUM,
            "Field name for static data field. " + _OPTIONALITY_DOC,
        )
        .define(
            STATIC_VALUE,
            ConfigType.STRING,
            None,
            None,
            Importance.MEDIUM,
            "Static field value, if field name configured.",
        )
    )
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
        self.replace_null_with_default: bool = parsed[REPLACE_NULL_WITH_DEFAULT_CONFIG]
        if not any((self.topic, self.partition, self.offset, self.timestamp, self.static)):
            raise ConfigDefError("No field insertion configured")
        if self.static is not None and self.static_value is None:
            raise ConfigDefError.invalid(
                STATIC_VALUE, None, f"No value specified for static field: {self.static.name}"
            )
        self._schemas: LRUCache[Schema, Schema] = LRUCache(16)

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        value = self.operating_value(record)
        if value is None:
            return record
        if self.operating_schema(record) is None:
            updated = dict(require_map(value, PURPOSE))
            updated.update(self._inserted(record, with_schema=False))
            return self.new_record(record, None, updated)
        struct = require_struct(value, PURPOSE)
        updated_schema = self._schemas.get(struct.schema)
        if updated_schema is None:
            updated_schema = self._updated_schema(struct.schema)
            self._schemas.put(struct.schema, updated_schema)
        result = Struct(updated_schema)
        for field in struct.schema.fields:
            result.put(field.name, field_value(struct, field, self.replace_null_with_default))
        for name, inserted in self._inserted(record, with_schema=True).items():
            result.put(name, inserted)
        return self.new_record(record, updated_schema, result)

    def _inserted(self, record: ConnectRecord, with_schema: bool) -> dict[str, Any]:
        values: dict[str, Any] = {}
        if self.topic is not None:
            values[self.topic.name] = record.topic
        if self.partition is not None and record.kafka_partition is not None:
            values[self.partition.name] = record.kafka_partition
        if self.offset is not None:
            values[self.offset.name] = require_sink_record(record, PURPOSE).kafka_offset
        if self.timestamp is not None and record.timestamp is not None:
            millis = record.timestamp
            values[self.timestamp.name] = (
                _EPOCH + dt.timedelta(milliseconds=millis) if with_schema else millis
            )
        if self.static is not None and self.static_value is not None:
            values[self.static.name] = self.static_value
        return values

    def _updated_schema(self, schema: Schema) -> Schema:
        builder = copy_schema_basics(schema, SchemaBuilder.struct())
        for field in schema.fields:
            builder.field(field.name, field.schema)
        for spec, required, optional in (
            (self.topic, Schema.STRING_SCHEMA, Schema.OPTIONAL_STRING_SCHEMA),
            (self.partition, Schema.INT32_SCHEMA, Schema.OPTIONAL_INT32_SCHEMA),
            (self.offset, Schema.INT64_SCHEMA, Schema.OPTIONAL_INT64_SCHEMA),
            (self.timestamp, Timestamp.schema(), _OPTIONAL_TIMESTAMP),
            (self.static, Schema.STRING_SCHEMA, Schema.OPTIONAL_STRING_SCHEMA),
        ):
            if spec is not None:
                builder.field(spec.name, optional if spec.optional else required)
        return builder.build()

    def close(self) -> None:
        self._schemas.clear()


InsertFieldKey, InsertFieldValue = key_and_value_variants(InsertField)
