"""KIP-458 client overrides through the REST API: the worker's override policy in validate and create,
with Connect's message; unknown or unsupported override keys refused by name; secrets never echoed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from engine import Engine
from engine.rest.app import make_app
from tests.rest.conftest import FAST, SINK, SOURCE

Client = TestClient[web.Request, web.Application]
SCRAM = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="s3cret";'


@pytest.fixture(params=["None", "Principal"])
async def policed(request: pytest.FixtureRequest) -> AsyncIterator[tuple[str, Client]]:
    async with Engine({**FAST, "connector.client.config.override.policy": request.param}) as engine:
        server = TestServer(make_app(engine, rest_timeout=2.0), host="127.0.0.1")
        async with TestClient(server) as http:
            yield request.param, http


def _errors(infos: dict[str, Any]) -> dict[str, list[str]]:
    return {c["value"]["name"]: c["value"]["errors"] for c in infos["configs"]
            if c["value"] is not None and c["value"]["errors"]}


async def test_the_policy_refuses_overrides_in_validate_and_create(policed: tuple[str, Client]) -> None:
    policy, client = policed
    config = {**SOURCE, "name": "src", "producer.override.linger.ms": "5", "producer.override.sasl.jaas.config": SCRAM,
              "producer.override.sasl.mechanism": "SCRAM-SHA-512"}
    response = await client.put("/connector-plugins/RecordingSourceConnector/config/validate", json=config)
    assert response.status == 200
    infos = await response.json()

    def refused(key: str) -> str:
        return f"The '{policy}' policy does not allow '{key}' to be overridden in the connector configuration."

    expected = {"producer.override.linger.ms": [refused("linger.ms")]}
    if policy == "None":
        expected |= {f"producer.override.{k}": [refused(k)] for k in ("sasl.jaas.config", "sasl.mechanism")}
    assert _errors(infos) == expected
    assert infos["error_count"] == len(expected)
    assert "s3cret" not in await response.text()  # a JAAS config is a password: "[hidden]", as in Connect
    listed = {c["value"]["name"]: c["value"]["value"] for c in infos["configs"] if c["value"] is not None}
    assert (listed["producer.override.sasl.jaas.config"], listed["producer.override.linger.ms"]) == ("[hidden]", "5")

    created = await client.post("/connectors", json={"name": "src", "config": config})
    assert created.status == 400
    assert refused("linger.ms") in (await created.json())["message"]
    assert await (await client.get("/connectors")).json() == []


async def test_unknown_and_unsupported_override_keys_are_refused_by_name(client: Client) -> None:
    config = {**SINK, "name": "snk", "consumer.override.max.poll.recordz": "5", "consumer.override.retries": "2",
              "consumer.override.max.poll.records": "many", "admin.override.request.timeout.ms": "5000"}
    infos = await (await client.put("/connector-plugins/RecordingSinkConnector/config/validate", json=config)).json()
    assert _errors(infos) == {
        "consumer.override.max.poll.recordz": [
            "Unknown configuration 'consumer.override.max.poll.recordz': not a Kafka consumer client setting"],
        "consumer.override.retries": [
            "Configuration 'consumer.override.retries' is not supported (aiokafka has no such setting)"],
        "consumer.override.max.poll.records": [
            "Invalid value many for configuration consumer.override.max.poll.records: Not a number of type INT"]}
    created = await client.post("/connectors", json={"name": "snk", "config": config})
    assert created.status == 400
    assert "contains the following 3 error(s)" in (await created.json())["message"]


async def test_a_malformed_jaas_override_is_a_validate_error(client: Client) -> None:
    config = {**SOURCE, "name": "src", "producer.override.security.protocol": "SASL_PLAINTEXT",
              "producer.override.sasl.mechanism": "SCRAM-SHA-256",
              "producer.override.sasl.jaas.config": 'org.apache.kafka.common.security.scram.ScramLoginModule required '
                                                    'username="alice" password="s3cret"'}
    infos = await (await client.put("/connector-plugins/RecordingSourceConnector/config/validate", json=config)).json()
    assert _errors(infos) == {"producer.override.sasl.jaas.config": [
        "Invalid value for configuration producer.override.sasl.jaas.config: JAAS config entry not terminated by "
        "semi-colon"]}
