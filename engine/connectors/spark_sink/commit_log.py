"""The on-disk commit log that makes the Parquet output exactly-once.

Layout under the output root::

    _staging/<connector>-<task>/<batch-id>/...        Spark's raw output; never read; removed on recovery
    <field>=<value>/<topic>+<partition>+<first offset>+<batch-id>+<seq>.parquet   published data
    _manifests/<topic>-<partition>/<next offset, 20 digits>.json                   the commit log

A data file counts only once a manifest lists it. A manifest is created with write-to-temp, fsync
and ``os.replace``, so it appears whole or not at all: it is the single atomic step that publishes
a batch's files together with the offset range they hold. Everything else (staging, published
files no manifest lists) is a leftover of a crash and is deleted when the partition is opened.
Spark and Hadoop ignore paths starting with ``_`` or ``.``, so ``_staging`` and ``_manifests``
never show up in a plain ``spark.read.parquet(root)``; ``read_committed`` is the exact reader.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

STAGING = "_staging"
MANIFESTS = "_manifests"
_OFFSET_DIGITS = 20
_DATA_FILE = re.compile(r"^(?P<topic>[A-Za-z0-9._-]+)\+(?P<partition>\d+)\+(?P<first>\d+)\+(?P<batch>[0-9a-f]+)"
                        r"\+(?P<seq>\d+)(?:\.[A-Za-z0-9]+)*\.parquet$")


@dataclass(frozen=True, slots=True)
class Manifest:
    """One published batch of one topic-partition: offsets ``[first_offset, next_offset)``.

    ``files`` are relative to the output root; an empty list records offsets that produced no
    rows (tombstones, records an SMT dropped), so the consumer may still move past them.
    """

    topic: str
    partition: int
    first_offset: int
    next_offset: int
    batch_id: str
    files: tuple[str, ...]
    rows: int
    connector: str = ""
    task: int = 0

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Manifest:
        return cls(topic=raw["topic"], partition=int(raw["partition"]), first_offset=int(raw["first_offset"]),
                   next_offset=int(raw["next_offset"]), batch_id=raw["batch_id"], files=tuple(raw["files"]),
                   rows=int(raw["rows"]), connector=raw.get("connector", ""), task=int(raw.get("task", 0)))


def staging_dir(root: str | Path, connector: str, task: int) -> Path:
    return Path(root) / STAGING / f"{connector}-{task}"


def manifest_dir(root: str | Path, topic: str, partition: int) -> Path:
    return Path(root) / MANIFESTS / f"{topic}-{partition}"


def data_file_name(topic: str, partition: int, first_offset: int, batch_id: str, seq: int) -> str:
    """A published file's name: it says which partition owns it, so recovery can find orphans."""
    return f"{topic}+{partition}+{first_offset:0{_OFFSET_DIGITS}d}+{batch_id}+{seq:05d}.parquet"


def data_file_partition(name: str) -> tuple[str, int] | None:
    match = _DATA_FILE.match(name)
    return (match["topic"], int(match["partition"])) if match else None


def read_manifests(root: str | Path, topic: str, partition: int) -> list[Manifest]:
    """The partition's committed batches, oldest first (temp files of an interrupted write are not)."""
    folder = manifest_dir(root, topic, partition)
    if not folder.is_dir():
        return []
    found = [Manifest.from_json(json.loads(entry.read_text(encoding="utf-8"))) for entry in folder.iterdir()
             if entry.suffix == ".json" and entry.stem.isdigit()]
    return sorted(found, key=lambda m: m.next_offset)


def next_offset(root: str | Path, topic: str, partition: int) -> int | None:
    """The first offset no manifest covers, or None when the partition has no manifest yet."""
    manifests = read_manifests(root, topic, partition)
    return manifests[-1].next_offset if manifests else None


def write_manifest(root: str | Path, manifest: Manifest) -> Path:
    """Commit a batch: temp file, fsync, ``os.replace`` (atomic on one filesystem), fsync the directory."""
    folder = manifest_dir(root, manifest.topic, manifest.partition)
    folder.mkdir(parents=True, exist_ok=True)
    final = folder / f"{manifest.next_offset:0{_OFFSET_DIGITS}d}.json"
    temp = folder / f".{final.name}.{manifest.batch_id}.tmp"
    body = asdict(manifest)
    body["files"] = list(manifest.files)
    with temp.open("w", encoding="utf-8") as out:
        json.dump(body, out, indent=1, sort_keys=True)
        out.flush()
        os.fsync(out.fileno())
    os.replace(temp, final)
    fsync_dir(folder)
    return final


