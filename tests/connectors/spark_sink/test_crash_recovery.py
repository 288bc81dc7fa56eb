"""Kill a writing process (``os._exit`` via the ``test.crash.at`` hook) at each step of a commit, then
restart a fresh task on the same output with the same input: every row is there exactly once. On local
Spark, on Spark Connect (the children are clients only: every scenario) and on a standalone cluster
(each child its own application: the two scenarios that leave something to recover).

The first round is written here, on the shared session; the children start from it, two at a time,
and crash in their first commit (or first put).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from engine.api.records import TopicPartition
from engine.connectors.spark_sink.task import CRASH_EXIT_CODE, CRASH_POINTS
from engine.spark import JobOwner, SparkSupervisor, TaskSpark
from tests.spark_servers import child_env

from .crash_child import PER_ROUND, TPS, committed_offsets, finish
from .support import assign, committed_ids, data_dirs, listed_dirs, manifests, orders, started_task

pytestmark = pytest.mark.integration  # crash children, each with its own Spark JVM

ROUNDS = 3
TOTAL = ROUNDS * PER_ROUND
PARALLEL = 2  # children at once: more only fight over the CPUs
CHILD = Path(__file__).with_name("crash_child.py")
REPO = Path(__file__).resolve().parents[3]
# every point after one committed round, and a crash in the very first commit (no manifest yet)
SCENARIOS = [f"{point}:1" for point in CRASH_POINTS] + ["written:1:fresh"]
STANDALONE = ["written:1", "manifested_one:1"]  # orphaned data; one partition published, the other not
CASES = ([("local", s) for s in SCENARIOS] + [("connect", s) for s in SCENARIOS]
         + [("standalone", s) for s in STANDALONE])
ENV = {**child_env(), "SPARK_LOCAL_IP": "127.0.0.1", "PYTHONPATH": str(REPO), "PYSPARK_PYTHON": sys.executable,
       # a quick-start JVM: halves a child's start here, where the children share two cores
       "JAVA_TOOL_OPTIONS": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:CICompilerCount=1 -XX:-UsePerfData"}


async def first_round(root: Path) -> None:
    task, context = await started_task(root / "out", **{"partition.by": "region"})
    await assign(task, context, *TPS)
    await task.put([r for tp in TPS for r in orders(tp, 0, PER_ROUND)])
    committed = await task.pre_commit(dict.fromkeys(TPS, PER_ROUND))
    (root / "committed.json").write_text(json.dumps({str(tp.partition): o for tp, o in committed.items()}))


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory, spark: Any) -> Path:
    root = tmp_path_factory.mktemp("first_round")
    asyncio.run(first_round(root))
    return root


def run_children(commands: list[list[str]], timeout: float = 300) -> list[tuple[int, str]]:
    """Run these child commands, PARALLEL at a time; each one's exit code and the tail of its stderr."""
    results: dict[int, tuple[int, str]] = {}
    pending = list(enumerate(commands))
    running: list[tuple[int, subprocess.Popen[bytes]]] = []
    deadline = time.monotonic() + timeout
    while pending or running:
        while pending and len(running) < PARALLEL:
            index, command = pending.pop(0)
            running.append((index, subprocess.Popen([sys.executable, str(CHILD), *command], cwd=REPO, env=ENV,
                                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)))
        index, child = running.pop(0)
        try:
            _, err = child.communicate(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            child.kill()
            _, err = child.communicate()
        results[index] = child.returncode, err.decode(errors="replace")[-3000:]
    return [results[i] for i in range(len(commands))]


def crashed(mode: str, url: str, template: Path, factory: pytest.TempPathFactory, spark: Any,
            recover_in_process: TaskSpark | bool | None) -> dict[str, dict[str, Any]]:
    """Crash one child per scenario of ``mode``, record what each left, then recover each (in this process,
    or, with ``recover_in_process=False``, in one child on the same Spark); scenario -> facts."""
    specs = [spec for m, spec in CASES if m == mode]
    roots = []
    for spec in specs:
        root = factory.mktemp(f"{mode}-{spec.replace(':', '_')}")
        if not spec.endswith("fresh"):
            shutil.copytree(template, root, dirs_exist_ok=True)
        roots.append(root)
    ran = run_children([["crash", url, str(root / "out"), spec.split(":")[0] + ":1", str(root / "committed.json"),
                         str(ROUNDS)] for spec, root in zip(specs, roots, strict=True)])
    facts: dict[str, dict[str, Any]] = {}
    for spec, root, (code, err) in zip(specs, roots, ran, strict=True):
        out = root / "out"
        facts[spec] = {"root": root, "code": code, "err": err, "consumer": committed_offsets(root / "committed.json"),
                       "unlisted": data_dirs(out) - listed_dirs(out, spark), "before": committed_ids(out, spark),
                       "manifested": {tp: max((m.next_offset for m in manifests(out, spark, tp.partition)), default=None)
                                      for tp in TPS}}
    recoverable = [root for root, (code, _) in zip(roots, ran, strict=True) if code == CRASH_EXIT_CODE]
    if recover_in_process is False:
        ((code, err),) = run_children([["recover", url, str(TOTAL), *map(str, recoverable)]])
        assert code == 0, err
        for spec in specs:
            file = facts[spec]["root"] / "recovered.json"
            facts[spec]["recovered"] = json.loads(file.read_text()) if file.exists() else None
    else:
        runner = recover_in_process if isinstance(recover_in_process, TaskSpark) else None
        for spec in specs:
            if facts[spec]["root"] in recoverable:
                facts[spec]["recovered"] = asyncio.run(finish(facts[spec]["root"] / "out", facts[spec]["consumer"],
                                                              TOTAL, runner))
    return facts


@pytest.fixture(scope="module")
def crashed_local(template: Path, tmp_path_factory: pytest.TempPathFactory, spark: Any) -> dict[str, dict[str, Any]]:
    return crashed("local", "local", template, tmp_path_factory, spark, None)


@pytest.fixture(scope="module")
def crashed_connect(template: Path, tmp_path_factory: pytest.TempPathFactory, spark: Any, spark_connect_url: str,
                    connect_supervisor: SparkSupervisor) -> dict[str, dict[str, Any]]:
    runner = TaskSpark(connect_supervisor, JobOwner("recover", 0, 1))
    return crashed("connect", spark_connect_url, template, tmp_path_factory, spark, runner)


@pytest.fixture(scope="module")
def crashed_standalone(template: Path, tmp_path_factory: pytest.TempPathFactory, spark: Any,
                       spark_master_url: str) -> dict[str, dict[str, Any]]:
    return crashed("standalone", spark_master_url, template, tmp_path_factory, spark, False)


@pytest.mark.timeout(600)
@pytest.mark.parametrize(("mode", "spec"), CASES, ids=[f"{m}-{s}" for m, s in CASES])
def test_a_restart_after_a_crash_has_every_row_exactly_once(mode: str, spec: str, request: pytest.FixtureRequest,
                                                            spark: Any) -> None:
    facts = request.getfixturevalue(f"crashed_{mode}")[spec]
    assert facts["code"] == CRASH_EXIT_CODE, facts["err"]
    out = facts["root"] / "out"
    point = spec.split(":")[0]
    if not spec.endswith("fresh"):
        assert facts["consumer"] == dict.fromkeys(TPS, PER_ROUND)
    if point == "written":
        assert facts["unlisted"], "the crash should have left a written batch no manifest names"
    assert len(facts["before"]) == len(set(facts["before"])), "readers never see duplicates, even before recovery"

    recovered = facts["recovered"]
    rewinds = {TopicPartition("orders", int(p)): o for p, o in recovered["rewinds"].items()}
    assert rewinds == {tp: o for tp, o in facts["manifested"].items() if o is not None}
    for tp in TPS:
        assert facts["consumer"].get(tp, 0) <= rewinds.get(tp, 0), "the consumer never runs ahead of the manifests"
    assert recovered["returned"] == {str(tp.partition): TOTAL for tp in TPS}

    expected = sorted(f"{tp.partition}-{o}" for tp in TPS for o in range(TOTAL))
    assert committed_ids(out, spark) == expected
    assert data_dirs(out) == listed_dirs(out, spark), "every batch left unlisted by the crash is gone"
