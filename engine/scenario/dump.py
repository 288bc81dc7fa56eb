"""Replay a dump of a real Kafka Connect config topic: what would a worker make of it?

A dump is JSON lines, one record each: ``{"key": "connector-orders", "value": {...}}``, with
``"value": null`` for a tombstone; a value may also be the record's JSON text as a string (what a
console consumer prints). Extra fields (``offset``, ``partition``, ``timestamp``) are ignored.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import orjson

from engine.configlog.codec import decode_object, encode
from engine.configlog.memory import MemoryConfigLog
from engine.configlog.records import (
    ConnectorConfigRecord,
    TargetStateRecord,
    TaskCommitRecord,
    TaskConfigRecord,
)
from engine.configlog.snapshot import ConfigSnapshot
from engine.engine import Engine
from engine.errors import CorruptRecord, EngineError

Progress = Callable[[int, int], None]  # (bytes read, total bytes)
_PROGRESS_EVERY = 65_536  # records between progress callbacks
_parse_json = orjson.loads  # 3-4x json.loads: parsing is most of a dry run's time


class DumpError(EngineError, ValueError):
    """The dump file cannot be read at all (missing, or not JSON lines)."""


@dataclass(frozen=True, slots=True)
class SkippedRecord:
    line: int
    key: str
    reason: str


@dataclass
class DumpReplay:
    """The snapshot a worker would build from the dump, and what it had to skip."""

    path: str
    snapshot: ConfigSnapshot = field(default_factory=ConfigSnapshot)
    records: int = 0
    skipped: list[SkippedRecord] = field(default_factory=list)
    seconds: float = 0.0
    statuses: dict[str, dict[str, Any]] = field(default_factory=dict)  # filled when connectors were started
    started_incarnations: dict[str, str] = field(default_factory=dict)  # what the started engine read back
    # connector properties whose value is null in the dump: Kafka keeps them (string or null); the
    # engine treats them as unset, as ConnectorConfig's parsing does, but the report shows them
    null_properties: dict[str, list[str]] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        snap = self.snapshot
        uncommitted = snap.uncommitted()
        connectors = {
            name: {
                "config": {**config, **dict.fromkeys(self.null_properties.get(name, ()))},
                "target_state": snap.target(name).value,
                "incarnation": snap.incarnations.get(name),
                "tasks": [dict(t) for t in snap.tasks.get(name, ())],
                "inconsistent": name in snap.inconsistent,
                "uncommitted_task_configs": uncommitted.get(name, 0),
                **({"status": self.statuses[name]} if name in self.statuses else {}),
            }
            for name, config in sorted(snap.connectors.items())
        }
        return {
            "file": self.path,
            "records": self.records,
            "connectors": connectors,
            "pending_cleanups": sorted(snap.pending_cleanups),
            "skipped": [{"line": s.line, "key": s.key, "reason": s.reason} for s in self.skipped],
        }


def _lines(path: str, progress: Progress | None) -> Iterator[tuple[int, bytes]]:
    file = Path(path)
    try:
        total = file.stat().st_size
        handle = file.open("rb")
    except OSError as exc:
        raise DumpError(f"{path}: cannot read the dump: {exc.strerror or exc}") from None
    with handle:
        done = 0
        for number, line in enumerate(handle, 1):
            done += len(line)
            if progress is not None and number % _PROGRESS_EVERY == 0:
                progress(done, total)
            yield number, line
        if progress is not None:
            progress(total, total)


def _record(path: str, number: int, line: bytes) -> tuple[str, Any] | None:
    """The (key, parsed value) of one dump line; None for a blank line."""
    if not line.strip():
        return None
    try:
        entry = _parse_json(line)
    except ValueError as exc:
        raise DumpError(f"{path}:{number}: not a JSON line ({exc})") from None
    if not isinstance(entry, dict) or not isinstance(entry.get("key"), str) or "value" not in entry:
        raise DumpError(f'{path}:{number}: expected {{"key": "...", "value": ...}}')
    return entry["key"], entry["value"]


def read_dump(path: str, progress: Progress | None = None) -> DumpReplay:
    """Apply every record to a snapshot without starting anything (``--dry-run``).

    Malformed records are skipped and reported, as a worker would; a line that is not a dump
    record at all is a ``DumpError``, since the file is then not a dump.
    """
    replay = DumpReplay(path)
    snapshot = replay.snapshot
    began = time.perf_counter()
    for number, line in _lines(path, progress):
        parsed = _record(path, number, line)
        if parsed is None:
            continue
        key, value = parsed
        replay.records += 1
        _note_nulls(replay, key, value)
        try:
            # the record's position in the dump is its offset: the same dump always gives the same incarnations
            snapshot.apply(decode_object(key, _object(key, value)), replay.records - 1)
        except CorruptRecord as exc:
            replay.skipped.append(SkippedRecord(number, exc.key, exc.reason))
    replay.seconds = time.perf_counter() - began
    return replay


def _note_nulls(replay: DumpReplay, key: str, value: Any) -> None:
    """Remember a connector record's null properties (the latest record of a connector decides)."""
    if not key.startswith("connector-"):
        return
    name = key.removeprefix("connector-")
    props = value.get("properties") if isinstance(value, dict) else None
    nulls = sorted(k for k, v in props.items() if v is None) if isinstance(props, dict) else []
    if nulls:
        replay.null_properties[name] = nulls
    else:
        replay.null_properties.pop(name, None)


