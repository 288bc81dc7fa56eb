"""Run in a child process by the crash tests, on the Spark a mode names (``local``, ``sc://...`` or
``spark://...``).

``crash``: a task writes rounds of records, from where the manifests say, and "commits" what pre_commit
returns to a JSON file, as the consumer would, until ``test.crash.at`` kills it.
``recover``: for each output root, a fresh task opens the partitions, is fed from where it rewinds to,
and commits everything (``finish``); what it saw goes to ``<root>/recovered.json``.

Usage: crash_child.py crash <mode> <root> <crash spec> <committed.json> <rounds>
       crash_child.py recover <mode> <total> <root>...
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from engine.api.records import TopicPartition
from engine.connectors.spark_sink import SparkParquetSinkTask  # noqa: F401 - fails fast if unimportable
from engine.spark import JobOwner, SparkSettings, SparkSupervisor, TaskSpark

PER_ROUND = 20
TPS = [TopicPartition("orders", 0), TopicPartition("orders", 1)]


def supervisor_for(mode: str) -> SparkSupervisor | None:
    """None for ``local`` (the sink's fallback session); else a supervisor on that cluster or server."""
    if mode == "local":
        return None
    if mode.startswith("sc://"):
        return SparkSupervisor(SparkSettings(remote=mode))
    # one core per child: two children (each its own application) share the test worker's two
    return SparkSupervisor(
        SparkSettings(
            master=mode,
            conf={
                "spark.cores.max": "1",
                "spark.executor.memory": "512m",
                "spark.driver.host": "127.0.0.1",
                "spark.driver.bindAddress": "127.0.0.1",
                "spark.ui.enabled": "false",
                "spark.ui.showConsoleProgress": "false",
            },
        )
    )


def runner(supervisor: SparkSupervisor | None, name: str) -> TaskSpark | None:
    return None if supervisor is None else TaskSpark(supervisor, JobOwner(name, 0, 1))


def committed_offsets(file: Path) -> dict[TopicPartition, int]:
    raw = json.loads(file.read_text()) if file.exists() else {}
    return {TopicPartition("orders", int(p)): o for p, o in raw.items()}


async def crash(out: Path, crash_at: str, committed_file: Path, rounds: int, spark: Any) -> None:
    from tests.connectors.spark_sink.support import assign, orders, started_task

    task, context = await started_task(out, spark, **{"partition.by": "region", "test.crash.at": crash_at})
    rewinds = await assign(task, context, *TPS)
    for n in range(rewinds.get(TPS[0], 0) // PER_ROUND, rounds):
        batch = [r for tp in TPS for r in orders(tp, n * PER_ROUND, (n + 1) * PER_ROUND)]
        await task.put(batch)
        committed = await task.pre_commit(dict.fromkeys(TPS, (n + 1) * PER_ROUND))
        committed_file.write_text(json.dumps({str(tp.partition): o for tp, o in committed.items()}))


async def finish(out: Path, consumer: dict[TopicPartition, int], total: int, spark: Any) -> dict[str, Any]:
    """The consumer restarts from its committed offsets unless the task rewinds it; feed it to ``total``."""
    from tests.connectors.spark_sink.support import assign, orders, started_task

    task, context = await started_task(out, spark, **{"partition.by": "region"})
    rewinds = await assign(task, context, *TPS)
    start = {tp: rewinds.get(tp, consumer.get(tp, 0)) for tp in TPS}
    await task.put([r for tp in TPS for r in orders(tp, start[tp], total)])
    returned = await task.pre_commit(dict.fromkeys(TPS, total))
    return {
        "rewinds": {str(tp.partition): o for tp, o in rewinds.items()},
        "returned": {str(tp.partition): o for tp, o in returned.items()},
    }


async def main(argv: list[str]) -> None:
    command, mode = argv[0], argv[1]
    supervisor = supervisor_for(mode)
    try:
        if command == "crash":
            await crash(Path(argv[2]), argv[3], Path(argv[4]), int(argv[5]), runner(supervisor, "crash"))
        else:
            total = int(argv[2])
            for root in map(Path, argv[3:]):
                seen = await finish(
                    root / "out",
                    committed_offsets(root / "committed.json"),
                    total,
                    runner(supervisor, "recover"),
                )
                (root / "recovered.json").write_text(json.dumps(seen))
    finally:
        if supervisor is not None:
            await supervisor.shutdown()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
