"""The task driven directly on real Spark: put only buffers, pre_commit publishes and returns only what
manifests cover, open rewinds from the manifests and clears crash leftovers."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from engine.api.records import TopicPartition
from engine.data.builder import SchemaBuilder
from engine.data.values import Struct

from .support import (
    assign,
    committed_ids,
    committed_rows,
    data_dirs,
    listed_dirs,
    manifests,
    orders,
    record,
    started_task,
)

TP0, TP1 = TopicPartition("orders", 0), TopicPartition("orders", 1)


def ids(tp: TopicPartition, start: int, stop: int) -> list[str]:
    return [f"{tp.partition}-{o}" for o in range(start, stop)]


async def test_put_only_buffers_and_pre_commit_publishes_with_one_manifest_per_partition(
    tmp_path: Path, spark: Any
) -> None:
    task, context = await started_task(tmp_path)
    assert await assign(task, context, TP0, TP1) == {}  # no manifest yet: nothing to rewind to
    await task.put(orders(TP0, 0, 10) + orders(TP1, 0, 5))
    assert not data_dirs(tmp_path)
    assert committed_ids(tmp_path, spark) == []

    assert await task.pre_commit({TP0: 10, TP1: 5}) == {TP0: 10, TP1: 5}
    assert committed_ids(tmp_path, spark) == sorted(ids(TP0, 0, 10) + ids(TP1, 0, 5))
    manifest = json.loads((tmp_path / "_manifests" / "orders-0" / f"{10:020d}.json").read_text())
    assert (manifest["first_offset"], manifest["next_offset"], manifest["rows"]) == (0, 10, 10)
    (path,) = manifest["paths"]  # the batch's own directory for the partition: written in place, never moved
    assert path.startswith("_batches/__connect_batch=pq-0+")
    assert path.endswith("/__connect_tp=orders+0")
    assert (
        data_dirs(tmp_path) == listed_dirs(tmp_path, spark) == {tmp_path / path, tmp_path / (path[:-1] + "1")}
    )

    await task.put(orders(TP0, 10, 12))  # one partition: written straight into its directory
    assert await task.pre_commit({TP0: 12, TP1: 5}) == {TP0: 12, TP1: 5}
    assert [m.next_offset for m in manifests(tmp_path, spark, 0)] == [10, 12]
    assert committed_ids(tmp_path, spark) == sorted(ids(TP0, 0, 12) + ids(TP1, 0, 5))


async def test_pre_commit_returns_nothing_for_partitions_with_nothing_durable(
    tmp_path: Path, spark: Any
) -> None:
    task, context = await started_task(tmp_path)
    await assign(task, context, TP0, TP1)
    assert await task.pre_commit({TP0: 0, TP1: 0}) == {}
    await task.put(orders(TP0, 0, 3))
    assert await task.pre_commit({TP0: 3, TP1: 0}) == {TP0: 3}
    assert not (tmp_path / "_manifests" / "orders-1").exists()


async def test_open_rewinds_to_just_after_the_manifests_and_redelivery_is_not_duplicated(
    tmp_path: Path, spark: Any
) -> None:
    first, context = await started_task(tmp_path)
    await assign(first, context, TP0, TP1)
    await first.put(orders(TP0, 0, 10) + orders(TP1, 0, 4))
    await first.pre_commit({TP0: 10, TP1: 4})
    await first.put(orders(TP0, 10, 15))  # buffered, never committed: lost with the task, re-read later
    await first.stop()

    second, context = await started_task(tmp_path)
    assert await assign(second, context, TP0, TP1) == {TP0: 10, TP1: 4}
    await second.put(orders(TP0, 5, 20) + orders(TP1, 0, 6))  # overlaps what is in Parquet: skipped
    assert await second.pre_commit({TP0: 20, TP1: 6}) == {TP0: 20, TP1: 6}
    assert committed_ids(tmp_path, spark) == sorted(ids(TP0, 0, 20) + ids(TP1, 0, 6))


async def test_open_removes_unmanifested_batches_of_its_partitions_only(tmp_path: Path, spark: Any) -> None:
    task, context = await started_task(tmp_path)
    await assign(task, context, TP0)
    await task.put(orders(TP0, 0, 4))
    await task.pre_commit({TP0: 4})
    kept = data_dirs(tmp_path)
    orphan = (
        tmp_path / "_batches" / "__connect_batch=pq-3+dead" / "__connect_tp=orders+0" / "part-0.parquet"
    )  # any task's
    foreign = (
        tmp_path / "_batches" / "__connect_batch=pq-0+beef" / "__connect_tp=orders+1" / "part-0.parquet"
    )  # not its partition
    temp = tmp_path / "_manifests" / "orders-0" / ".00000000000000000009.json.tmp"  # hidden: never read
    for path in (orphan, foreign, temp):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"junk")

    fresh, context = await started_task(tmp_path)
    assert await assign(fresh, context, TP0) == {TP0: 4}
    assert not orphan.parent.exists()
    assert foreign.exists()
    assert data_dirs(tmp_path) == kept | {foreign.parent}
    assert committed_ids(tmp_path, spark) == ids(TP0, 0, 4)


async def test_tombstones_and_skipped_offsets_are_covered_by_an_empty_manifest(
    tmp_path: Path, spark: Any
) -> None:
    task, context = await started_task(tmp_path)
    await assign(task, context, TP0)
    await task.put([record("orders", 0, o, None) for o in range(3)])
    assert await task.pre_commit({TP0: 5}) == {TP0: 5}  # 3 and 4 were dropped before put (an SMT)
    (manifest,) = manifests(tmp_path, spark, 0)
    assert (manifest.paths, manifest.next_offset) == ((), 5)
    fresh, context = await started_task(tmp_path)
    assert await assign(fresh, context, TP0) == {TP0: 5}


async def test_partition_by_a_field_with_struct_and_schemaless_values(tmp_path: Path, spark: Any) -> None:
    address = SchemaBuilder.struct().field("city", SchemaBuilder.string()).build()
    schema = (
        SchemaBuilder.struct()
        .field("id", SchemaBuilder.string())
        .field("region", SchemaBuilder.string())
        .field("address", address)
        .field("note", SchemaBuilder.string().optional())
        .build()
    )

    def struct(i: int, region: str) -> Struct:
        return (
            Struct(schema)
            .put("id", f"s{i}")
            .put("region", region)
            .put("address", Struct(address).put("city", f"c{i}"))
        )

    task, context = await started_task(tmp_path, **{"partition.by": "region"})
    await assign(task, context, TP0, TP1)
    await task.put(
        [
            record("orders", 0, 0, struct(0, "eu")),
            record("orders", 0, 1, struct(1, "us")),
            record("orders", 1, 0, {"id": "j0", "region": "eu", "extra": 7}),
            record("orders", 1, 1, {"id": "j1"}),
        ]
    )
    assert await task.pre_commit({TP0: 2, TP1: 2}) == {TP0: 2, TP1: 2}
    assert {p.name for p in tmp_path.glob("_batches/__connect_batch=pq-0+*/__connect_tp=*/*")} == {
        "region=eu",
        "region=us",
        "region=__HIVE_DEFAULT_PARTITION__",
    }
    rows = {r["id"]: r for r in committed_rows(tmp_path, spark)}
    assert set(rows) == {"s0", "s1", "j0", "j1"}
    assert (rows["s1"]["region"], rows["s1"]["address"]["city"]) == ("us", "c1")
    assert (rows["j0"]["region"], rows["j0"]["extra"], rows["j1"]["region"]) == ("eu", 7, None)


async def test_enough_buffered_records_ask_for_an_early_commit(tmp_path: Path, spark: Any) -> None:
    task, context = await started_task(tmp_path, **{"flush.records": "5"})
    await assign(task, context, TP0)
    await task.put(orders(TP0, 0, 4))
    assert not context.commit_requested
    await task.put(orders(TP0, 4, 5))
    assert context.commit_requested


class Runner:
    """Stands in for ``context.spark`` (engine.spark.TaskSpark): records jobs, fails the first if told."""

    def __init__(self, spark: Any, fail_first: bool) -> None:
        self.spark, self.fail_first, self.jobs = spark, fail_first, 0

    async def run(self, fn: Any, *args: Any) -> Any:
        self.jobs += 1
        if self.fail_first and self.jobs == 1:
            raise RuntimeError("job failed")
        return await asyncio.to_thread(fn, self.spark, *args)


async def test_jobs_go_through_context_spark_and_a_failed_commit_drops_the_buffer(
    tmp_path: Path, spark: Any
) -> None:
    task, context = await started_task(tmp_path)
    await assign(task, context, TP0)
    runner = Runner(spark, fail_first=True)
    context.spark = runner
    await task.put(orders(TP0, 0, 5))
    with pytest.raises(RuntimeError, match="job failed"):
        await task.pre_commit({TP0: 5})
    assert committed_ids(tmp_path, spark) == []
    assert not data_dirs(tmp_path)
    # the sink loop seeks back to the committed offset (0) and redelivers: nothing doubles
    await task.put(orders(TP0, 0, 5))
    assert await task.pre_commit({TP0: 5}) == {TP0: 5}
    assert runner.jobs == 2
    assert committed_ids(tmp_path, spark) == ids(TP0, 0, 5)
