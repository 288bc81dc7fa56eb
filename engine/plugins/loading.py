"""Finding connector classes from ``connector.class``: dotted import paths, then plugin aliases."""

from __future__ import annotations

from functools import cache

import structlog

from engine.api.connector import Connector, SinkConnector, SourceConnector
from engine.api.task import Task
from engine.errors import ConnectorClassNotFound, MissingExtra
from engine.plugins.classes import ClassNotFound, import_class
from engine.plugins.discovery import CONNECTOR_TYPES, extra_needed_by, process_registry
from engine.plugins.extras import install_hint, missing_extra
from engine.plugins.nearest import did_you_mean

__all__ = ["connector_type", "load_connector_class", "task_twin"]

log = structlog.get_logger(component="plugins")


@cache
def load_connector_class(name: str) -> type[Connector]:
    """Import ``package.module.Class`` (or ``package.module:Class``) and check it is a connector.

    Names that do not import are looked up among discovered connectors (full class name or
    alias such as ``RecordingSource``). Raises ``ConnectorClassNotFound`` with Connect's message
    (``Plugins.connectorClass``); when a module exists but fails to import, that error is its cause.
    A built-in connector whose optional extra is not installed raises ``MissingExtra``, naming the
    ``pip install`` to run.
    """
    try:
        cls = import_class(name, strict=True)
    except ClassNotFound as exc:
        cause = exc.error if exc.error is not None and not _missing_module(exc) else None
        needs = missing_extra(cause) if cause is not None else None
        if needs is not None:
            raise MissingExtra(name, *needs, install_hint(*needs)) from cause
        if cause is not None:
            log.warning(
                "plugins.connector_module_failed", connector_class=name, module=exc.module, error=repr(cause)
            )
    else:
        if issubclass(cls, SourceConnector | SinkConnector):
            return cls
        cause = None
    desc = process_registry().resolve(name)
    if desc is not None and desc.type in CONNECTOR_TYPES:
        return desc.cls
    needs = extra_needed_by(name)
    if needs is not None:
        raise MissingExtra(name, *needs, install_hint(*needs))
    raise _not_found(name) from cause


@cache
def task_twin(java_name: str) -> type[Task] | None:
    """The task class whose ``java_class`` is ``java_name``, among the tasks of connectors that are twins of
    Java connectors: task configs Java Connect wrote name its own ``task.class``."""
    for desc in process_registry().plugins(CONNECTOR_TYPES):
        if not getattr(desc.cls, "java_class", None):
            continue
        try:
            task = desc.cls().task_class()
        except Exception:  # a twin whose task_class() needs a started instance: not this way
            continue
        if (
            isinstance(task, type)
            and issubclass(task, Task)
            and getattr(task, "java_class", None) == java_name
        ):
            return task
    return None


def _missing_module(exc: ClassNotFound) -> bool:
    """The name's module does not exist (as opposed to existing and failing on import)."""
    error = exc.error
    return (
        isinstance(error, ModuleNotFoundError)
        and error.name is not None
        and exc.module is not None
        and (exc.module == error.name or exc.module.startswith(error.name + "."))
    )


def _not_found(name: str) -> ConnectorClassNotFound:
    """Connect's wording, listing every connector as its ``PluginDesc.toString()`` (sorted by class name)."""
    registry = process_registry()
    connectors = sorted(registry.plugins(CONNECTOR_TYPES), key=lambda desc: desc.name)
    message = (
        f"Failed to find any class that implements Connector and which name matches {name}, "
        f"available connectors are: {', '.join(desc.java_repr() for desc in connectors)}"
    )
    names = {desc.name: desc.name for desc in connectors}
    names.update((alias, full) for alias, full in registry.aliases().items() if full in names)
    known = ", ".join(sorted(desc.pruned_name for desc in connectors))
    hint = did_you_mean(name, names, same=names.__getitem__) or f" Known connectors: {known}."
    summary = f"No connector class {name}.{hint}"
    return ConnectorClassNotFound(message, errors={"connector.class": [message]}, summary=summary)


def connector_type(cls: type[Connector] | None) -> str:
    if cls is not None and issubclass(cls, SourceConnector):
        return "source"
    if cls is not None and issubclass(cls, SinkConnector):
        return "sink"
    return "unknown"
