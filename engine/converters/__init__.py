"""Built-in converters (``key.converter``/``value.converter``/``header.converter``) and the factory.

Each built-in answers to Kafka's class name too, so Kafka connector configs work unchanged.
"""

from __future__ import annotations

from engine.converters.base import Converter, HeaderConverter
from engine.converters.bytearray import ByteArrayConverter
from engine.converters.factory import converter_class, converter_for, header_converter_for
from engine.converters.json_converter import JsonConverter
from engine.converters.simple_header import SimpleHeaderConverter
from engine.converters.string_converter import StringConverter

__all__ = [
    "ByteArrayConverter",
    "Converter",
    "HeaderConverter",
    "JsonConverter",
    "SimpleHeaderConverter",
    "StringConverter",
    "converter_class",
    "converter_for",
    "header_converter_for",
]
