"""Making a configured converter from ``key.converter`` / ``value.converter`` / ``header.converter``.

Names resolve in order: Kafka's class names (so connector configs written for Kafka work
unchanged), our dotted paths, simple and pruned names (``JsonConverter``, ``Json``), then any
importable ``package.module.Class`` / ``package.module:Class``. Unknown names and classes of the
wrong kind raise ``ConfigException``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from engine.api.errors import ConfigException
from engine.converters.base import Converter, HeaderConverter
from engine.converters.bytearray import ByteArrayConverter
from engine.converters.json_converter import JsonConverter
from engine.converters.registry.avro import AvroConverter
from engine.converters.registry.json_schema import JsonSchemaConverter
from engine.converters.registry.protobuf import ProtobufConverter
from engine.converters.simple_header import SimpleHeaderConverter
from engine.converters.string_converter import StringConverter
from engine.errors import ConfigError
from engine.plugins.classes import ClassNotFound, import_class
from engine.plugins.discovery import PluginType, process_registry
from engine.plugins.nearest import did_you_mean

__all__ = [
    "BUILTIN_CONVERTERS",
    "WORKER_CONVERTER_KEYS",
    "check_worker_converters",
    "converter_class",
    "converter_for",
    "header_converter_for",
]

WORKER_CONVERTER_KEYS: Final = ("key.converter", "value.converter", "header.converter")

_KAFKA_NAMES: Final[dict[type, str]] = {
    JsonConverter: "org.apache.kafka.connect.json.JsonConverter",
    StringConverter: "org.apache.kafka.connect.storage.StringConverter",
    ByteArrayConverter: "org.apache.kafka.connect.converters.ByteArrayConverter",
    SimpleHeaderConverter: "org.apache.kafka.connect.storage.SimpleHeaderConverter",
    AvroConverter: "io.confluent.connect.avro.AvroConverter",
    JsonSchemaConverter: "io.confluent.connect.json.JsonSchemaConverter",
    ProtobufConverter: "io.confluent.connect.protobuf.ProtobufConverter",
}


def _aliases(cls: type) -> list[str]:
    simple = cls.__name__
    names = [_KAFKA_NAMES[cls], f"{cls.__module__}.{simple}", f"{cls.__module__}:{simple}", simple]
    names.extend(
        simple.removesuffix(suffix)
        for suffix in ("HeaderConverter", "Converter")
        if simple.endswith(suffix) and simple != suffix
    )
    return names


BUILTIN_CONVERTERS: Final[dict[str, type]] = {name: cls for cls in _KAFKA_NAMES for name in _aliases(cls)}


def converter_class(name: str) -> type:
    """The class a converter setting names (built-in alias, or an importable dotted path)."""
    name = name.strip()
    found = BUILTIN_CONVERTERS.get(name)
    if found is not None:
        return found
    try:
        return import_class(name, strict=True)
    except ClassNotFound as exc:
        if exc.error is not None and not isinstance(exc.error, ImportError):
            raise exc.error from None  # a converter module that crashes on import is a bug, not an unknown name
        raise ConfigException(f"Class {name} could not be found.") from None


def check_worker_converters(worker: Mapping[str, str]) -> None:
    """Raise ``ConfigError`` when a worker-level converter class cannot be found, naming the nearest.

    Connect's ``WorkerConfig`` loads these CLASS keys when the worker starts and refuses to start;
    otherwise every connector would be created and each of its tasks fail on the same typo.
    """
    for key in WORKER_CONVERTER_KEYS:
        raw = (worker.get(key) or "").strip()
        if not raw:
            continue
        try:
            converter_class(raw)
        except ConfigException:
            found = {n: c for n, c in BUILTIN_CONVERTERS.items() if ":" not in n}
            kinds = [PluginType.CONVERTER, PluginType.HEADER_CONVERTER]
            found.update((d.name, d.cls) for d in process_registry().plugins(kinds))
            message = f"Invalid value {raw} for configuration {key}: Class {raw} could not be found."
            hint = did_you_mean(raw, found, same=found.__getitem__)
            raise ConfigError(message + hint, errors={key: [message]}) from None
        except Exception as exc:  # its module exists and fails on import: the worker cannot use it either
            message = f"Invalid value {raw} for configuration {key}: Class {raw} could not be loaded: {exc!r}"
            raise ConfigError(message, errors={key: [message]}) from exc


def converter_for(name: str, configs: Mapping[str, Any], is_key: bool) -> Converter:
    """A new ``Converter`` named ``name``, configured with ``configs`` (prefix already stripped)."""
    cls = converter_class(name)
    instance = cls()
    if not isinstance(instance, Converter):
        raise ConfigException(f"{name} is not a Converter")
    instance.configure(configs, is_key)
    return instance


def header_converter_for(name: str, configs: Mapping[str, Any]) -> HeaderConverter:
    """A new ``HeaderConverter`` named ``name``, configured with ``converter.type=header``."""
    cls = converter_class(name)
    instance = cls()
    if not isinstance(instance, HeaderConverter):
        raise ConfigException(f"{name} is not a HeaderConverter")
    instance.configure({**configs, "converter.type": "header"})
    return instance
