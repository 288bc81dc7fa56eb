"""Validation of transforms.<a>.* / predicates.<p>.* keys: directly and over REST (validate endpoint)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from engine import Engine
from engine.rest.app import make_app
from engine.validation.framework import validate_config_infos
from tests.rest.conftest import FAST

Client = TestClient[web.Request, web.Application]
SOURCE = {"connector.class": "engine.testing.RecordingSourceConnector", "name": "c"}


def _by_name(infos: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {(c["definition"] or c["value"])["name"]: c for c in infos["configs"]}


def _errors(infos: dict[str, Any], name: str) -> list[str]:
    value = _by_name(infos)[name]["value"]
    return [] if value is None else list(value["errors"])


async def test_a_valid_chain_has_no_errors_and_adds_per_alias_keys() -> None:
    infos = await validate_config_infos({
        **SOURCE, "transforms": "route", "transforms.route.type": "RegexRouter", "transforms.route.regex": "(.*)",
        "transforms.route.replacement": "$1-x", "transforms.route.predicate": "p",
        "predicates": "p", "predicates.p.type": "TopicNameMatches", "predicates.p.pattern": "a.*"})
    assert infos["error_count"] == 0
    assert infos["groups"][-2:] == ["Transforms: route", "Predicates: p"]
    configs = _by_name(infos)
    type_key = configs["transforms.route.type"]
    assert type_key["definition"]["type"] == "CLASS"
    assert type_key["definition"]["required"] is True
    assert type_key["definition"]["display_name"] == "Transformation type for route"
    assert type_key["definition"]["group"] == "Transforms: route"
    assert type_key["value"]["value"] == "engine.transforms.regex_router.RegexRouter"
    assert "engine.transforms.filter.Filter" in type_key["value"]["recommended_values"]
    assert "engine.transforms.predicates.TopicNameMatches" in configs["predicates.p.type"]["value"]["recommended_values"]
    for key in ("transforms.route.regex", "transforms.route.replacement", "transforms.route.predicate",
                "transforms.route.negate", "predicates.p.pattern"):
        assert configs[key]["definition"] is not None, key
    assert configs["transforms.route.negate"]["definition"]["default_value"] == "false"
    assert "transforms.route.type" not in [c["definition"]["name"] for c in infos["configs"]
                                           if c["definition"] and c["definition"]["group"] == "Transforms"]


async def test_every_alias_error() -> None:
    infos = await validate_config_infos({
        **SOURCE, "transforms": "a,b,c,d,e", "transforms.a.type": "NoSuchTransform",
        "transforms.b.type": "Filter", "transforms.b.negate": "true",
        "transforms.c.type": "Filter", "transforms.c.predicate": "missing",
        "transforms.e.type": "RegexRouter", "transforms.e.regex": "(",
        "predicates": "p", "predicates.p.type": "TopicNameMatches"})
    assert _errors(infos, "transforms.a.type") == [
        "Invalid value NoSuchTransform for configuration transforms.a.type: Class NoSuchTransform could not be found."]
    assert _errors(infos, "transforms.b.type") == [
        "Config 'transforms.b.negate' was provided but there is no config 'transforms.b.predicate' defining a "
        "predicate to be negated."]
    assert _errors(infos, "transforms.c.predicate") == [
        "Config 'transforms.c.predicate' refers to the predicate 'missing', which is not listed in 'predicates'."]
    assert _errors(infos, "transforms.d.type") == [
        'Missing required configuration "transforms.d.type" which has no default value.']
    assert _errors(infos, "transforms.e.regex")[0].startswith("Invalid value ( for configuration regex: Invalid regex")
    assert _errors(infos, "transforms.e.replacement") == [
        'Missing required configuration "transforms.e.replacement" which has no default value.']
    assert _errors(infos, "predicates.p.pattern")[0] == (
        'Missing required configuration "predicates.p.pattern" which has no default value.')
    assert infos["error_count"] == sum(len(_errors(infos, n)) for n in _by_name(infos))


async def test_unknown_class_contributes_no_keys_and_wrong_kind_is_reported() -> None:
    infos = await validate_config_infos({
        **SOURCE, "transforms": "a,b", "transforms.a.type": "NoSuch", "transforms.a.extra": "1",
        "transforms.b.type": "engine.transforms.predicates.RecordIsTombstone"})
    configs = _by_name(infos)
    assert "transforms.a.extra" not in configs  # nothing defines it, as in Connect
    assert "transforms.a.negate" not in configs
    assert _errors(infos, "transforms.b.type") == [
        "Class class engine.transforms.predicates.RecordIsTombstone does not implement the Transformation interface"]


async def test_nested_and_kafka_names_resolve() -> None:
    infos = await validate_config_infos({
        **SOURCE, "transforms": "a,b", "transforms.a.type": "org.apache.kafka.connect.transforms.TimestampConverter$Value",
        "transforms.a.target.type": "unix",
        "transforms.b.type": "engine.transforms.header_from.HeaderFrom.Key", "transforms.b.fields": "x",
        "transforms.b.headers": "y", "transforms.b.operation": "copy"})
    assert infos["error_count"] == 0
    assert _by_name(infos)["transforms.a.type"]["value"]["value"] == (
        "engine.transforms.timestamp_converter.TimestampConverter.Value")


@pytest.fixture
async def client() -> AsyncIterator[Client]:
    async with Engine(FAST) as engine:
        server = TestServer(make_app(engine, rest_timeout=2.0), host="127.0.0.1")
        async with TestClient(server) as http:
            yield http


async def test_validate_endpoint_reports_transform_errors(client: Client) -> None:
    config = {**SOURCE, "transforms": "f", "transforms.f.type": "Filter", "transforms.f.negate": "true",
              "transforms.f.predicate": "p", "predicates": "p", "predicates.p.type": "HasHeaderKey"}
    response = await client.put("/connector-plugins/RecordingSourceConnector/config/validate", json=config)
    assert response.status == 200
    infos = await response.json()
    assert _errors(infos, "predicates.p.name") == [
        'Missing required configuration "predicates.p.name" which has no default value.']
    assert infos["error_count"] == 1
    assert "Predicates: p" in infos["groups"]

    config.pop("transforms.f.predicate")
    infos = await (await client.put("/connector-plugins/RecordingSourceConnector/config/validate", json=config)).json()
    assert _errors(infos, "transforms.f.type") == [
        "Config 'transforms.f.negate' was provided but there is no config 'transforms.f.predicate' defining a "
        "predicate to be negated."]
