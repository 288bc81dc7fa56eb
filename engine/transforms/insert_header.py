"""``InsertHeader``: adds a header with a literal value to each record.

The literal is parsed once as Connect's ``Values.parseString`` does (the same inference the
``SimpleHeaderConverter`` uses: ``true`` is a BOOLEAN, ``42`` an INT8, ``[1,2]`` an array ...), so
the header carries a schema and a typed value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.api.config_def import ConfigDef, ConfigType, Importance, NonNullValidator
from engine.api.records import ConnectRecord, Header
from engine.api.transforms import Transformation
from engine.converters.simple_header import _parse as parse_string
from engine.data.schema import SchemaAndValue

__all__ = ["InsertHeader"]


class InsertHeader(Transformation[ConnectRecord]):
    """Appends ``header`` = parsed ``value.literal``; existing headers of that name stay."""

    OVERVIEW_DOC = "Add a header to each record."
    HEADER_FIELD = "header"
    VALUE_LITERAL_FIELD = "value.literal"
    CONFIG_DEF = (
        ConfigDef()
        .define(
            HEADER_FIELD,
            ConfigType.STRING,
            validator=NonNullValidator(),
            importance=Importance.HIGH,
            documentation="The name of the header.",
        )
        .define(
            VALUE_LITERAL_FIELD,
            ConfigType.STRING,
            validator=NonNullValidator(),
            importance=Importance.HIGH,
            documentation="The literal value that is to be set as the header value on all records.",
        )
    )

    def __init__(self) -> None:
        self.header = ""
        self.literal_value = SchemaAndValue.NULL

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        parsed = self.CONFIG_DEF.parse(configs)
        self.header = parsed[self.HEADER_FIELD]
        self.literal_value = parse_string(parsed[self.VALUE_LITERAL_FIELD])

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        added = Header(self.header, self.literal_value.value, self.literal_value.schema)
        return record.new_record(headers=(*record.headers, added))
