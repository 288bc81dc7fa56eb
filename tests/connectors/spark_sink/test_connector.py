"""The connector: task ids for staging folders, and ``deleted`` (idempotent) cleaning up."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine.api.context import SinkConnectorContext
from engine.api.records import TopicPartition
from engine.connectors.spark_sink import SparkParquetSinkConnector

from .support import assign, committed_ids, data_dirs, orders, props, started_task

TP0 = TopicPartition("orders", 0)


def connector(config: dict[str, str]) -> SparkParquetSinkConnector:
    c = SparkParquetSinkConnector()
    c.initialize(
        SinkConnectorContext(config, request_reconfiguration=lambda: None, raise_error=lambda exc: None)
    )
    return c


async def written(root: Path) -> None:
    task, context = await started_task(root, **{"partition.by": "region"})
    await assign(task, context, TP0)
    await task.put(orders(TP0, 0, 6))
    await task.pre_commit({TP0: 6})
    for leftover in (
        root / "_batches" / "__connect_batch=pq-3+dead" / "__connect_tp=orders+0" / "x.parquet",  # a crash's
        root / "_batches" / "__connect_batch=pq-eu-0+live" / "__connect_tp=orders+0" / "x.parquet",
    ):  # "pq-eu"'s
        leftover.parent.mkdir(parents=True)
        leftover.write_bytes(b"half")


def test_each_task_gets_its_own_id() -> None:
    c = connector({})
    c.start(props(Path("/tmp/out")))
    assert [t["task.id"] for t in c.task_configs(3)] == ["0", "1", "2"]


@pytest.mark.parametrize("delete_output", [False, True])
async def test_deleted_removes_unlisted_batches_and_the_output_only_when_asked_and_can_run_twice(
    tmp_path: Path, spark: Any, delete_output: bool
) -> None:
    (tmp_path / "README").write_text("not ours")
    await written(tmp_path)
    c = connector(props(tmp_path, **{"delete.output.on.delete": str(delete_output).lower()}))
    await c.deleted()
    await c.deleted()
    assert not (tmp_path / "_batches" / "__connect_batch=pq-3+dead" / "__connect_tp=orders+0").exists()
    assert (tmp_path / "README").exists()
    assert (tmp_path / "_manifests").exists() is not delete_output
    if delete_output:
        assert sorted(p.name for p in tmp_path.iterdir()) == ["README"]
    else:
        assert committed_ids(tmp_path, spark) == [f"0-{o}" for o in range(6)]
        assert (
            tmp_path / "_batches" / "__connect_batch=pq-eu-0+live"
        ).exists()  # another connector's batch in progress
        assert len(data_dirs(tmp_path)) == 2
