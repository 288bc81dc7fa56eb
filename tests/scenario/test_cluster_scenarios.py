"""Cluster scenarios on the deterministic in-process cluster: the shipped files pass, a seed
replays byte for byte, the invariants hold on every run, and ``--explore`` finds a broken rule."""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from pathlib import Path

import pytest

from engine.distributed import cluster as cluster_module
from engine.distributed.planner import ClusterWork, plan
from engine.distributed.protocol import Assignment, JoinMetadata, Work
from engine.scenario.cluster_runner import ClusterScenarioRunner
from engine.scenario.model import ScenarioError, load_scenario, parse_scenario
from engine.scenario.replay import explore, print_json, print_result
from engine.scenario.runner import ScenarioResult
from tests.scenario.conftest import SCENARIO_DIR

CLUSTER_DIR = SCENARIO_DIR / "cluster"
CLUSTER_FILES = sorted(CLUSTER_DIR.glob("*.yaml"))
JOINING = CLUSTER_DIR / "01-revocation-before-reassignment.yaml"


def rendered(result: ScenarioResult) -> str:
    text, document = io.StringIO(), io.StringIO()
    print_result(result, text)
    print_json([result], document)
    return text.getvalue() + document.getvalue()


def test_there_are_cluster_scenarios() -> None:
    assert len(CLUSTER_FILES) >= 7


@pytest.mark.parametrize("path", CLUSTER_FILES, ids=lambda p: p.stem)
async def test_cluster_scenario(path: Path) -> None:
    result = await ClusterScenarioRunner(load_scenario(path)).run()
    assert result.passed, f"step {result.failed_step}: {result.failure}\n{rendered(result)}"
    assert result.trace, "a scenario that makes no transition tests nothing"
    assert {line.worker for line in result.trace} <= {f"w{n}" for n in range(1, 10)}
    # the promises hold in other interleavings too, not just the file's
    other, _ = await explore(load_scenario(path), 5, first_seed=100)
    assert other.passed, f"seed {other.seed}, step {other.failed_step}: {other.failure}"


async def test_a_seed_replays_the_same_trace_byte_for_byte() -> None:
    scenario = load_scenario(CLUSTER_DIR / "02-killed-worker-held-for-the-delay.yaml")
    first = await ClusterScenarioRunner(scenario, 7).run()
    second = await ClusterScenarioRunner(scenario, 7).run()
    assert first.passed, first.failure
    assert rendered(first) == rendered(second)
    assert first.rounds == second.rounds
    assert len(first.rounds) >= 4  # a join, the kill noticed, the held work handed on


async def test_seeds_choose_among_the_interleavings_the_scenario_leaves_open() -> None:
    scenario = load_scenario(JOINING)
    orders = {tuple((await ClusterScenarioRunner(scenario, seed).run()).rounds) for seed in range(6)}
    assert len(orders) > 1  # leaders and the order members apply a round differ between seeds


def _hand_over_at_once(
    members: Mapping[str, JoinMetadata], work: ClusterWork, **kwargs: int | str
) -> dict[str, Assignment]:
    """A broken leader: what the real plan revokes goes straight to its new owner, in the same round
    (eager reassignment without the stop-first phase of incremental cooperative rebalancing)."""
    plans = plan(members, work, **kwargs)  # type: ignore[arg-type]
    for member, assignment in list(plans.items()):
        if not assignment.revoked:
            continue
        others = [m for m in sorted(plans) if m != member]
        target = min(others, key=lambda m: plans[m].assigned.size)
        moved = plans[target]
        plans[target] = Assignment(
            moved.leader,
            moved.leader_url,
            moved.config_offset,
            moved.assigned | assignment.revoked,
            Work(),
            moved.urls,
            moved.rejoin_after_ms,
            moved.view,
        )
        plans[member] = Assignment(
            assignment.leader,
            assignment.leader_url,
            assignment.config_offset,
            assignment.assigned,
            Work(),
            assignment.urls,
            assignment.rejoin_after_ms,
            assignment.view,
        )
    return plans


