"""Each shipped cluster scenario passes on the deterministic in-process cluster and, where it needs
no in-process fault, on real worker processes and a broker: the model and the real cluster agree.

On the session's Apache Kafka 4.1 (tests/distributed/conftest.py), which expires a SIGKILLed member
after its session timeout (6 s, the broker's minimum) and rebalances a joining one at once; the
scenarios' timings tolerate it: a killed worker's work is held for the delay after its session ends.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.scenario.cluster_runner import ClusterScenarioRunner
from engine.scenario.model import load_scenario
from engine.scenario.process_runner import ProcessScenarioRunner, applicable
from tests.integration.brokers import Broker
from tests.scenario.conftest import SCENARIO_DIR

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

CLUSTER_FILES = sorted((SCENARIO_DIR / "cluster").glob("*.yaml"))
ON_PROCESSES = [p for p in CLUSTER_FILES if applicable(load_scenario(p)) is None]


def test_most_shipped_cluster_scenarios_run_on_processes() -> None:
    assert len(ON_PROCESSES) >= 5
    for path in set(CLUSTER_FILES) - set(ON_PROCESSES):
        assert "in-process model" in str(applicable(load_scenario(path)))


@pytest.mark.parametrize("path", ON_PROCESSES, ids=lambda p: p.stem)
async def test_the_model_and_the_processes_agree(path: Path, kafka: Broker, tmp_path: Path) -> None:
    scenario = load_scenario(path)
    model = await ClusterScenarioRunner(scenario).run()
    assert model.passed, f"model, step {model.failed_step}: {model.failure}"
    real = await ProcessScenarioRunner(scenario, kafka.bootstrap, directory=tmp_path).run()
    assert real.passed, f"processes, step {real.failed_step}: {real.failure}"