def publish(root: str | Path, staged: Path, topic: str, partition: int, first_offset: int, batch_id: str,
            on_moved: Callable[[], None] | None = None) -> list[str]:
    """Move one partition's staged Parquet files into the final layout; returns their relative paths.

    ``staged`` is the Spark output directory of that partition; sub-directories (``field=value``)
    are kept. The moved files are fsynced so a manifest never outlives the data it lists.
    ``on_moved`` runs after each file (a test hook for crashes half-way through).
    """
    root = Path(root)
    moved: list[str] = []
    for seq, source in enumerate(sorted(_parquet_files(staged))):
        relative_dir = source.parent.relative_to(staged)
        target_dir = root / relative_dir
        target_dir.mkdir(parents=True, exist_ok=True)
        target = target_dir / data_file_name(topic, partition, first_offset, batch_id, seq)
        os.replace(source, target)
        _fsync_file(target)
        moved.append(target.relative_to(root).as_posix())
        if on_moved is not None:
            on_moved()
    for folder in {(root / m).parent for m in moved}:
        fsync_dir(folder)
    return moved


def recover(root: str | Path, partitions: Iterable[tuple[str, int]], own_staging: Path) -> dict[str, int]:
    """Undo whatever a crash left for ``partitions``: this task's staging, manifest temp files, and
    published files that no manifest lists. Only the owner of a partition may call this."""
    root = Path(root)
    wanted = set(partitions)
    removed = {"staging": 0, "temp": 0, "orphans": 0}
    if own_staging.exists():
        shutil.rmtree(own_staging, ignore_errors=True)
        removed["staging"] = 1
    listed: set[str] = set()
    for topic, partition in wanted:
        folder = manifest_dir(root, topic, partition)
        if folder.is_dir():
            for entry in folder.iterdir():
                if entry.name.endswith(".tmp"):
                    entry.unlink(missing_ok=True)
                    removed["temp"] += 1
        for manifest in read_manifests(root, topic, partition):
            listed.update(manifest.files)
    for file in data_files(root):
        owner = data_file_partition(file.name)
        if owner in wanted and file.relative_to(root).as_posix() not in listed:
            file.unlink(missing_ok=True)
            removed["orphans"] += 1
    return removed


def data_files(root: str | Path) -> Iterator[Path]:
    """Published-looking Parquet files under the root, skipping ``_``/``.`` directories as Spark does."""
    root = Path(root)
    if not root.is_dir():
        return
    for current, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(("_", "."))]
        for name in files:
            if data_file_partition(name) is not None:
                yield Path(current) / name


def committed_files(root: str | Path) -> list[str]:
    """Absolute paths of every file some manifest lists, in offset order per partition."""
    base = Path(root) / MANIFESTS
    if not base.is_dir():
        return []
    files: list[str] = []
    for folder in sorted(base.iterdir()):
        topic, _, partition = folder.name.rpartition("-")
        if not folder.is_dir() or not partition.isdigit():
            continue
        for manifest in read_manifests(root, topic, int(partition)):
            files.extend(str(Path(root) / f) for f in manifest.files)
    return files


def delete_output(root: str | Path) -> None:
    """Remove manifests, then published data, then now-empty directories; safe to repeat."""
    root = Path(root)
    shutil.rmtree(root / MANIFESTS, ignore_errors=True)
    for file in list(data_files(root)):
        file.unlink(missing_ok=True)
    folders = []
    for current, dirs, _files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(("_", "."))]
        folders.append(Path(current))
    for folder in reversed(folders[1:]):  # deepest first; the root itself stays
        with contextlib.suppress(OSError):
            folder.rmdir()  # only succeeds when empty: foreign files stay


def fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _parquet_files(folder: Path) -> Iterator[Path]:
    for current, _dirs, files in os.walk(folder):
        for name in files:
            if name.endswith(".parquet") and not name.startswith(("_", ".")):
                yield Path(current) / name


def read_committed(path: str | Path, spark: Any) -> Any:
    """A DataFrame of exactly the rows the manifests list (``field=value`` columns included).

    ``basePath`` keeps partition discovery working when explicit files are given; ``mergeSchema``
    lets batches whose schemaless rows had different fields be read together.
    """
    files = committed_files(path)
    if not files:
        from pyspark.sql.types import StructType

        return spark.createDataFrame([], StructType([]))
    return spark.read.option("basePath", str(path)).option("mergeSchema", "true").parquet(*files)
