"""Every shipped scenario again with the config log on a Kafka topic, on Apache Kafka 4.1 (the scenarios
exercise the engine, not the protocol: the smaller broker matrix would only repeat them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.scenario.model import load_scenario
from engine.scenario.runner import LogKind, ScenarioRunner
from tests.integration.brokers import Broker
from tests.scenario.conftest import SCENARIO_FILES

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("path", SCENARIO_FILES, ids=lambda p: p.stem)
async def test_scenario_on_kafka(kafka: Broker, path: Path) -> None:
    result = await ScenarioRunner(load_scenario(path), LogKind.KAFKA, bootstrap_servers=kafka.bootstrap).run()
    assert result.passed, f"step {result.failed_step}: {result.failure}"
