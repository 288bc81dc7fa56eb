"""Run in a child process by the crash tests: a task (on the fallback local Spark session) writes
rounds of records, from where the manifests say, and "commits" what pre_commit returns to a JSON
file, as the consumer would, until ``test.crash.at`` kills it.
Usage: crash_child.py <root> <crash spec> <committed.json> <rounds>."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from engine.api.records import TopicPartition
from engine.connectors.spark_sink import SparkParquetSinkTask  # noqa: F401 - fails fast if unimportable

PER_ROUND = 20


async def main(root: Path, crash_at: str, committed_file: Path, rounds: int) -> None:
    from tests.connectors.spark_sink.support import assign, orders, started_task

    tps = [TopicPartition("orders", 0), TopicPartition("orders", 1)]
    task, context = await started_task(root, **{"partition.by": "region", "test.crash.at": crash_at})
    rewinds = await assign(task, context, *tps)
    for n in range(rewinds.get(tps[0], 0) // PER_ROUND, rounds):
        batch = [r for tp in tps for r in orders(tp, n * PER_ROUND, (n + 1) * PER_ROUND)]
        await task.put(batch)
        committed = await task.pre_commit(dict.fromkeys(tps, (n + 1) * PER_ROUND))
        committed_file.write_text(json.dumps({str(tp.partition): o for tp, o in committed.items()}))


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3]), int(sys.argv[4])))
