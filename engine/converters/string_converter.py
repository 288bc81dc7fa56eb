"""``org.apache.kafka.connect.storage.StringConverter``: values as text in one encoding.

Writing uses the value's Java-style ``toString`` (``str`` as is, ``true``/``false``, doubles as
``Double.toString``; other objects via ``str()``, which differs from Java for maps and structs),
so any schema is accepted. Reading always gives ``OPTIONAL_STRING_SCHEMA``. Like Java's
``String(bytes, charset)``/``getBytes``, undecodable bytes become U+FFFD and unencodable
characters ``?`` rather than failing. ``converter.encoding`` takes Java or Python charset names;
an unknown one is a ``ConfigException`` at ``configure`` (Kafka fails at first use).
"""

from __future__ import annotations

import codecs
from collections.abc import Mapping
from typing import Any, Final

from engine.api.config_def import ConfigDef, ConfigType, Importance, java_str
from engine.api.errors import ConfigException
from engine.converters.base import BuiltinConverter, RawHeaders, converter_config_def, parse_converter_config
from engine.data.schema import Schema, SchemaAndValue

__all__ = ["ENCODING_CONFIG", "StringConverter"]

ENCODING_CONFIG: Final = "converter.encoding"
_BOM_BE: Final = b"\xfe\xff"
_BOM_LE: Final = b"\xff\xfe"


def string_converter_config_def() -> ConfigDef:
    """``StringConverterConfig.configDef()``."""
    return converter_config_def().define(
        ENCODING_CONFIG,
        ConfigType.STRING,
        "UTF-8",
        None,
        Importance.HIGH,
        "The name of the Java character set to use for encoding strings as byte arrays.",
    )


class StringConverter(BuiltinConverter):
    """Converter and header converter."""

    def __init__(self) -> None:
        self.encoding = "utf-8"

    def config(self) -> ConfigDef:
        return string_converter_config_def()

    def configure(self, configs: Mapping[str, Any], is_key: bool | None = None) -> None:
        name = parse_converter_config(string_converter_config_def(), configs, is_key)[ENCODING_CONFIG]
        try:
            self.encoding = codecs.lookup(name).name
        except LookupError:
            raise ConfigException(ENCODING_CONFIG, name, "Unsupported character set") from None

    def _encode(self, text: str) -> bytes:
        if self.encoding == "utf-16":  # Java's UTF-16 writes a big-endian BOM; Python's is native
            return _BOM_BE + text.encode("utf-16-be", errors="replace")
        return text.encode(self.encoding, errors="replace")

    def _decode(self, data: bytes) -> str:
        if self.encoding == "utf-16":  # Java: BOM decides, big-endian without one
            if data.startswith(_BOM_LE):
                return data[2:].decode("utf-16-le", errors="replace")
            return data.removeprefix(_BOM_BE).decode("utf-16-be", errors="replace")
        return data.decode(self.encoding, errors="replace")

    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: RawHeaders | None = None
    ) -> bytes | None:
        return None if value is None else self._encode(java_str(value))

    def to_connect_data(
        self, topic: str, value: bytes | None, headers: RawHeaders | None = None
    ) -> SchemaAndValue:
        return SchemaAndValue(Schema.OPTIONAL_STRING_SCHEMA, None if value is None else self._decode(value))

    def from_connect_header(
        self, topic: str, header_key: str, schema: Schema | None, value: Any
    ) -> bytes | None:
        return self.from_connect_data(topic, schema, value)

    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue:
        return self.to_connect_data(topic, value)
