"""What a converter is (``Converter`` / ``HeaderConverter``), and the config every one shares.

Converters sit between Kafka's bytes and Connect's ``(schema, value)``: source records go
through ``from_connect_data`` before the producer, sink records through ``to_connect_data``
after the consumer. Kafka classes implement both interfaces on one class; ``configure`` here
takes ``is_key=None`` for header use (``converter.type`` then comes from the configs, default
``header``), so one signature satisfies both protocols.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as dist_version
from typing import Any, Final, Protocol, TypeVar, runtime_checkable

from engine.api.config_def import NO_DEFAULT, ConfigDef, ConfigDefError, ConfigType, Importance, ValidString
from engine.api.errors import ConfigException
from engine.data.schema import Schema, SchemaAndValue

__all__ = [
    "AWAITING_CALLER",
    "CONVERTER_TYPE_CONFIG",
    "BuiltinConverter",
    "ConversionPending",
    "Converter",
    "HeaderConverter",
    "RawHeaders",
    "converted",
    "converter_config_def",
    "converter_type",
    "converter_version",
    "parse_converter_config",
]

T = TypeVar("T")

RawHeaders = Sequence[tuple[str, bytes | None]]
"""Kafka record headers as aiokafka gives them; passed through for converters that look at them."""

CONVERTER_TYPE_CONFIG: Final = "converter.type"


def converter_config_def() -> ConfigDef:
    """``ConverterConfig.newConfigDef()``: the ``converter.type`` key every converter config has."""
    return ConfigDef().define(
        CONVERTER_TYPE_CONFIG,
        ConfigType.STRING,
        NO_DEFAULT,
        ValidString.in_("key", "value", "header"),
        Importance.LOW,
        "How this converter will be used.",
    )


def converter_type(configs: Mapping[str, Any], is_key: bool | None) -> str:
    """``key``/``value`` from ``is_key``, else the configured ``converter.type`` (default ``header``)."""
    if is_key is None:
        return str(configs.get(CONVERTER_TYPE_CONFIG) or "header")
    return "key" if is_key else "value"


def parse_converter_config(
    definition: ConfigDef, configs: Mapping[str, Any], is_key: bool | None
) -> dict[str, Any]:
    """``definition`` parsed with ``converter.type`` set from ``is_key``; bad values raise ``ConfigException``.

    Converters are configured outside any connector validation, so Kafka reports a bad setting as
    ``ConfigException`` rather than the ConfigDef's own error.
    """
    props = {**configs, CONVERTER_TYPE_CONFIG: converter_type(configs, is_key)}
    try:
        return definition.parse(props)
    except ConfigDefError as exc:
        raise ConfigException(str(exc)) from exc


AWAITING_CALLER: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "converter_awaiting_caller", default=False
)
"""True in a context whose converter calls handle ``ConversionPending`` (the task loops set it)."""


class ConversionPending(Exception):
    """A converter needs I/O first (a schema from a registry): await :meth:`ready`, then call it again.

    Converters are synchronous (Kafka's interface), and the data loops call them on the event loop;
    a registry round trip there would stall every task of the worker. So where the caller says it
    can wait (``AWAITING_CALLER``, set by the task loops), a converter that misses its cache starts
    the fetch as a task of the running loop and raises this; the caller awaits it (``converted``
    does both) and calls again, which now hits the cache or raises the fetch's error. Any other
    caller gets the converter's old behaviour: the call blocks until the schema is there.
    """

    def __init__(self, what: str, fetch: Awaitable[Any]) -> None:
        super().__init__(f"{what}: the converter is waiting for it; await ready() and convert again")
        self._fetch = fetch

    async def ready(self) -> None:
        """Wait for the fetch to end (its failure, if any, is raised by the next conversion).

        Shielded: other records may wait on the same fetch, so one caller's cancellation (a task
        stopping) does not cancel it for the rest; the converter's ``close`` does.
        """
        await asyncio.shield(self._fetch)


async def converted(call: Callable[[], T | Awaitable[T]], pending: ConversionPending | None = None) -> T:
    """``call()``'s result (awaited if awaitable), after awaiting whatever the converter says it is
    waiting for (``pending`` first): how async code calls a converter without blocking its loop."""
    while True:
        if pending is not None:
            await pending.ready()
        try:
            result = call()
            if inspect.isawaitable(result):
                return await result
            return result
        except ConversionPending as again:
            pending = again


def converter_version() -> str:
    """What the built-in converters report as ``version()``: the engine distribution's version."""
    try:
        return dist_version("connect-engine")
    except PackageNotFoundError:
        return "unknown"


class BuiltinConverter:
    """The ``version``/``config``/``configure``/``close`` every built-in converter shares.

    Those with settings of their own override ``config`` and ``configure``; the rest have only
    ``converter.type``, which the call itself implies, and hold nothing to release.
    """

    def version(self) -> str:
        return converter_version()

    def config(self) -> ConfigDef:
        return converter_config_def()

    def configure(self, configs: Mapping[str, Any], is_key: bool | None = None) -> None:
        """Nothing to configure (``converter.type`` is implied by the call)."""

    def close(self) -> None:
        """Nothing to release."""


@runtime_checkable
class Converter(Protocol):
    """``org.apache.kafka.connect.storage.Converter``."""

    def configure(self, configs: Mapping[str, Any], is_key: bool) -> None: ...

    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: RawHeaders | None = None
    ) -> bytes | None: ...

    def to_connect_data(
        self, topic: str, value: bytes | None, headers: RawHeaders | None = None
    ) -> SchemaAndValue: ...

    def config(self) -> ConfigDef | None: ...

    def close(self) -> None: ...


@runtime_checkable
class HeaderConverter(Protocol):
    """``org.apache.kafka.connect.storage.HeaderConverter``: one header value at a time."""

    def configure(self, configs: Mapping[str, Any]) -> None: ...

    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue: ...

    def from_connect_header(
        self, topic: str, header_key: str, schema: Schema | None, value: Any
    ) -> bytes | None: ...

    def config(self) -> ConfigDef | None: ...

    def close(self) -> None: ...
