"""``io.confluent.connect.protobuf.ProtobufConverter``: Connect data <-> Protobuf in Confluent's wire format.

After the schema id comes Confluent's message-index array (``0`` for the file's first message),
then the message. Schemas map as ``engine.converters.registry.protobuf_data`` says. They are
registered as ``.proto`` text, as Java's ProtobufConverter registers them (``schema.format=text``,
the default), or as a base64 ``FileDescriptorProto``, as confluent-kafka's Python serializer does
(``schema.format=serialized``). Reading takes either (asked for with ``format=serialized``, which a
Confluent registry honours and others ignore), with the schemas it references; ``.proto`` text is
compiled by protoc (``proto_text``). Needs the ``registry`` extra (protobuf, grpcio-tools).
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping
from typing import Any, Final

from engine.api.config_def import ConfigDef, ConfigType, Importance, ValidString
from engine.api.errors import DataException
from engine.converters.registry.config import registry_config_def
from engine.converters.registry.converter import HEADER_SIZE, Reader, RegistryConverter, Writer, require
from engine.converters.registry.proto_text import compile_proto, proto_text
from engine.converters.registry.proto_wrappers import unwrapped_schema, wrapper_file, wrapper_name
from engine.converters.registry.protobuf_data import ProtobufData, decode_indexes, encode_indexes
from engine.data.schema import Schema, SchemaAndValue, Type

__all__ = ["ProtobufConverter"]

SCHEMAS_CACHE: Final = "schemas.cache.config"
SCHEMA_FORMAT: Final = "schema.format"
WRAPPER_FOR_RAW_PRIMITIVES: Final = "wrapper.for.raw.primitives"
TEXT: Final = "text"
SERIALIZED: Final = "serialized"


def protobuf_converter_config_def() -> ConfigDef:
    return (
        registry_config_def()
        .define(
            SCHEMAS_CACHE, ConfigType.INT, 1000, None, Importance.LOW, "Size of the converted schemas cache"
        )
        .define(
            WRAPPER_FOR_RAW_PRIMITIVES,
            ConfigType.BOOLEAN,
            True,
            None,
            Importance.LOW,
            "Whether a wrapper message should be interpreted as a raw primitive at the root level",
        )
        .define(
            SCHEMA_FORMAT,
            ConfigType.STRING,
            TEXT,
            ValidString.in_(TEXT, SERIALIZED),
            Importance.LOW,
            "How schemas are registered: text (.proto source, as Java's ProtobufConverter registers "
            "them) or serialized (a base64 FileDescriptorProto, as confluent-kafka's Python "
            "serializer does). Reading takes either.",
        )
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
        self._as_text = True
        self._unwrap = True

    def config(self) -> ConfigDef:
        return protobuf_converter_config_def()

    def _load_libraries(self) -> None:
        require("google.protobuf", self.JAVA_NAME)
        self._data = ProtobufData()

    def _configure_format(self, parsed: Mapping[str, Any]) -> int:
        self._as_text = parsed[SCHEMA_FORMAT] == TEXT
        self._unwrap = parsed[WRAPPER_FOR_RAW_PRIMITIVES]
        return int(parsed[SCHEMAS_CACHE])

    def _mapping(self) -> ProtobufData:
        if self._data is None:
            self._data = ProtobufData()
        return self._data

    def _prepare_write(self, schema: Schema) -> tuple[str, str | None, Callable[[Any], Writer]]:
        data = self._mapping()
        wrapper = wrapper_name(schema) if schema.type is not Type.STRUCT else None
        if wrapper is not None:
            return self._prepare_wrapped(wrapper)
        fdp, descriptor = data.file_for(schema)
        if self._as_text:
            text = proto_text(fdp)
        else:
            text, _ = data.from_connect_schema(schema)

        def make_writer(written_under: Any) -> Writer:
            return data.writer(
                schema, descriptor if written_under is None else written_under, encode_indexes([0])
            )

        return text, descriptor.full_name, make_writer

    def _prepare_wrapped(self, wrapper: str) -> tuple[str, str | None, Callable[[Any], Writer]]:
        """A non-struct value in its wrapper message, under ``wrappers.proto`` (as Confluent writes one)."""
        data = self._mapping()
        fdp, indexes = wrapper_file()
        text = proto_text(fdp) if self._as_text else base64.b64encode(fdp.SerializeToString()).decode()
        descriptor = data.descriptor_in([fdp], [indexes[wrapper]])
        cls = data.message_class(descriptor)
        prefix = encode_indexes([indexes[wrapper]])

        def make_writer(written_under: Any) -> Writer:
            return lambda value: prefix + cls(value=value).SerializeToString()

        return text, wrapper, make_writer

    async def _files(self, schema_text: str, references: Mapping[str, str]) -> list[Any]:
        """The schema's ``FileDescriptorProto`` and those of its references, theirs first."""
        data = self._mapping()
        parsed = {name: data.parse_serialized(text) for name, text in references.items()}
        main = data.parse_serialized(schema_text)
        serialized = {name: fdp for name, fdp in parsed.items() if fdp is not None}
        if main is not None and len(serialized) == len(parsed):
            for name, fdp in serialized.items():
                fdp.name = name  # the import path the schema names it by
            return [*serialized.values(), main]
        sources = {
            name: text if fdp is None else proto_text(fdp)
            for (name, text), fdp in zip(references.items(), parsed.values(), strict=True)
        }
        return await compile_proto(schema_text if main is None else proto_text(main), sources)

    async def _written_under(self, schema_text: str, references: Mapping[str, str]) -> Any:
        return self._mapping().descriptor_in(await self._files(schema_text, references), [0])

    async def _aprepare_read(self, schema_text: str, references: Mapping[str, str]) -> tuple[Schema, Reader]:
        data = self._mapping()
        files = await self._files(schema_text, references)
        readers: dict[tuple[int, ...], tuple[Schema, Callable[[bytes], Any]]] = {}

        def for_indexes(indexes: list[int]) -> tuple[Schema, Callable[[bytes], Any]]:
            key = tuple(indexes)
            found = readers.get(key)
            if found is None:
                descriptor = data.descriptor_in(files, indexes)
                unwrapped = unwrapped_schema(descriptor) if self._unwrap else None
                if unwrapped is not None:
                    cls = data.message_class(descriptor)
                    found = readers[key] = (unwrapped, lambda payload: cls.FromString(payload).value)
                    return found
                connect = data.to_connect_schema(descriptor)
                found = readers[key] = (connect, data.reader(connect, descriptor))
            return found

        def other(record: bytes) -> SchemaAndValue:  # message indexes other than [0]: their own schema
            indexes, used = decode_indexes(memoryview(record)[HEADER_SIZE:])
            schema, read = for_indexes(indexes)
            return SchemaAndValue(schema, read(bytes(record[HEADER_SIZE + used :])))

        # the first message, as nearly every record names it: one function from the framed record
        descriptor = data.descriptor_in(files, [0])
        unwrapped = unwrapped_schema(descriptor) if self._unwrap else None
        if unwrapped is not None:
            cls = data.message_class(descriptor)
            parse = cls.FromString

            def wrapped(record: bytes) -> Any:
                if record[HEADER_SIZE : HEADER_SIZE + 1] != b"\x00":
                    return other(record)
                return parse(record[HEADER_SIZE + 1 :]).value

            readers[(0,)] = (unwrapped, lambda payload: parse(payload).value)
            return unwrapped, wrapped
        connect = data.to_connect_schema(descriptor)
        readers[(0,)] = (connect, data.reader(connect, descriptor))
        return connect, data.reader(connect, descriptor, framed=other)

    def _prepare_read(self, schema_text: str, references: Mapping[str, str]) -> tuple[Schema, Reader]:
        raise DataException("ProtobufConverter reads schemas through _aprepare_read")