async def test_explore_finds_the_seed_where_a_task_starts_before_its_old_owner_stopped_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    scenario = load_scenario(JOINING)
    monkeypatch.setattr(cluster_module, "plan", _hand_over_at_once)
    result, tried = await explore(scenario, 20)
    assert not result.passed
    assert result.failure is not None
    assert result.failure.startswith("invariant broken: task src-2 started on w3")
    assert "while its instance on w1" in result.failure
    assert result.failed_step is not None
    assert result.failed_step.verb == "start_worker"
    assert result.seed == tried - 1
    # the failing seed replays the failure exactly; where the old owner applied first, the run passes
    again = await ClusterScenarioRunner(scenario, result.seed).run()
    assert rendered(again) == rendered(result)
    if tried > 1:
        assert (await ClusterScenarioRunner(scenario, 0).run()).passed
    text = rendered(result)
    assert f"(seed {result.seed}): {JOINING} step 4 (start_worker): invariant broken" in text
    assert f"replay it: connect-engine replay --seed {result.seed} {JOINING}" in text
    assert json.loads(text[text.index("{") :])["results"][0]["seed"] == result.seed


async def test_with_the_real_planner_no_seed_breaks_the_rule() -> None:
    result, tried = await explore(load_scenario(JOINING), 8)
    assert result.passed
    assert tried == 8


def test_cluster_steps_need_workers() -> None:
    with pytest.raises(
        ScenarioError, match=r"step 1 \(kill_worker\): unknown verb \(cluster steps need 'workers: N'\)"
    ):
        parse_scenario("steps:\n  - kill_worker: w1\n", "case.yaml")
    with pytest.raises(ScenarioError, match="key 'seed': a seed orders a cluster's interleavings"):
        parse_scenario("seed: 3\nsteps:\n  - advance: 1s\n", "case.yaml")
    with pytest.raises(ScenarioError, match="key 'workers': expected a number of workers"):
        parse_scenario("workers: 0\nsteps:\n  - advance: 1s\n", "case.yaml")
    with pytest.raises(ScenarioError, match=r"step 1 \(crash\): unknown verb"):
        parse_scenario("workers: 2\nsteps:\n  - crash:\n", "case.yaml")
    with pytest.raises(ScenarioError, match="key 'assigned': expected a mapping of worker"):
        parse_scenario("workers: 2\nsteps:\n  - expect: {assigned: [w1]}\n", "case.yaml")


async def test_a_step_on_a_worker_that_is_not_running_is_an_error_the_file_can_expect() -> None:
    scenario = parse_scenario(
        """
workers: 2
steps:
  - kill_worker: w1
  - heal: w1
  - expect: {error: EngineNotRunning, message: "Worker w1 is not running"}
  - start_worker: w2
  - expect: {error: ValueError, message: "already running"}
""",
        "case.yaml",
    )
    result = await ClusterScenarioRunner(scenario).run()
    assert result.passed, result.failure


async def test_a_worker_cut_off_past_the_delay_stops_its_work_before_it_runs_elsewhere() -> None:
    scenario = parse_scenario(
        """
workers: 2
worker:
  scheduled.rebalance.max.delay.ms: "5000"
steps:
  - create: {name: src, config: {connector.class: engine.testing.RecordingSourceConnector, tasks.max: 2}}
  - expect: {assigned: {w1: [src, src-0], w2: [src-1]}}
  - partition: w2
  - advance: 20s
  - expect: {assigned: {w1: [src, src-0, src-1], w2: []}}
  - heal: w2
  - expect: {assigned: {w1: [src, src-0], w2: [src-1]}}
""",
        "zombie.yaml",
    )
    result = await ClusterScenarioRunner(scenario).run()
    assert result.passed, result.failure
