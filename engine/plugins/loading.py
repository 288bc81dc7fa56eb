"""Finding connector classes from ``connector.class``: dotted import paths, then plugin aliases."""

from __future__ import annotations

from functools import cache

from engine.api.connector import Connector, SinkConnector, SourceConnector
from engine.errors import ConfigError
from engine.plugins.classes import ClassNotFound, import_class
from engine.plugins.discovery import process_registry

__all__ = ["connector_type", "load_connector_class"]


@cache
def load_connector_class(name: str) -> type[Connector]:
    """Import ``package.module.Class`` (or ``package.module:Class``) and check it is a connector.

    Names that do not import are looked up among discovered plugins (full class name or
    alias such as ``RecordingSource``); unknown names keep the dotted-path error.
    """
    try:
        return _import_connector_class(name)
    except ConfigError:
        desc = process_registry().resolve(name)
        if desc is None:
            raise
    if not issubclass(desc.cls, (SourceConnector, SinkConnector)):
        raise _class_error(name, f"it names the {desc.type.value} plugin {desc.name}, not a connector")
    return desc.cls


def _import_connector_class(name: str) -> type[Connector]:
    try:
        cls = import_class(name, strict=True)
    except ClassNotFound as exc:  # any import failure is a bad connector.class (400), never a crash
        if exc.module is None:
            why = "it is not a dotted import path such as 'package.module.ClassName'"
        elif exc.error is not None:
            why = f"module {exc.module!r} cannot be imported ({exc.error!r})"
        else:
            why = "it is not a Connector subclass"
        raise _class_error(name, why) from exc.error
    if not issubclass(cls, Connector):
        raise _class_error(name, "it is not a Connector subclass")
    if not issubclass(cls, (SourceConnector, SinkConnector)):
        raise _class_error(name, "connectors must extend SourceConnector or SinkConnector")
    return cls


def connector_type(cls: type[Connector] | None) -> str:
    if cls is not None and issubclass(cls, SourceConnector):
        return "source"
    if cls is not None and issubclass(cls, SinkConnector):
        return "sink"
    return "unknown"


def _class_error(name: str, why: str) -> ConfigError:
    message = f"Failed to find any class that implements Connector and which name matches {name}: {why}"
    return ConfigError(message, errors={"connector.class": [message]})
