"""The commit log that makes the Parquet output exactly-once, on any filesystem Spark can write.

Layout under the output root (``path``)::

    _batches/__connect_batch=<connector>-<task>+<batch-id>/__connect_tp=<topic>+<partition>/[<field>=<value>/]part-*.parquet
    _manifests/<topic>-<partition>/<next offset, 20 digits>[-<topic id>].json       the commit log

A commit is one Spark write of the batch straight into its own ``_batches/...`` directory (the writer's
commit protocol makes it whole when the job ends; nothing is copied afterwards), then one manifest per
topic-partition naming that partition's directory and offset range. A manifest is published
atomically (``store.OutputStore.write_manifest``): it is the single step that makes a batch's rows
count, together with the offsets they came from. Batch directories no manifest names are leftovers
of a crash, removed when their partition is next opened (or when the connector is deleted).
Each manifest also names the log its offsets count in (``cluster_id``, ``topic_id``: KIP-516), and
carries the topic id in its file name, so the offsets of a topic deleted and created again, or of
another cluster, never collide with the new topic's or count as its position (``recover``).
``read_committed`` is the exact reader; every operation goes through ``store``, so all of this runs
the same on a local filesystem, HDFS or S3, from a classic driver or a Spark Connect client.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any, NamedTuple

from engine.api import TopicIdentity
from engine.connectors.spark_sink.store import OutputStore, store_for

BATCHES = "_batches"
MANIFESTS = "_manifests"
TP_COLUMN = "__connect_tp"  # the batch's partition column: one directory per topic-partition
# Batch directories are named as partition directories too, so that under ``_batches`` every level is
# ``key=value`` and Spark's partition discovery sees one table (``read_committed`` drops both columns).
BATCH_COLUMN = "__connect_batch"
_OFFSET_DIGITS = 20
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


@dataclass(frozen=True, slots=True)
class Manifest:
    """One published batch of one topic-partition: offsets ``[first_offset, next_offset)``.

    ``paths`` are directories relative to the output root; an empty tuple records offsets that produced
    no rows (tombstones, records an SMT dropped), so the consumer may still move past them.
    """

    topic: str
    partition: int
    first_offset: int
    next_offset: int
    batch_id: str
    paths: tuple[str, ...]
    rows: int
    connector: str = ""
    task: int = 0
    cluster_id: str = ""  # the log the offsets count in; empty in manifests written before they were kept
    topic_id: str = ""

    @property
    def identity(self) -> TopicIdentity | None:
        return TopicIdentity(self.cluster_id, self.topic_id) if self.cluster_id and self.topic_id else None

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Manifest:
        return cls(
            topic=raw["topic"],
            partition=int(raw["partition"]),
            first_offset=int(raw["first_offset"]),
            next_offset=int(raw["next_offset"]),
            batch_id=raw["batch_id"],
            paths=tuple(raw.get("paths", raw.get("files", ()))),
            rows=int(raw["rows"]),
            connector=raw.get("connector", ""),
            task=int(raw.get("task", 0)),
            cluster_id=str(raw.get("cluster_id", "") or ""),
            topic_id=str(raw.get("topic_id", "") or ""),
        )

    def to_json(self) -> str:
        body = asdict(self)
        body["paths"] = list(self.paths)
        return json.dumps(body, sort_keys=True)  # one line: a text dataset's one row on Spark Connect


def batch_dir(connector: str, task: int, batch_id: str) -> str:
    """``_batches/__connect_batch=<connector>-<task>+<batch id>``, the connector name made path-safe."""
    return f"{BATCHES}/{BATCH_COLUMN}={_safe(connector)}-{task}+{batch_id}"


def _safe(connector: str) -> str:
    return _UNSAFE.sub("_", connector)


def tp_dir_name(topic: str, partition: int) -> str:
    """What Spark names the directory of ``TP_COLUMN == "<topic>+<partition>"`` (topic names need no escaping)."""
    return f"{TP_COLUMN}={topic}+{partition}"


def tp_value(topic: str, partition: int) -> str:
    return f"{topic}+{partition}"


def manifest_dir(topic: str, partition: int) -> str:
    return f"{MANIFESTS}/{topic}-{partition}"


def manifest_name(next_offset: int, topic_id: str = "") -> str:
    """Ordered by offset; a topic id keeps a re-created topic's manifests apart from the old one's."""
    suffix = f"-{_UNSAFE.sub('_', topic_id)}" if topic_id else ""
    return f"{next_offset:0{_OFFSET_DIGITS}d}{suffix}.json"


def parse_manifests(texts: Iterable[str]) -> list[Manifest]:
    """Manifests from their JSON texts, oldest first per partition."""
    found = [Manifest.from_json(json.loads(text)) for text in texts if text.strip()]
    return sorted(found, key=lambda m: (m.topic, m.partition, m.next_offset))


def read_manifests(store: OutputStore, topic: str, partition: int) -> list[Manifest]:
    """The partition's committed batches, oldest first (an interrupted publication is not one)."""
    return parse_manifests(store.read_manifests(manifest_dir(topic, partition)))


