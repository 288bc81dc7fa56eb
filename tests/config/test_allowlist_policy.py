"""KIP-1188 (Kafka 4.2): ``connector.client.config.override.policy=Allowlist`` lets connectors
override exactly the client keys in ``connector.client.config.override.allowlist``."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer
from structlog.testing import capture_logs

from engine import Engine
from engine.config.kafka_clients import OverridePolicy
from engine.config.worker import WorkerConfig
from engine.config.worker_keys import by_name
from engine.errors import ConfigError
from engine.rest.app import make_app
from tests.rest.conftest import FAST, SOURCE

ALLOWLIST = {
    "connector.client.config.override.policy": "Allowlist",
    "connector.client.config.override.allowlist": "linger.ms, compression.type",
}


def refused(key: str) -> str:
    return f"The 'Allowlist' policy does not allow '{key}' to be overridden in the connector configuration."


@pytest.mark.parametrize(
    "setting",
    [
        "Allowlist",
        "AllowlistConnectorClientConfigOverridePolicy",
        "org.apache.kafka.connect.connector.policy.AllowlistConnectorClientConfigOverridePolicy",
    ],
)
def test_the_policy_by_alias_or_class_name_reads_the_allowlist(setting: str) -> None:
    policy = OverridePolicy.parse({**ALLOWLIST, "connector.client.config.override.policy": setting})
    assert (policy.name, policy.allowlist) == ("Allowlist", frozenset({"linger.ms", "compression.type"}))


def test_an_empty_or_missing_allowlist_allows_nothing() -> None:
    for props in (
        {"connector.client.config.override.policy": "Allowlist"},
        {**ALLOWLIST, "connector.client.config.override.allowlist": ""},
    ):
        assert OverridePolicy.parse(props).refusal("linger.ms") == refused("linger.ms")


def test_a_listed_override_reaches_the_client_and_another_is_refused() -> None:
    clients = WorkerConfig.parse(ALLOWLIST).kafka
    assert clients.for_connector("producer", {"producer.override.linger.ms": "7"}) == {"linger_ms": 7}
    assert clients.override_errors(
        {"producer.override.linger.ms": "7", "producer.override.acks": "1"}, "producer"
    ) == {"producer.override.acks": [refused("acks")]}
    with pytest.raises(
        ConfigError, match=r"Client Config Overrides not allowed \['producer.override.acks'\]"
    ):
        clients.for_connector("producer", {"producer.override.acks": "1"})


def test_an_unknown_policy_names_the_four() -> None:
    with pytest.raises(ConfigError, match="choose All, None, Principal or Allowlist"):
        WorkerConfig.parse({"connector.client.config.override.policy": "Allowed"})


def test_the_worker_key_is_documented() -> None:
    assert "connector.client.config.override.allowlist" in by_name()


def _errors(infos: dict[str, Any]) -> dict[str, list[str]]:
    return {
        c["value"]["name"]: c["value"]["errors"]
        for c in infos["configs"]
        if c["value"] is not None and c["value"]["errors"]
    }


async def test_over_rest_the_listed_override_passes_and_another_is_refused_with_connects_message() -> None:
    async with Engine({**FAST, **ALLOWLIST}) as engine:
        server = TestServer(make_app(engine, rest_timeout=2.0), host="127.0.0.1")
        async with TestClient(server) as client:
            allowed = {**SOURCE, "name": "ok", "producer.override.linger.ms": "5"}
            infos = await (
                await client.put("/connector-plugins/RecordingSourceConnector/config/validate", json=allowed)
            ).json()
            assert infos["error_count"] == 0
            created = await client.post("/connectors", json={"name": "ok", "config": allowed})
            assert created.status == 201
            assert engine.worker.kafka.for_connector("producer", allowed) == {"linger_ms": 5}

            other = {**SOURCE, "name": "no", "producer.override.acks": "1"}
            infos = await (
                await client.put("/connector-plugins/RecordingSourceConnector/config/validate", json=other)
            ).json()
            assert _errors(infos) == {"producer.override.acks": [refused("acks")]}
            created = await client.post("/connectors", json={"name": "no", "config": other})
            assert created.status == 400
            assert refused("acks") in (await created.json())["message"]
            assert await (await client.get("/connectors")).json() == ["ok"]


def test_principal_is_deprecated_with_connects_warning_kafka_4_2() -> None:
    with capture_logs() as logs:
        policy = OverridePolicy.parse({"connector.client.config.override.policy": "Principal"})
    assert policy.allows("sasl.mechanism")
    assert [entry["reason"] for entry in logs if entry["event"] == "kafka_clients.policy_deprecated"] == [
        "The Principal ConnectorClientConfigOverridePolicy is deprecated, use the Allowlist policy instead. To "
        "replicate the Principal policy behavior, set the connector.client.config.override.allowlist "
        'configuration to "security.protocol,sasl.mechanism,sasl.jaas.config"'
    ]


def test_an_empty_allowlist_entry_is_refused_as_kip_1161_does() -> None:
    with pytest.raises(ConfigError) as refused_list:
        OverridePolicy.parse({**ALLOWLIST, "connector.client.config.override.allowlist": "linger.ms,,acks"})
    assert str(refused_list.value) == (
        "Configuration 'connector.client.config.override.allowlist' values must not be empty."
    )
