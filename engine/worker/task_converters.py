"""A task's key, value and header converters: the connector's overrides, else the worker's.

``key.converter=...`` with ``key.converter.<x>=...`` sub-configs, on the connector or the worker;
the connector's setting wins whole (its class *and* its sub-configs), as ``Worker.startTask``
does. The default, when neither sets one, is ``JsonConverter`` for keys and values and
``SimpleHeaderConverter`` for headers, as in Kafka's example worker properties.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from engine.converters.base import Converter, HeaderConverter
from engine.converters.factory import converter_class, converter_for, header_converter_for

DEFAULT_CONVERTER = "JsonConverter"
DEFAULT_HEADER_CONVERTER = "SimpleHeaderConverter"


def _setting(
    key: str, connector: Mapping[str, str], worker: Mapping[str, str], default: str
) -> tuple[str, dict[str, str]]:
    """The class name and its ``<key>.``-prefixed sub-configs, from whichever side names the class."""
    for source in (connector, worker):
        name = (source.get(key) or "").strip()
        if name:
            prefix = key + "."
            return name, {k[len(prefix) :]: v for k, v in source.items() if k.startswith(prefix)}
    return default, {}


@dataclass(frozen=True, slots=True)
class TaskConverters:
    key: Converter
    value: Converter
    header: HeaderConverter

    @staticmethod
    def check(connector: Mapping[str, str], worker: Mapping[str, str]) -> None:
        """Fail fast on converter names that resolve to no class, without configuring anything."""
        for key, default in (
            ("key.converter", DEFAULT_CONVERTER),
            ("value.converter", DEFAULT_CONVERTER),
            ("header.converter", DEFAULT_HEADER_CONVERTER),
        ):
            converter_class(_setting(key, connector, worker, default)[0])

    @classmethod
    def build(cls, connector: Mapping[str, str], worker: Mapping[str, str]) -> TaskConverters:
        """Configured converters; a bad name or config raises ``ConfigException`` (the task fails)."""
        key_name, key_configs = _setting("key.converter", connector, worker, DEFAULT_CONVERTER)
        value_name, value_configs = _setting("value.converter", connector, worker, DEFAULT_CONVERTER)
        header_name, header_configs = _setting(
            "header.converter", connector, worker, DEFAULT_HEADER_CONVERTER
        )
        return cls(
            key=converter_for(key_name, key_configs, is_key=True),
            value=converter_for(value_name, value_configs, is_key=False),
            header=header_converter_for(header_name, header_configs),
        )

    def close(self) -> None:
        for converter in (self.key, self.value, self.header):
            close = getattr(converter, "close", None)
            if close is not None:
                close()
