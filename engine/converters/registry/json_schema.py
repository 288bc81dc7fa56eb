"""``io.confluent.connect.json.JsonSchemaConverter``: Connect data <-> JSON with a JSON Schema in the registry.

Schemas map as ``JsonSchemaData`` does (``engine.converters.registry.json_schema_data``); the
payload is the JSON text Jackson would write (``engine.converters.jackson``). With
``json.fail.invalid.schema`` each value is validated against its schema before it is written
(jsonschema, the ``registry`` extra).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Final

from engine.api.config_def import ConfigDef, ConfigType, Importance
from engine.api.errors import DataException
from engine.converters import jackson
from engine.converters.registry.config import registry_config_def
from engine.converters.registry.converter import HEADER_SIZE, Reader, RegistryConverter, Writer, require
from engine.converters.registry.json_schema_data import JsonSchemaData
from engine.converters.registry.references import inline_json_schema
from engine.data.schema import Schema

__all__ = ["JsonSchemaConverter"]

FAIL_INVALID: Final = "json.fail.invalid.schema"
SCHEMAS_CACHE: Final = "schemas.cache.size"


def json_schema_converter_config_def() -> ConfigDef:
    return (
        registry_config_def()
        .define(
            FAIL_INVALID,
            ConfigType.BOOLEAN,
            False,
            None,
            Importance.MEDIUM,
            "Whether to fail serialization if the payload is not valid for the schema",
        )
        .define(
            SCHEMAS_CACHE, ConfigType.INT, 1000, None, Importance.LOW, "Size of the converted schemas cache"
        )
    )


class JsonSchemaConverter(RegistryConverter):
    """Kafka Connect's JSON Schema converter, byte-compatible with Confluent's."""

    SCHEMA_TYPE = "JSON"
    FORMAT = "JSON Schema"
    JAVA_NAME = "io.confluent.connect.json.JsonSchemaConverter"

    def __init__(self) -> None:
        super().__init__()
        self.data = JsonSchemaData()
        self.fail_invalid = False
        self._jsonschema: Any = None

    def config(self) -> ConfigDef:
        return json_schema_converter_config_def()

    def _load_libraries(self) -> None:
        self._jsonschema = require("jsonschema", self.JAVA_NAME)

    def _configure_format(self, parsed: Mapping[str, Any]) -> int:
        self.fail_invalid = parsed[FAIL_INVALID]
        return int(parsed[SCHEMAS_CACHE])

    def _prepare_write(self, schema: Schema) -> tuple[str, str | None, Callable[[Any], Writer]]:
        json_schema = self.data.from_connect_schema(schema)
        text = json.dumps(json_schema, separators=(",", ":"))
        to_json = self.data.to_json(schema)
        validator_class = self._jsonschema.Draft7Validator

        def make_writer(written_under: str | None) -> Writer:
            validator = None
            if self.fail_invalid:
                validator = validator_class(
                    json_schema if written_under is None else json.loads(written_under)
                )

            def writer(value: Any) -> bytes:
                node = to_json(value)
                if validator is not None:
                    error = self._jsonschema.exceptions.best_match(validator.iter_errors(_plain(node)))
                    if error is not None:
                        raise DataException(f"Validation error: {error.message}")
                return jackson.dumps(node)

            return writer

        return text, schema.name if schema.type.value == "struct" else None, make_writer

    async def _written_under(self, schema_text: str, references: Mapping[str, str]) -> Any:
        return json.dumps(inline_json_schema(json.loads(schema_text), references))

    def _prepare_read(self, schema_text: str, references: Mapping[str, str]) -> tuple[Schema, Reader]:
        connect = self.data.to_connect_schema(inline_json_schema(json.loads(schema_text), references))
        to_connect = self.data.to_connect(connect)

        def reader(record: bytes) -> Any:
            return to_connect(jackson.loads(bytes(record[HEADER_SIZE:])))

        return connect, reader


def _plain(node: Any) -> Any:
    """``node`` as jsonschema validates it (Decimals as floats)."""
    import decimal

    if isinstance(node, decimal.Decimal):
        return float(node)
    if isinstance(node, list):
        return [_plain(x) for x in node]
    if isinstance(node, dict):
        return {k: _plain(v) for k, v in node.items()}
    return node
