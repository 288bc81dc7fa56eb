"""``io.confluent.connect.protobuf.ProtobufConverter``: Connect data <-> Protobuf in Confluent's wire format.

After the schema id comes Confluent's message-index array (``0`` for the file's first message),
then the message. Schemas map as ``engine.converters.registry.protobuf_data`` says; the registry
holds them as base64 ``FileDescriptorProto`` (fetched with ``format=serialized``). Needs the
``registry`` extra (protobuf).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from engine.api.config_def import ConfigDef, ConfigType, Importance
from engine.converters.registry.config import registry_config_def
from engine.converters.registry.converter import Reader, RegistryConverter, Writer, require
from engine.converters.registry.protobuf_data import ProtobufData, decode_indexes, encode_indexes
from engine.data.schema import Schema

__all__ = ["ProtobufConverter"]

SCHEMAS_CACHE: Final = "schemas.cache.config"


def protobuf_converter_config_def() -> ConfigDef:
    return registry_config_def().define(
        SCHEMAS_CACHE, ConfigType.INT, 1000, None, Importance.LOW, "Size of the converted schemas cache"
    )


class ProtobufConverter(RegistryConverter):
    """Kafka Connect's Protobuf converter, in Confluent's wire format."""

    SCHEMA_TYPE = "PROTOBUF"
    FORMAT = "Protobuf"
    JAVA_NAME = "io.confluent.connect.protobuf.ProtobufConverter"
    SCHEMA_FORMAT = "serialized"

    def __init__(self) -> None:
        super().__init__()
        self._data: ProtobufData | None = None

    def config(self) -> ConfigDef:
        return protobuf_converter_config_def()

    def _load_libraries(self) -> None:
        require("google.protobuf", self.JAVA_NAME)
        self._data = ProtobufData()

    def _configure_format(self, parsed: Mapping[str, Any]) -> int:
        return int(parsed[SCHEMAS_CACHE])

    def _mapping(self) -> ProtobufData:
        if self._data is None:
            self._data = ProtobufData()
        return self._data

    def _prepare_write(self, schema: Schema) -> tuple[str, str | None, Callable[[str | None], Writer]]:
        data = self._mapping()
        text, descriptor = data.from_connect_schema(schema)

        def make_writer(written_under: str | None) -> Writer:
            target = descriptor if written_under is None else data.descriptor_for(written_under, [0])
            write = data.writer(schema, target)
            prefix = encode_indexes([0])
            return lambda value: prefix + write(value)

        return text, descriptor.full_name, make_writer

    def _prepare_read(
        self, schema_text: str, references: tuple[Mapping[str, Any], ...]
    ) -> tuple[Schema, Reader]:
        data = self._mapping()
        readers: dict[tuple[int, ...], tuple[Schema, Callable[[bytes], Any]]] = {}

        def for_indexes(indexes: list[int]) -> tuple[Schema, Callable[[bytes], Any]]:
            key = tuple(indexes)
            found = readers.get(key)
            if found is None:
                descriptor = data.descriptor_for(schema_text, indexes)
                connect = data.to_connect_schema(descriptor)
                found = readers[key] = (connect, data.reader(connect, descriptor))
            return found

        schema, _ = for_indexes([0])

        def reader(payload: memoryview) -> Any:
            indexes, used = decode_indexes(payload)
            _, read = for_indexes(indexes)
            return read(bytes(payload[used:]))

        return schema, reader
