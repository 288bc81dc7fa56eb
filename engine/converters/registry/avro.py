"""``io.confluent.connect.avro.AvroConverter``: Connect data <-> Avro in Confluent's wire format.

Schemas map as ``AvroData`` does (``engine.converters.registry.avro_data``); payloads are written
and read with fastavro's schemaless encoder, against the schema registered under (or, reading,
the writer's schema fetched by id). Needs the ``registry`` extra (fastavro).
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Mapping
from typing import Any, Final

from engine.api.config_def import ConfigDef, ConfigType, Importance
from engine.converters.registry.avro_data import AvroData
from engine.converters.registry.config import registry_config_def
from engine.converters.registry.converter import Reader, RegistryConverter, Writer, require
from engine.converters.registry.references import inline_avro
from engine.data.logical import Decimal
from engine.data.schema import Schema

__all__ = ["AvroConverter"]

ENHANCED: Final = "enhanced.avro.schema.support"
CONNECT_META_DATA: Final = "connect.meta.data"
SCHEMAS_CACHE: Final = "schemas.cache.config"
SCRUB: Final = "scrub.invalid.names"


def avro_converter_config_def() -> ConfigDef:
    """The registry keys plus ``AvroDataConfig``'s."""
    return (
        registry_config_def()
        .define(
            ENHANCED,
            ConfigType.BOOLEAN,
            False,
            None,
            Importance.MEDIUM,
            "Toggle for enabling/disabling enhanced avro schema support: Enum symbol preservation and "
            "Package Name awareness",
        )
        .define(
            CONNECT_META_DATA,
            ConfigType.BOOLEAN,
            True,
            None,
            Importance.LOW,
            "Toggle for enabling/disabling connect converter to add its meta data to the output schema "
            "or not",
        )
        .define(
            SCHEMAS_CACHE, ConfigType.INT, 1000, None, Importance.LOW, "Size of the converted schemas cache"
        )
        .define(
            SCRUB,
            ConfigType.BOOLEAN,
            False,
            None,
            Importance.MEDIUM,
            "Whether to scrub invalid names by replacing invalid characters with valid ones",
        )
    )


class AvroConverter(RegistryConverter):
    """Kafka Connect's Avro converter, byte-compatible with Confluent's."""

    SCHEMA_TYPE = "AVRO"
    FORMAT = "Avro"
    JAVA_NAME = "io.confluent.connect.avro.AvroConverter"

    def __init__(self) -> None:
        super().__init__()
        self.avro_data = AvroData()
        self._fastavro: Any = None

    def config(self) -> ConfigDef:
        return avro_converter_config_def()

    def _load_libraries(self) -> None:
        self._fastavro = require("fastavro", self.JAVA_NAME)

    def _configure_format(self, parsed: Mapping[str, Any]) -> int:
        self.avro_data = AvroData(
            connect_meta_data=parsed[CONNECT_META_DATA],
            enhanced=parsed[ENHANCED],
            scrub_invalid_names=parsed[SCRUB],
        )
        return int(parsed[SCHEMAS_CACHE])

    def _parse(self, avro: Any) -> Any:
        return self._fastavro.parse_schema(avro, _ignore_default_error=True)

    def _prepare_write(self, schema: Schema) -> tuple[str, str | None, Callable[[Any], Writer]]:
        avro = self.avro_data.from_connect_schema(schema)
        text = json.dumps(avro, separators=(",", ":"))
        record_name = _record_name(avro)
        to_avro = self.avro_data.to_avro(schema)
        fastavro = self._fastavro

        def make_writer(written_under: str | None) -> Writer:
            under = avro if written_under is None else json.loads(written_under)
            if _is_bytes(under):
                return _raw_writer(schema)
            parsed = self._parse(under)
            write = fastavro.schemaless_writer
            # fastavro encodes into a bytearray of its own and hands it to ``write`` once: kept as is
            # (framing copies it once into the record) instead of copied into and out of a BytesIO
            encoded: list[bytearray] = []
            sink = _Sink(encoded.append)
            take = encoded.pop

            def writer(value: Any) -> bytes:
                write(sink, parsed, to_avro(value))
                return take()  # type: ignore[return-value]  # a bytearray: frame() makes the bytes

            return writer

        return text, record_name, make_writer

    async def _written_under(self, schema_text: str, references: Mapping[str, str]) -> Any:
        return json.dumps(inline_avro(json.loads(schema_text), references))

    def _prepare_read(self, schema_text: str, references: Mapping[str, str]) -> tuple[Schema, Reader]:
        avro = inline_avro(json.loads(schema_text), references)
        connect = self.avro_data.to_connect_schema(avro)
        parsed = self._parse(avro)
        to_connect = self.avro_data.to_connect(connect, avro)
        if _is_bytes(avro):
            return connect, _raw_reader(connect)
        read = self._fastavro.schemaless_reader
        if not _has_union(avro):

            def plain(payload: bytes) -> Any:
                return to_connect(read(io.BytesIO(payload), parsed, None))

            return connect, plain

        def reader(payload: bytes) -> Any:  # record names tell a union's record branches apart
            return to_connect(
                read(
                    io.BytesIO(payload),
                    parsed,
                    None,
                    return_record_name=True,
                    return_record_name_override=True,
                )
            )

        return connect, reader


class _Sink:
    """The file object fastavro's schemaless writer writes to: its one ``write`` call keeps the buffer."""

    __slots__ = ("write",)

    def __init__(self, write: Callable[[bytearray], None]) -> None:
        self.write = write


def _record_name(avro: Any) -> str | None:
    """The full name RecordNameStrategy uses (a record's or enum's; a union's first named branch)."""
    if isinstance(avro, list):
        for branch in avro:
            name = _record_name(branch)
            if name is not None:
                return name
        return None
    if isinstance(avro, dict) and avro.get("type") in ("record", "enum", "fixed"):
        namespace = avro.get("namespace")
        return f"{namespace}.{avro['name']}" if namespace else str(avro["name"])
    return None


def _has_union(avro: Any) -> bool:
    """Whether ``avro`` holds a union of more than ``null`` and one branch anywhere."""
    if isinstance(avro, list):
        return sum(1 for b in avro if b != "null" and b != {"type": "null"}) > 1 or any(map(_has_union, avro))
    if isinstance(avro, dict):
        if isinstance(avro.get("fields"), list) and any(_has_union(f.get("type")) for f in avro["fields"]):
            return True
        return any(_has_union(avro.get(k)) for k in ("type", "items", "values"))
    return False


def _is_bytes(avro: Any) -> bool:
    """A top-level ``bytes`` schema: Confluent's serdes write and read its payload raw, without Avro's length."""
    return avro == "bytes" or (isinstance(avro, dict) and avro.get("type") == "bytes")


def _raw_writer(schema: Schema) -> Writer:
    if schema.name == Decimal.LOGICAL_NAME:
        return lambda value: Decimal.from_logical(schema, value)
    return lambda value: bytes(value)


def _raw_reader(schema: Schema) -> Reader:
    if schema.name == Decimal.LOGICAL_NAME:
        return lambda payload: Decimal.to_logical(schema, bytes(payload))
    return lambda payload: bytes(payload)