def _object(key: str, value: Any) -> dict[str, Any] | None:
    """A record value as a JSON object or None; JSON text (a console consumer's output) is parsed."""
    if isinstance(value, str):
        try:
            value = _parse_json(value)
        except ValueError as exc:
            raise CorruptRecord(key, f"value is not JSON ({exc})") from None
    if value is not None and not isinstance(value, dict):
        raise CorruptRecord(key, "value is not a JSON object")
    return value


async def start_dump(replay: DumpReplay, worker: dict[str, str] | None = None) -> None:
    """Start a worker on the dump's final state and record each connector's status.

    The log it starts from holds the snapshot re-encoded (what compaction would leave), so
    connectors, target states and committed task configs are exactly what ``read_dump`` found.
    """
    log = MemoryConfigLog()
    await log.open()
    await log.append(_compacted(replay.snapshot))
    async with Engine(worker, config_log=log) as engine:
        await engine.settled()
        replay.started_incarnations = dict(engine.herder.snapshot.incarnations)
        for name in await engine.connectors():
            try:
                replay.statuses[name] = await engine.connector_status(name)
            except EngineError as exc:
                replay.statuses[name] = {"error": str(exc)}


def _compacted(snapshot: ConfigSnapshot) -> list[tuple[str, bytes | None]]:
    records: list[tuple[str, bytes | None]] = []
    for name, config in snapshot.connectors.items():
        records.append(encode(TargetStateRecord(name, snapshot.target(name))))
        records.append(encode(ConnectorConfigRecord(name, config, snapshot.incarnations.get(name))))
        tasks = snapshot.tasks.get(name)
        if tasks is not None and name not in snapshot.inconsistent:
            records += [encode(TaskConfigRecord(name, n, t)) for n, t in enumerate(tasks)]
            records.append(encode(TaskCommitRecord(name, len(tasks))))
    return records


def print_dump(replay: DumpReplay, out: TextIO) -> None:
    snapshot = replay.snapshot
    uncommitted = snapshot.uncommitted()
    print(
        f"== {replay.path}: {replay.records} records, {len(snapshot.connectors)} connectors, "
        f"{len(replay.skipped)} skipped",
        file=out,
    )
    for name, config in sorted(snapshot.connectors.items()):
        tasks = snapshot.tasks.get(name, ())
        notes = []
        if name in snapshot.inconsistent:
            notes.append("INCONSISTENT task configs (a commit did not match the configs written before it)")
        if uncommitted.get(name):
            notes.append(f"{uncommitted[name]} uncommitted task config(s)")
        status = replay.statuses.get(name)
        state = ""
        if status and "connector" in status:
            task_states = ", ".join(t["state"] for t in status["tasks"])
            state = f"; started: {status['connector']['state']} with tasks [{task_states}]"
        print(
            f"connector {name}: target {snapshot.target(name).value}, {len(tasks)} committed task config(s), "
            f"class {config.get('connector.class', '?')}{state}",
            file=out,
        )
        if name in replay.null_properties:
            print(
                f"  null properties (unset for the engine): {', '.join(replay.null_properties[name])}",
                file=out,
            )
        for note in notes:
            print(f"  ! {note}", file=out)
        for n, task in enumerate(tasks):
            shown = ", ".join(f"{k}={v}" for k, v in sorted(task.items()))
            print(f"  task {n}: {shown}", file=out)
    for name in sorted(snapshot.pending_cleanups):
        print(f"pending cleanup: {name} (deleted, deleted() not yet confirmed)", file=out)
    for skipped in replay.skipped:
        print(f"skipped line {skipped.line}: {skipped.key}: {skipped.reason}", file=out)


def terminal_progress(err: TextIO = sys.stderr) -> Progress | None:
    """A one-line progress bar on a terminal; nothing when stderr is a file or pipe."""
    if not err.isatty():
        return None

    def show(done: int, total: int) -> None:
        share = done / total if total else 1.0
        bar = "#" * int(share * 30)
        err.write(f"\r[{bar:<30}] {share:6.1%}")
        if done >= total:
            err.write("\n")
        err.flush()

    return show
