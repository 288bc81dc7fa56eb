"""The restart.* keys (the auto-restart policy): validated at create and in config/validate, parsed once."""

from __future__ import annotations

import pytest

from engine import Engine
from engine.errors import ConfigError
from engine.herder.restart_policy import RestartPolicy
from engine.validation.framework import validate_config_infos

SOURCE = {"connector.class": "engine.testing.RecordingSourceConnector", "name": "c"}


def _errors(infos: dict[str, object], name: str) -> list[str]:
    for config in infos["configs"]:  # type: ignore[attr-defined]
        if (config["definition"] or config["value"])["name"] == name:
            return list(config["value"]["errors"]) if config["value"] else []
    raise AssertionError(name)


async def test_the_restart_keys_are_a_group_with_connects_defaults() -> None:
    infos = await validate_config_infos(SOURCE)
    assert infos["error_count"] == 0
    assert "Restart Policy" in infos["groups"]
    defaults = {
        c["definition"]["name"]: c["definition"]["default_value"]
        for c in infos["configs"]
        if c["definition"] and c["definition"]["group"] == "Restart Policy"
    }
    assert defaults == {
        "restart.policy": "never",
        "restart.backoff.initial.ms": "1000",
        "restart.backoff.max.ms": "300000",
        "restart.backoff.multiplier": "2.0",
        "restart.max.attempts": "10",
        "restart.reset.after.ms": "600000",
    }


async def test_bad_values_are_reported_per_key() -> None:
    infos = await validate_config_infos(
        {
            **SOURCE,
            "restart.policy": "always",
            "restart.max.attempts": "-2",
            "restart.backoff.multiplier": "0.5",
            "restart.backoff.initial.ms": "x",
        }
    )
    assert _errors(infos, "restart.policy") == [
        "Invalid value always for configuration restart.policy: String must be one of (case insensitive): "
        "NEVER, ON-FAILURE"
    ]
    assert _errors(infos, "restart.max.attempts") == [
        "Invalid value -2 for configuration restart.max.attempts: Value must be -1 (unlimited) or at least 0"
    ]
    assert _errors(infos, "restart.backoff.multiplier") == [
        "Invalid value 0.5 for configuration restart.backoff.multiplier: Value must be at least 1"
    ]
    assert _errors(infos, "restart.backoff.initial.ms")[0].startswith(
        "Invalid value x for configuration restart.backoff.initial.ms"
    )


async def test_max_backoff_below_the_initial_one_is_refused() -> None:
    infos = await validate_config_infos(
        {**SOURCE, "restart.backoff.initial.ms": "5000", "restart.backoff.max.ms": "100"}
    )
    assert _errors(infos, "restart.backoff.max.ms") == [
        "Invalid value 100 for configuration restart.backoff.max.ms: Value must be at least "
        "restart.backoff.initial.ms (5000)"
    ]


async def test_create_refuses_an_invalid_policy_and_writes_nothing() -> None:
    async with Engine() as engine:
        with pytest.raises(ConfigError) as raised:
            await engine.create_connector("c", {**SOURCE, "restart.policy": "sometimes"})
        assert "restart.policy" in raised.value.errors
        assert await engine.connectors() == []
        await engine.create_connector(
            "c", {**SOURCE, "restart.policy": "ON-FAILURE", "restart.max.attempts": "-1"}
        )
        assert await engine.connectors() == ["c"]


def test_policy_parsing_and_backoff() -> None:
    assert RestartPolicy.from_config({}) == RestartPolicy(on_failure=False)
    assert not RestartPolicy.from_config({"restart.policy": "bogus"}).on_failure  # past validation: never
    policy = RestartPolicy.from_config(
        {
            "restart.policy": "on-failure",
            "restart.backoff.initial.ms": "1000",
            "restart.backoff.max.ms": "5000",
            "restart.max.attempts": "3",
        }
    )
    assert policy.on_failure
    assert policy.max_attempts == 3
    middle = lambda: 0.5  # noqa: E731 - no jitter
    assert [policy.backoff(n, middle) for n in range(5)] == [1.0, 2.0, 4.0, 5.0, 5.0]
    assert policy.backoff(0, lambda: 0.0) == pytest.approx(0.8)
    assert policy.backoff(0, lambda: 1.0) == pytest.approx(1.2)
    assert policy.backoff(10_000, middle) == 5.0  # no overflow
    assert not policy.exhausted(2)
    assert policy.exhausted(3)
    assert not RestartPolicy(on_failure=True, max_attempts=-1).exhausted(10**6)
