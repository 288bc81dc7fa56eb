"""``io.confluent.connect.avro.AvroConverter``: Connect data <-> Avro in Confluent's wire format.

Schemas map as ``AvroData`` does (``engine.converters.registry.avro_data``); payloads are written
and read with fastavro's schemaless encoder, against the schema registered under (or, reading,
the writer's schema fetched by id). Needs the ``registry`` extra (fastavro).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Final

from engine.api.config_def import ConfigDef, ConfigType, Importance
from engine.converters.registry.avro_data import AvroData
from engine.converters.registry.avro_decoder import values_decoder
from engine.converters.registry.config import registry_config_def
from engine.converters.registry.converter import HEADER_SIZE, Reader, RegistryConverter, Writer, require
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
        fastavro = self._fastavro

        def make_writer(written_under: str | None) -> Writer:
            under = avro if written_under is None else json.loads(written_under)
            if _is_bytes(under):
                return _raw_writer(schema)
            # bytes + bytearray: framing makes the record's bytes in the one copy it makes anyway
            return self.avro_data.writer(schema, *_encoder(fastavro, self._parse(under)))  # type: ignore[return-value]

        return text, record_name, make_writer

    async def _written_under(self, schema_text: str, references: Mapping[str, str]) -> Any:
        return json.dumps(inline_avro(json.loads(schema_text), references))

    def _prepare_read(self, schema_text: str, references: Mapping[str, str]) -> tuple[Schema, Reader]:
        avro = inline_avro(json.loads(schema_text), references)
        connect = self.avro_data.to_connect_schema(avro)
        if _is_bytes(avro):
            return connect, _raw_reader(connect)
        parsed = self._parse(avro)
        decoder = _decoder(self._fastavro, parsed, _has_union(avro))
        values = (
            values_decoder(parsed, self._fastavro.read.LOGICAL_READERS) if isinstance(parsed, dict) else None
        )
        return connect, self.avro_data.reader(connect, avro, *decoder, values=values)


def _encoder(fastavro: Any, parsed: Any) -> tuple[Any, ...]:
    """(encode, *args): ``encode(out, record, *args)`` appends ``record``'s schemaless encoding to the
    bytearray ``out``. fastavro's compiled ``write_data`` where there is one, with the named types and
    options ``schemaless_writer`` would build for each record (per record, they cost as much as
    encoding a small one); else ``schemaless_writer`` itself."""
    write_data = getattr(fastavro.write._write, "write_data", None)
    if getattr(fastavro.write._write, "CYTHON_MODULE", 0) and write_data is not None:
        named: dict[str, Any] = {}
        fastavro.parse_schema(parsed, named)
        options = {"strict": False, "strict_allow_default": False, "disable_tuple_notation": False}
        return write_data, parsed, named, "", options
    return _public_encode, fastavro.schemaless_writer, parsed


def _public_encode(out: bytearray, record: Any, writer: Any, parsed: Any) -> None:
    writer(_Sink(out.extend), parsed, record)


def _decoder(fastavro: Any, parsed: Any, union: bool) -> tuple[Any, ...]:
    """(decode, *args): ``decode(fo, *args)`` reads one schemaless record; record names kept for a
    union's record branches (they tell them apart). As :func:`_encoder`, fastavro's compiled
    ``_read_data`` with what ``schemaless_reader`` builds per record made once, where there is one."""
    options = {
        "return_record_name": union,
        "return_record_name_override": union,
        "handle_unicode_errors": "strict",
        "return_named_type": False,
        "return_named_type_override": False,
    }
    read_data = getattr(fastavro.read._read, "_read_data", None)
    if getattr(fastavro.read._read, "CYTHON_MODULE", 0) and read_data is not None:
        named: dict[str, dict[str, Any]] = {"writer": {}, "reader": {}}
        fastavro.parse_schema(parsed, named["writer"])
        return read_data, parsed, named, None, options
    return fastavro.schemaless_reader, parsed, None, union, union


class _Sink:
    """The file object fastavro's schemaless writer writes to: its one ``write`` call appends."""

    __slots__ = ("write",)

    def __init__(self, write: Callable[[bytearray], object]) -> None:
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
        return lambda record: Decimal.to_logical(schema, bytes(record[HEADER_SIZE:]))
    return lambda record: bytes(record[HEADER_SIZE:])
