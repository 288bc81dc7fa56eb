"""The built-in transforms and predicates as plugins: entry points, REST listing, nested class names."""

from __future__ import annotations

from collections.abc import AsyncIterator
from importlib.metadata import entry_points

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from engine import Engine
from engine.api.transforms import Predicate, Transformation
from engine.plugins.classes import import_class
from engine.plugins.classes import qualified_name as class_name
from engine.plugins.discovery import PluginRegistry, PluginType
from engine.rest.app import make_app
from engine.transforms.header_from import HeaderFrom
from engine.transforms.resolve import BUILTIN_PREDICATES, BUILTIN_TRANSFORMS, find_class
from tests.rest.conftest import FAST

Client = TestClient[web.Request, web.Application]

MINE = {
    "DropHeaders", "Filter", "InsertHeader", "RegexRouter", "TimestampRouter", "HeaderFrom$Key", "HeaderFrom$Value",
    "SetSchemaMetadata$Key", "SetSchemaMetadata$Value", "TimestampConverter$Key", "TimestampConverter$Value",
}


def test_every_builtin_is_an_entry_point() -> None:
    transforms = {ep.name: ep.value for ep in entry_points(group="connect_engine.transforms")}
    predicates = {ep.name: ep.value for ep in entry_points(group="connect_engine.predicates")}
    assert {k: v for k, v in transforms.items() if k in BUILTIN_TRANSFORMS} == BUILTIN_TRANSFORMS
    assert len(BUILTIN_TRANSFORMS) == 26  # 10 Key/Value pairs + 6 single classes
    assert {k: v for k, v in predicates.items() if k in BUILTIN_PREDICATES} == BUILTIN_PREDICATES


@pytest.mark.parametrize("name", sorted(MINE))
def test_my_entry_points_load_concrete_transformations(name: str) -> None:
    (ep,) = [ep for ep in entry_points(group="connect_engine.transforms") if ep.name == name]
    cls = ep.load()
    assert issubclass(cls, Transformation)
    cls()  # concrete
    assert import_class(class_name(cls)) is cls
    assert find_class(name, "transformation") is cls
    assert find_class(f"org.apache.kafka.connect.transforms.{name}", "transformation") is cls


@pytest.mark.parametrize("name", sorted(BUILTIN_PREDICATES))
def test_predicates_resolve(name: str) -> None:
    cls = find_class(name, "predicate")
    assert cls is not None
    assert issubclass(cls, Predicate)
    assert find_class(f"org.apache.kafka.connect.transforms.predicates.{name}", "predicate") is cls


def test_import_class_handles_nested_names() -> None:
    assert import_class("engine.transforms.header_from.HeaderFrom.Key") is HeaderFrom.Key
    assert import_class("engine.transforms.header_from:HeaderFrom.Value") is HeaderFrom.Value
    assert import_class("engine.transforms.header_from.HeaderFrom$Value") is HeaderFrom.Value
    assert import_class("engine.transforms.header_from.HeaderFrom.Nope") is None
    assert import_class("engine.no_such_module.Thing") is None
    assert import_class("Thing") is None


def test_registry_lists_nested_classes_by_qualname() -> None:
    registry = PluginRegistry.discover()
    names = {d.name: d.type for d in registry.plugins([PluginType.TRANSFORMATION, PluginType.PREDICATE])}
    assert names["engine.transforms.header_from.HeaderFrom.Key"] is PluginType.TRANSFORMATION
    assert names["engine.transforms.predicates.TopicNameMatches"] is PluginType.PREDICATE
    desc = registry.resolve("engine.transforms.timestamp_converter.TimestampConverter.Value")
    assert desc is not None
    assert desc.simple_name == "Value"
    assert registry.resolve("Filter") is not None  # unambiguous alias


@pytest.fixture
async def client() -> AsyncIterator[Client]:
    async with Engine(FAST) as engine:
        server = TestServer(make_app(engine, rest_timeout=2.0), host="127.0.0.1")
        async with TestClient(server) as http:
            yield http


async def test_rest_lists_transforms_and_predicates(client: Client) -> None:
    response = await client.get("/connector-plugins", params={"connectorsOnly": "false"})
    assert response.status == 200
    listed = {p["class"]: p["type"] for p in await response.json()}
    for cls in ("engine.transforms.filter.Filter", "engine.transforms.header_from.HeaderFrom.Key",
                "engine.transforms.set_schema_metadata.SetSchemaMetadata.Value",
                "engine.transforms.timestamp_router.TimestampRouter"):
        assert listed[cls] == "transformation"
    for cls in ("engine.transforms.predicates.HasHeaderKey", "engine.transforms.predicates.RecordIsTombstone",
                "engine.transforms.predicates.TopicNameMatches"):
        assert listed[cls] == "predicate"
    connectors_only = {p["type"] for p in await (await client.get("/connector-plugins")).json()}
    assert connectors_only <= {"source", "sink"}


async def test_rest_config_of_a_transformation(client: Client) -> None:
    response = await client.get("/connector-plugins/engine.transforms.regex_router.RegexRouter/config")
    assert response.status == 200
    assert [k["name"] for k in await response.json()] == ["regex", "replacement"]
