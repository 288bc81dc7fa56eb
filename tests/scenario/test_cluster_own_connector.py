"""The guide's example (docs/connectors/cluster-scenarios.md): your own connector, instrumented,
through a cluster scenario in pytest; the calls are recorded and the invariants hold for it."""

from __future__ import annotations

from engine.scenario.cluster_runner import ClusterScenarioRunner
from engine.scenario.model import parse_scenario
from engine.testing import CALLS

SCENARIO = """
name: the ledger survives losing a worker, and its deleted() runs once
workers: 3
worker:
  scheduled.rebalance.max.delay.ms: "5000"
steps:
  - create:
      name: ledger
      config: {connector.class: tests.scenario.own_connector.RecordedLedgerConnector, accounts: "a,b,c", tasks.max: 3}
  - expect: {connector: ledger, state: RUNNING, tasks: [RUNNING, RUNNING, RUNNING]}
  - expect: {assigned: {w1: [ledger, ledger-0], w2: [ledger-1], w3: [ledger-2]}}
  - kill_worker: w1
  - advance: 16s
  - expect: {assigned: {w2: [ledger, ledger-0, ledger-1], w3: [ledger-2]}}
  - delete: ledger
  - expect:
      connector: ledger
      absent: true
      calls: [initialize, start, task_configs, initialize, start, task_configs, stop, deleted]
      task_calls: {0: [initialize, start, initialize, start, "stop(connector_deleted=true)"]}
"""


async def test_my_connector_in_a_cluster() -> None:
    scenario = parse_scenario(SCENARIO, "ledger.yaml")
    for seed in range(3):  # a few of the interleavings the scenario leaves open
        result = await ClusterScenarioRunner(scenario, seed).run()
        assert result.passed, f"seed {seed}, step {result.failed_step}: {result.failure}"
    workers = {call.worker for call in CALLS.of("ledger", "connector")}
    assert workers == {"w1:8083", "w2:8083"}  # who ran the connector's callbacks: its first and second owner
