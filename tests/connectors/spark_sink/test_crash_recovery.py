"""Kill a writing process (``os._exit`` via the ``test.crash.at`` hook) at each step of a commit, then
restart a fresh task on the same output with the same input: every row is there exactly once.

The first round is written here, on the shared session; the children start from it, in parallel
(each starts its own JVM, with a quick-start JIT), and crash in their first commit (or first put).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from engine.api.records import TopicPartition
from engine.connectors.spark_sink import commit_log
from engine.connectors.spark_sink.task import CRASH_EXIT_CODE, CRASH_POINTS

from .crash_child import PER_ROUND
from .support import assign, committed_ids, orders, started_task

ROUNDS = 3
TOTAL = ROUNDS * PER_ROUND
TPS = [TopicPartition("orders", 0), TopicPartition("orders", 1)]
PARALLEL = 2  # children at once: more only fight over the CPUs
CHILD = Path(__file__).with_name("crash_child.py")
REPO = Path(__file__).resolve().parents[3]
# every point after one committed round, and a crash in the very first commit (no manifest yet)
SCENARIOS = [f"{point}:1" for point in CRASH_POINTS] + ["staged:1:fresh"]


async def first_round(root: Path) -> None:
    task, context = await started_task(root / "out", **{"partition.by": "region"})
    await assign(task, context, *TPS)
    await task.put([r for tp in TPS for r in orders(tp, 0, PER_ROUND)])
    committed = await task.pre_commit(dict.fromkeys(TPS, PER_ROUND))
    (root / "committed.json").write_text(json.dumps({str(tp.partition): o for tp, o in committed.items()}))


@pytest.fixture(scope="module")
def crashed(tmp_path_factory: pytest.TempPathFactory, spark: Any) -> dict[str, tuple[Path, int, str]]:
    """Start one child per scenario at once; map scenario -> (output root, exit code, stderr)."""
    template = tmp_path_factory.mktemp("first_round")
    asyncio.run(first_round(template))
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYTHONPATH": str(REPO),
           # a quick-start JVM: halves a child's start here, where the children share two cores
           "JAVA_TOOL_OPTIONS": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:CICompilerCount=1 -XX:-UsePerfData"}
    pending: list[tuple[str, Path, list[str]]] = []
    for spec in SCENARIOS:
        root = tmp_path_factory.mktemp(spec.replace(":", "_"))
        crash_at, _, fresh = spec.partition(":1")
        if not fresh:
            shutil.copytree(template, root, dirs_exist_ok=True)
        pending.append((spec, root, [sys.executable, str(CHILD), str(root / "out"), f"{crash_at}:1",
                                     str(root / "committed.json"), str(ROUNDS)]))
    results: dict[str, tuple[Path, int, str]] = {}
    running: list[tuple[str, Path, subprocess.Popen[bytes]]] = []
    deadline = time.monotonic() + 240
    while pending or running:
        while pending and len(running) < PARALLEL:
            spec, root, cmd = pending.pop(0)
            running.append((spec, root, subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL,
                                                         stderr=subprocess.PIPE)))
        spec, root, child = running.pop(0)
        _, err = child.communicate(timeout=max(1.0, deadline - time.monotonic()))
        results[spec] = root, child.returncode, err.decode(errors="replace")[-3000:]
    return results


def committed_offsets(root: Path) -> dict[TopicPartition, int]:
    file = root / "committed.json"
    raw = json.loads(file.read_text()) if file.exists() else {}
    return {TopicPartition("orders", int(p)): o for p, o in raw.items()}


@pytest.mark.timeout(300)
@pytest.mark.parametrize("spec", SCENARIOS)
async def test_a_restart_after_a_crash_has_every_row_exactly_once(
        spec: str, crashed: dict[str, tuple[Path, int, str]], spark: Any) -> None:
    root, code, err = crashed[spec]
    assert code == CRASH_EXIT_CODE, err
    out = root / "out"
    point = spec.split(":")[0]
    listed = set(commit_log.committed_files(out))
    on_disk = {str(p) for p in commit_log.data_files(out)}
    if not spec.endswith("fresh"):
        assert committed_offsets(root) == dict.fromkeys(TPS, PER_ROUND)
    if point in ("moved_one", "moved"):
        assert on_disk - listed, "the crash should have left published files no manifest lists"
    before = committed_ids(out, spark)
    assert len(before) == len(set(before)), "readers never see duplicates, even before recovery"

    # the consumer restarts from its committed offsets, unless the task rewinds it
    consumer = committed_offsets(root)
    task, context = await started_task(out, **{"partition.by": "region"})
    rewinds = await assign(task, context, *TPS)
    manifested = {tp: commit_log.next_offset(out, tp.topic, tp.partition) for tp in TPS}
    assert rewinds == {tp: o for tp, o in manifested.items() if o is not None}
    for tp in TPS:
        assert consumer.get(tp, 0) <= rewinds.get(tp, 0), "the consumer never runs ahead of the manifests"
    start = {tp: rewinds.get(tp, consumer.get(tp, 0)) for tp in TPS}
    await task.put([r for tp in TPS for r in orders(tp, start[tp], TOTAL)])
    assert await task.pre_commit(dict.fromkeys(TPS, TOTAL)) == dict.fromkeys(TPS, TOTAL)

    expected = sorted(f"{tp.partition}-{o}" for tp in TPS for o in range(TOTAL))
    assert committed_ids(out, spark) == expected
    assert {str(p) for p in commit_log.data_files(out)} == set(commit_log.committed_files(out))
    assert not any((out / "_staging").rglob("*.parquet"))
