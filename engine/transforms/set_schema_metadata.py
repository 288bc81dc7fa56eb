"""``SetSchemaMetadata``: sets the name and/or version of a record's key or value schema.

Structs reference their schema, so a Struct key/value is copied onto the renamed schema; other
values are left as they are. Schemaless records (schema and value both None) pass unchanged, any
other record without a schema is refused, as in Kafka.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar

from engine.api.config_def import ConfigDef, ConfigType, Importance
from engine.api.errors import ConfigException, DataException
from engine.api.records import ConnectRecord
from engine.api.transforms import Transformation
from engine.data.schema import Schema, Type
from engine.data.values import Struct
from engine.transforms.schema_util import (
    REPLACE_NULL_WITH_DEFAULT_CONFIG,
    define_replace_null_with_default,
    field_value,
)

__all__ = ["SetSchemaMetadata", "SetSchemaMetadataKey", "SetSchemaMetadataValue", "require_schema"]


def require_schema(schema: Schema | None, purpose: str) -> Schema:
    """Kafka's ``Requirements.requireSchema``."""
    if schema is None:
        raise DataException(f"Schema required for [{purpose}]")
    return schema


def update_schema_in(
    key_or_value: Any, updated_schema: Schema, replace_null_with_default: bool = True
) -> Any:
    """A Struct copied onto ``updated_schema`` (same fields, new name/version); anything else as is."""
    if isinstance(key_or_value, Struct):
        updated = Struct(updated_schema)
        for field in updated_schema.fields:
            updated.put(field, field_value(key_or_value, field.name, replace_null_with_default))
        return updated
    return key_or_value


class SetSchemaMetadata(Transformation[ConnectRecord]):
    """Abstract base of ``SetSchemaMetadata.Key`` / ``SetSchemaMetadata.Value``."""

    OVERVIEW_DOC = (
        "Set the schema name, version or both on the record's key "
        "(<code>engine.transforms.set_schema_metadata.SetSchemaMetadata.Key</code>) or value "
        "(<code>engine.transforms.set_schema_metadata.SetSchemaMetadata.Value</code>) schema."
    )
    SCHEMA_NAME = "schema.name"
    SCHEMA_VERSION = "schema.version"
    CONFIG_DEF = define_replace_null_with_default(
        ConfigDef()
        .define(
            SCHEMA_NAME,
            ConfigType.STRING,
            None,
            importance=Importance.HIGH,
            documentation="Schema name to set.",
        )
        .define(
            SCHEMA_VERSION,
            ConfigType.INT,
            None,
            importance=Importance.HIGH,
            documentation="Schema version to set.",
        )
    )

    Key: ClassVar[type[SetSchemaMetadata]]
    Value: ClassVar[type[SetSchemaMetadata]]

    def __init__(self) -> None:
        self.schema_name: str | None = None
        self.schema_version: int | None = None

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        parsed = self.CONFIG_DEF.parse(configs)
        self.schema_name = parsed[self.SCHEMA_NAME]
        self.schema_version = parsed[self.SCHEMA_VERSION]
        self.replace_null_with_default: bool = parsed[REPLACE_NULL_WITH_DEFAULT_CONFIG]
        if self.schema_name is None and self.schema_version is None:
            raise ConfigException("Neither schema name nor version configured")

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        schema, value = self._operating(record)
        if value is None and schema is None:
            return record
        schema = require_schema(schema, "updating schema metadata")
        is_map, is_array = schema.type is Type.MAP, schema.type is Type.ARRAY
        updated_schema = Schema(
            schema.type,
            optional=schema.optional,
            default_value=schema.default_value,
            name=self.schema_name if self.schema_name is not None else schema.name,
            version=self.schema_version if self.schema_version is not None else schema.version,
            doc=schema.doc,
            parameters=schema.parameters,
            fields=schema.fields if schema.type is Type.STRUCT else None,
            key_schema=schema.key_schema if is_map else None,
            value_schema=schema.value_schema if is_map or is_array else None,
        )
        return self._updated(
            record, updated_schema, update_schema_in(value, updated_schema, self.replace_null_with_default)
        )

    @abstractmethod
    def _operating(self, record: ConnectRecord) -> tuple[Schema | None, Any]:
        """The schema and value this variant works on."""

    @abstractmethod
    def _updated(self, record: ConnectRecord, schema: Schema, value: Any) -> ConnectRecord: ...


class SetSchemaMetadataKey(SetSchemaMetadata):
    """Set the schema name, version or both on the record's key schema."""

    __qualname__ = "SetSchemaMetadata.Key"

    def _operating(self, record: ConnectRecord) -> tuple[Schema | None, Any]:
        return record.key_schema, record.key

    def _updated(self, record: ConnectRecord, schema: Schema, value: Any) -> ConnectRecord:
        return record.new_record(key_schema=schema, key=value)


class SetSchemaMetadataValue(SetSchemaMetadata):
    """Set the schema name, version or both on the record's value schema."""

    __qualname__ = "SetSchemaMetadata.Value"

    def _operating(self, record: ConnectRecord) -> tuple[Schema | None, Any]:
        return record.value_schema, record.value

    def _updated(self, record: ConnectRecord, schema: Schema, value: Any) -> ConnectRecord:
        return record.new_record(value_schema=schema, value=value)


SetSchemaMetadataKey.__name__ = "Key"
SetSchemaMetadataValue.__name__ = "Value"
SetSchemaMetadata.Key = SetSchemaMetadataKey
SetSchemaMetadata.Value = SetSchemaMetadataValue