def all_manifests(store: OutputStore) -> list[Manifest]:
    return parse_manifests(store.read_manifests(MANIFESTS))


def next_offset(manifests: list[Manifest]) -> int | None:
    """The first offset no manifest covers, or None when the partition has no manifest yet."""
    return max(m.next_offset for m in manifests) if manifests else None


def write_manifest(store: OutputStore, manifest: Manifest) -> None:
    """Commit a batch for one partition (atomic: see ``OutputStore.write_manifest``)."""
    store.write_manifest(
        manifest_dir(manifest.topic, manifest.partition),
        manifest_name(manifest.next_offset, manifest.topic_id),
        manifest.to_json(),
    )


class Recovered(NamedTuple):
    """A partition's position in the output: ``next_offset`` (None: start from the consumer's), and the
    identity its newest manifests were written for when that is not the live one (``mismatch``)."""

    next_offset: int | None
    mismatch: TopicIdentity | None = None
    mismatched_offset: int | None = None


def position(manifests: list[Manifest], live: TopicIdentity | None) -> Recovered:
    """Where a partition's output ends, for the log ``live`` names. Manifests of another identity are
    another log's offsets: they never give the position (the newest of them is reported); manifests
    that name none (written before identities were kept) count when no manifest names the live one."""
    if live is None:
        return Recovered(next_offset(manifests))
    own = [m for m in manifests if m.identity == live]
    if own:
        return Recovered(next_offset(own))
    others = [m for m in manifests if m.identity is not None]
    if others:
        newest = max(others, key=lambda m: m.next_offset)
        return Recovered(None, newest.identity, newest.next_offset)
    return Recovered(next_offset(manifests))


def recover(
    store: OutputStore,
    partitions: Iterable[tuple[str, int]],
    identities: Mapping[tuple[str, int], TopicIdentity] | None = None,
) -> dict[tuple[str, int], Recovered]:
    """Remove the batch directories of ``partitions`` that no manifest names (a crash's leftovers), and
    return each partition's position for its live log (``identities``). Only the owner of a partition
    may call this."""
    found: dict[tuple[str, int], Recovered] = {}
    for topic, partition in partitions:
        manifests = read_manifests(store, topic, partition)
        listed = {path for m in manifests for path in m.paths}
        for orphan in store.list_data_dirs(f"{BATCHES}/*/{tp_dir_name(topic, partition)}"):
            if orphan not in listed:
                store.remove(orphan)
        found[(topic, partition)] = position(manifests, (identities or {}).get((topic, partition)))
    return found


def remove_unlisted(store: OutputStore, connector: str) -> int:
    """Remove the connector's batch directories no manifest names (after its tasks stopped); how many."""
    listed = {path for m in all_manifests(store) for path in m.paths}
    mine = re.compile(
        rf"^{BATCHES}/{BATCH_COLUMN}={re.escape(_safe(connector))}-\d+\+"
    )  # not "<connector>-eu"'s
    removed = 0
    for name in store.list_data_dirs(
        f"{BATCHES}/{BATCH_COLUMN}={_glob_escape(_safe(connector))}-*/{TP_COLUMN}=*"
    ):
        if mine.match(name) and name not in listed:
            store.remove(name)
            removed += 1
    return removed


def delete_output(store: OutputStore) -> None:
    """Remove the manifests first (nothing counts any more), then the data; safe to repeat."""
    store.remove(MANIFESTS)
    store.remove(BATCHES)


def committed_paths(store: OutputStore) -> list[str]:
    """Absolute paths of every directory some manifest names, in offset order per partition."""
    return [store.absolute(path) for m in all_manifests(store) for path in m.paths]


def _glob_escape(text: str) -> str:
    return re.sub(r"([*?\[\]{}\\])", r"\\\1", text)


def read_committed(path: str, spark: Any) -> Any:
    """A DataFrame of exactly the rows the manifests name (``field=value`` columns included).

    Works on a classic session and on a Spark Connect client alike (which needs no access to the files).
    ``basePath`` (``_batches``, below which every level is ``key=value``) keeps partition discovery working
    when directories are given; ``mergeSchema`` lets batches whose schemaless rows had different fields
    be read together.
    """
    store = store_for(spark, str(path))
    paths = committed_paths(store)
    if not paths:
        from pyspark.sql.types import StructType

        return spark.createDataFrame([], StructType([]))
    return (
        spark.read.option("basePath", store.absolute(BATCHES))
        .option("mergeSchema", "true")
        .parquet(*paths)
        .drop(TP_COLUMN, BATCH_COLUMN)
    )
