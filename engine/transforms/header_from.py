"""``HeaderFrom``: moves or copies fields of a record's key or value into its headers.

``fields`` and ``headers`` pair up by position. With a schema the key/value must be a Struct and
each header gets its field's schema; ``move`` also drops the fields from the schema (cached per
schema). Schemaless key/values must be maps; their headers have no schema.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar

from engine.api.config_def import ConfigDef, ConfigType, Importance, ValidString
from engine.api.errors import ConfigException, DataException
from engine.api.records import ConnectRecord, Header
from engine.api.transforms import Transformation
from engine.data.builder import SchemaBuilder
from engine.data.schema import Schema
from engine.data.values import Struct
from engine.transforms.schema_util import (
    REPLACE_NULL_WITH_DEFAULT_CONFIG,
    NonEmptyListValidator,
    copy_schema_basics,
    define_replace_null_with_default,
    field_value,
    require_map,
    require_struct,
)

__all__ = ["HeaderFrom", "HeaderFromKey", "HeaderFromValue"]

_SCHEMA_CACHE_SIZE = 16


class HeaderFrom(Transformation[ConnectRecord]):
    """Abstract base of ``HeaderFrom.Key`` / ``HeaderFrom.Value``."""

    OVERVIEW_DOC = (
        "Moves or copies fields in the key/value of a record into that record's headers. "
        "Corresponding elements of <code>fields</code> and <code>headers</code> together identify "
        "a field and the header it should be moved or copied to. Use the concrete transformation "
        "type designed for the record key (<code>engine.transforms.header_from.HeaderFrom.Key</code>) "
        "or value (<code>engine.transforms.header_from.HeaderFrom.Value</code>)."
    )
    FIELDS_FIELD = "fields"
    HEADERS_FIELD = "headers"
    OPERATION_FIELD = "operation"
    MOVE, COPY = "move", "copy"
    CONFIG_DEF = define_replace_null_with_default(
        ConfigDef()
        .define(
            FIELDS_FIELD,
            ConfigType.LIST,
            validator=NonEmptyListValidator(),
            importance=Importance.HIGH,
            documentation="Field names in the record whose values are to be copied or moved to headers.",
        )
        .define(
            HEADERS_FIELD,
            ConfigType.LIST,
            validator=NonEmptyListValidator(),
            importance=Importance.HIGH,
            documentation="Header names, in the same order as the field names listed in the fields "
            "configuration property.",
        )
        .define(
            OPERATION_FIELD,
            ConfigType.STRING,
            validator=ValidString.in_(MOVE, COPY),
            importance=Importance.HIGH,
            documentation="Either <code>move</code> if the fields are to be moved to the headers "
            "(removed from the key/value), or <code>copy</code> if the fields are to be "
            "copied to the headers (retained in the key/value).",
        )
    )

    Key: ClassVar[type[HeaderFrom]]
    Value: ClassVar[type[HeaderFrom]]

    def __init__(self) -> None:
        self.fields: list[str] = []
        self.headers: list[str] = []
        self.operation = self.COPY
        self.replace_null_with_default: bool = True
        self._move_schemas: dict[Schema, Schema] = {}

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        parsed = self.CONFIG_DEF.parse(configs)
        self.fields = list(parsed[self.FIELDS_FIELD])
        self.headers = list(parsed[self.HEADERS_FIELD])
        if len(self.fields) != len(self.headers):
            raise ConfigException(
                f"'{self.FIELDS_FIELD}' config must have the same number of elements as '{self.HEADERS_FIELD}' config."
            )
        self.operation = parsed[self.OPERATION_FIELD]
        self.replace_null_with_default = parsed[REPLACE_NULL_WITH_DEFAULT_CONFIG]
        self._move_schemas = {}

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        schema, value = self._operating(record)
        if schema is None:
            return self._apply_schemaless(record, value)
        return self._apply_with_schema(record, schema, value)

    def _apply_with_schema(self, record: ConnectRecord, schema: Schema, raw: Any) -> ConnectRecord:
        value = require_struct(raw, f"header {self.operation}")
        updated_schema, updated_value = schema, value
        if self.operation == self.MOVE:
            updated_schema = self._move_schema(schema)
            updated_value = Struct(updated_schema)
            for field in updated_schema.fields:
                updated_value.put(field, field_value(value, field.name, self.replace_null_with_default))
        added: list[Header] = []
        for field_name, header_name in zip(self.fields, self.headers, strict=True):
            source = schema.field(field_name)
            if source is None:
                raise DataException(f"{field_name} is not a valid field name")
            added.append(
                Header(
                    header_name, field_value(value, field_name, self.replace_null_with_default), source.schema
                )
            )
        return self._updated(record, updated_schema, updated_value, (*record.headers, *added))

    def _move_schema(self, schema: Schema) -> Schema:
        moved = self._move_schemas.get(schema)
        if moved is None:
            builder = copy_schema_basics(schema, SchemaBuilder.struct())
            for field in schema.fields:
                if field.name not in self.fields:
                    builder.field(field.name, field.schema)
            moved = builder.build()
            if len(self._move_schemas) >= _SCHEMA_CACHE_SIZE:
                self._move_schemas.clear()
            self._move_schemas[schema] = moved
        return moved

    def _apply_schemaless(self, record: ConnectRecord, raw: Any) -> ConnectRecord:
        value = require_map(raw, f"header {self.operation}")
        updated = dict(value)
        added: list[Header] = []
        for field_name, header_name in zip(self.fields, self.headers, strict=True):
            if self.operation == self.MOVE:
                updated.pop(field_name, None)
            added.append(Header(header_name, value.get(field_name), None))
        return self._updated(record, None, updated, (*record.headers, *added))

    @abstractmethod
    def _operating(self, record: ConnectRecord) -> tuple[Schema | None, Any]:
        """The schema and value this variant works on."""

    @abstractmethod
    def _updated(
        self, record: ConnectRecord, schema: Schema | None, value: Any, headers: tuple[Header, ...]
    ) -> ConnectRecord: ...


class HeaderFromKey(HeaderFrom):
    """Moves or copies fields of the record key into headers."""

    __qualname__ = "HeaderFrom.Key"

    def _operating(self, record: ConnectRecord) -> tuple[Schema | None, Any]:
        return record.key_schema, record.key

    def _updated(
        self, record: ConnectRecord, schema: Schema | None, value: Any, headers: tuple[Header, ...]
    ) -> ConnectRecord:
        return record.new_record(key_schema=schema, key=value, headers=headers)


class HeaderFromValue(HeaderFrom):
    """Moves or copies fields of the record value into headers."""

    __qualname__ = "HeaderFrom.Value"

    def _operating(self, record: ConnectRecord) -> tuple[Schema | None, Any]:
        return record.value_schema, record.value

    def _updated(
        self, record: ConnectRecord, schema: Schema | None, value: Any, headers: tuple[Header, ...]
    ) -> ConnectRecord:
        return record.new_record(value_schema=schema, value=value, headers=headers)


HeaderFromKey.__name__ = "Key"
HeaderFromValue.__name__ = "Value"
HeaderFrom.Key = HeaderFromKey
HeaderFrom.Value = HeaderFromValue
