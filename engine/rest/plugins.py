"""``/connector-plugins`` resources (Connect's ``ConnectorPluginsResource``): what the worker can run,
and what each plugin accepts.

Answered locally from the worker's plugin registry, never through the herder, as in Connect.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from aiohttp import web

from engine.api._invoke import invoke
from engine.api.config_def import ConfigDef
from engine.api.connector import Connector
from engine.errors import (
    ConfigError,
    ConnectorClassNotFound,
    ConnectorInstantiationError,
    ConnectorNotFound,
    describe,
)
from engine.observability.request_stage import enter_stage
from engine.plugins.classes import import_class
from engine.plugins.discovery import connector_plugin_type
from engine.rest.body import NULL_CONFIG, json_body, string_map
from engine.rest.errors import BadRequest, RestError
from engine.rest.keys import ENGINE, PLUGINS
from engine.rest.plugin_names import foreign_class, plugin_infos
from engine.validation.framework import CONFIG_DEF_STAGE, validate_config_infos
from engine.validation.framework_keys import framework_config_def

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class UnknownPlugin(ConnectorNotFound):
    """404 with Connect's wording; a ConnectorNotFound only for its status."""

    def __init__(self, plugin: str) -> None:
        super().__init__(plugin, f"Unknown plugin {plugin}.")


def _plugin(request: web.Request) -> type:
    """The class ``{plugin}`` names: registry (full name or alias), else any importable class."""
    name = request.match_info["plugin"]
    desc = request.app[PLUGINS].resolve(name)
    if desc is not None:
        return desc.cls
    foreign = foreign_class(name)  # Connect's or Confluent's name for a built-in converter or SMT
    if foreign is not None:
        return foreign
    cls = import_class(name)
    if cls is None:
        raise UnknownPlugin(name)
    if connector_plugin_type(cls) is None:
        raise BadRequest(
            f"Invalid plugin class {name}. Valid types are sink, source, converter, "
            "header_converter, transformation, predicate."
        )
    return cls


def _normalized(name: str) -> str:
    return name.removesuffix("Connector")


async def list_plugins(request: web.Request) -> web.Response:
    raw = request.query.get("connectorsOnly")
    connectors_only = raw is None or raw.strip().lower() == "true"  # @DefaultValue("true") boolean
    return web.json_response(plugin_infos(request.app[PLUGINS], connectors_only=connectors_only))


async def plugin_config(request: web.Request) -> web.Response:
    cls = _plugin(request)
    enter_stage(CONFIG_DEF_STAGE)
    plugin = cls()
    config = getattr(plugin, "config", None)
    own = await invoke(config) if callable(config) else None
    if not isinstance(own, ConfigDef):
        raise RestError(500, f"{cls.__module__}.{cls.__qualname__}.config() must return a ConfigDef")
    keys = own.config_keys
    if issubclass(cls, Connector):
        for name, key in framework_config_def(cls).config_keys.items():
            keys.setdefault(name, key)
    return web.json_response([key.info() for key in keys.values()])


# What Connect's validation throws where ours raises these: named so in the message, as Connect's is
_JAVA_NAMES: list[tuple[type[Exception], str]] = [
    (ConnectorClassNotFound, "org.apache.kafka.connect.runtime.rest.errors.BadRequestException"),
    (ConnectorInstantiationError, "org.apache.kafka.connect.errors.ConnectException"),
    (ConfigError, "org.apache.kafka.connect.runtime.rest.errors.BadRequestException"),
]


async def validate_plugin_config(request: web.Request) -> web.Response:
    """Connect validates on another thread and does not unwrap the ``ExecutionException`` that carries a
    failure back: whatever validation raises answers 500 with ``<exception class>: <message>``."""
    plugin = request.match_info["plugin"]
    body = await json_body(request, numbers_as_text=True)
    if body is None:  # Connect reads connector.class out of the missing config: a NullPointerException
        raise RestError(500, NULL_CONFIG)
    config = string_map(body)
    included = config.get("connector.class")
    if included is not None and not _normalized(included).endswith(_normalized(plugin)):
        raise BadRequest(f"Included connector type {included} does not match request type {plugin}")
    try:
        infos = await validate_config_infos(
            config, plugins=request.app[PLUGINS], clients=request.app[ENGINE].worker.kafka
        )
    except Exception as exc:
        java_name = next((name for cls, name in _JAVA_NAMES if isinstance(exc, cls)), None)
        raise RestError(500, describe(exc, java_name)) from exc
    return web.json_response(infos)


async def reload_plugins(request: web.Request) -> web.Response:
    """Our endpoint: see plugins installed since this worker started (``engine/plugins/reload.py``).
    This worker only: in a cluster, install on every worker and call it on each."""
    result = request.app[ENGINE].reload_plugins(request.app[PLUGINS])
    return web.json_response(result.json())


ROUTES: list[tuple[str, str, Handler]] = [
    ("GET", "/connector-plugins", list_plugins),
    ("POST", "/connector-plugins/reload", reload_plugins),
    ("GET", "/connector-plugins/{plugin}/config", plugin_config),
    ("PUT", "/connector-plugins/{plugin}/config/validate", validate_plugin_config),
]
