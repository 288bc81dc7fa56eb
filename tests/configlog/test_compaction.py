"""Config log compaction: the compacted log replays to the same snapshot, at the same offsets."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from engine.configlog import (
    ConnectorConfigRecord,
    ConnectorTombstone,
    LoggerLevelRecord,
    PendingCleanupCleared,
    PendingCleanupRecord,
    RestartRecord,
    SessionKeyRecord,
    TargetStateRecord,
    TargetStateTombstone,
    TaskCommitRecord,
    TaskConfigRecord,
    TaskRestartRecord,
    decode,
    encode,
)
from engine.configlog.compaction import retained
from engine.configlog.file import FileConfigLog
from engine.configlog.records import ConfigRecord
from engine.configlog.snapshot import ConfigSnapshot
from engine.errors import CorruptRecord
from engine.journal.file import STEPS, Entry
from states import TargetState
from tests.crash import Crash, crash_at

NAMES = ("a", "b", "c-1")


def replay(entries: Sequence[Entry]) -> ConfigSnapshot:
    """What the herder's replay builds: corrupt records skipped."""
    snapshot = ConfigSnapshot()
    for offset, key, value in entries:
        try:
            snapshot.apply(decode(key, value), offset)
        except CorruptRecord:
            continue
    return snapshot


def random_record(rng: random.Random, n: int) -> tuple[str, bytes | None]:
    c = rng.choice(NAMES)
    record: ConfigRecord
    match rng.choices(range(12), weights=[6, 2, 6, 4, 3, 1, 1, 1, 2, 1, 1, 1])[0]:
        case 0:
            record = ConnectorConfigRecord(c, {"v": str(n)}, rng.choice([None, None, str(n), "7"]))
        case 1:
            record = ConnectorTombstone(c)
        case 2:
            record = TaskConfigRecord(c, rng.randrange(3), {"t": str(n)})
        case 3:
            record = TaskCommitRecord(c, rng.randrange(4))
        case 4:
            record = TargetStateRecord(c, rng.choice(list(TargetState)))
        case 5:
            record = TargetStateTombstone(c)
        case 6:
            restarts: list[ConfigRecord] = [RestartRecord(c, True, False), TaskRestartRecord(c, 1)]
            record = rng.choice(restarts)
        case 7:
            record = PendingCleanupRecord(c, {"v": str(n)}, rng.randrange(3), rng.choice([None, str(n)]))
        case 8:
            record = PendingCleanupCleared(c)
        case 9:
            unknown: list[ConfigRecord] = [
                SessionKeyRecord(bytes([n % 256]), "HmacSHA256", n),
                LoggerLevelRecord(rng.choice(["x", "y"]), rng.choice(["INFO", "DEBUG"]))]
            record = rng.choice(unknown)
        case _:
            return rng.choice([(f"connector-{c}", b"not json"), (f"task-{c}-x", b"{}"), ("bogus", b"{}")])
    return encode(record)


def assert_same_log(compacted: Sequence[Entry], whole: Sequence[Entry]) -> None:
    assert set(compacted) <= set(whole)  # the same records at their original offsets
    assert compacted[-1][0] == whole[-1][0]  # the end offset survives
    expected, got = replay(whole), replay(compacted)
    assert got == expected
    assert got.incarnations == expected.incarnations
    assert list(got.connectors) == list(expected.connectors)  # the order connectors boot in


def test_compacting_at_random_points_replays_to_the_same_snapshot() -> None:
    kept = total = 0
    with capture_logs() as logs:
        for seed in range(400):
            rng = random.Random(seed)
            whole: list[Entry] = []
            log: list[Entry] = []
            for n in range(rng.randrange(1, 120)):
                entry = (n, *random_record(rng, n))
                whole.append(entry)
                log.append(entry)
                if rng.random() < 0.1:  # the whole log, or the part every reader has passed
                    cut = rng.randrange(len(log) + 1) if rng.random() < 0.3 else len(log)
                    log = retained(log[:cut]) + log[cut:]
                    assert_same_log(log, whole)
            log = retained(log)
            assert_same_log(log, whole)
            kept, total = kept + len(log), total + len(whole)
    assert not [e for e in logs if e["event"] == "configlog.compaction_refused"]
    assert kept < total / 3


def entries_of(*records: ConfigRecord) -> list[Entry]:
    return [(n, *encode(record)) for n, record in enumerate(records)]


def test_a_connector_keeps_the_incarnation_of_the_record_that_created_it() -> None:
    log = entries_of(
        ConnectorConfigRecord("gone", {}), ConnectorTombstone("gone"),
        ConnectorConfigRecord("c", {"v": "1"}), ConnectorConfigRecord("c", {"v": "2"}),
        ConnectorConfigRecord("c", {"v": "3"}), RestartRecord("c"))
    kept = retained(log)
    assert [offset for offset, _, _ in kept] == [2, 4, 5]  # creation, last config, the log's last record
    assert replay(kept).incarnations == {"c": "2"}


def test_a_commit_keeps_its_task_configs_and_the_config_it_was_applied_under() -> None:
    log = entries_of(
        ConnectorConfigRecord("c", {"v": "1"}),
        TaskConfigRecord("c", 0, {"t": "old"}), TaskCommitRecord("c", 1),
        TaskConfigRecord("c", 0, {"t": "0"}), TaskConfigRecord("c", 1, {"t": "1"}), TaskCommitRecord("c", 2),
        ConnectorConfigRecord("c", {"v": "2"}),
        TaskConfigRecord("c", 0, {"t": "pending"}),
        TargetStateRecord("c", TargetState.PAUSED), TargetStateRecord("c", TargetState.STOPPED))
    kept = retained(log)
    assert [offset for offset, _, _ in kept] == [0, 3, 4, 5, 6, 7, 9]
    snapshot = replay(kept)
    assert snapshot.tasks["c"] == ({"t": "0"}, {"t": "1"})
    assert snapshot.applied["c"] == {"v": "1"}
    assert snapshot.uncommitted() == {"c": 1}


def test_a_deleted_connector_leaves_only_its_pending_cleanup() -> None:
    log = entries_of(
        ConnectorConfigRecord("c", {}), TaskConfigRecord("c", 0, {}), TaskCommitRecord("c", 1),
        TargetStateRecord("c", TargetState.PAUSED), TargetStateTombstone("c"),
        PendingCleanupRecord("c", {}, 1, "0"), ConnectorTombstone("c"),
        PendingCleanupRecord("d", {}, 0), PendingCleanupCleared("d"), SessionKeyRecord(b"k", "HmacSHA256", 1))
    assert [offset for offset, _, _ in retained(log)] == [5, 9]


def test_a_commit_refused_for_a_stopped_connector_stays_refused() -> None:
    log = entries_of(
        ConnectorConfigRecord("c", {}), TaskCommitRecord("c", 0), TargetStateRecord("c", TargetState.STOPPED),
        TaskConfigRecord("c", 0, {}), TaskCommitRecord("c", 1), TargetStateRecord("c", TargetState.STARTED),
        ConnectorConfigRecord("c", {"v": "2"}))
    kept = retained(log)
    assert replay(kept).tasks["c"] == ()
    assert [offset for offset, _, _ in kept] == [0, 1, 5, 6]


def test_records_that_cannot_be_read_stay_while_they_are_the_last_of_their_key() -> None:
    log = [(0, "connector-c", b'{"properties":{}}'), (1, "connector-c", b"not json"), (2, "x", b"{}"),
           (3, "x", b"{}"), (4, "target-state-c", b'{"state":"PAUSED"}')]
    assert [offset for offset, _, _ in retained(log)] == [0, 1, 3, 4]


async def read(log: FileConfigLog) -> list[Entry]:
    end = await log.end_offset()
    seen: list[Entry] = []
    if end:
        async for entry in log.entries():
            seen.append((entry.offset, entry.key, entry.value))
            if entry.offset == end - 1:
                break
    return seen


async def test_the_file_log_keeps_offsets_and_appends_after_the_highest(tmp_path: Path) -> None:
    path = tmp_path / "config"
    log = FileConfigLog(path)
    await log.open()
    for n in range(5):
        await log.append([encode(ConnectorConfigRecord("c", {"v": str(n)}))])
    await log.append([encode(ConnectorTombstone("gone")), encode(TargetStateRecord("c", TargetState.PAUSED))])
    await log.compact()
    assert [offset for offset, _, _ in await read(log)] == [0, 4, 6]
    assert await log.append([encode(RestartRecord("c"))]) == 7
    await log.close()
    again = FileConfigLog(path)
    await again.open()
    assert [offset for offset, _, _ in await read(again)] == [0, 4, 6, 7]
    assert await again.end_offset() == 8
    assert replay(await read(again)).incarnations == {"c": "0"}
    await again.close()


async def test_a_reader_part_way_through_never_sees_the_compacted_rest(tmp_path: Path) -> None:
    log = FileConfigLog(tmp_path / "config")
    await log.open()
    for n in range(6):
        await log.append([encode(ConnectorConfigRecord("c", {"v": str(n)}))])
    reader = log.entries()
    first = [(await anext(reader)).offset for _ in range(3)]
    await log.compact()  # only what every reader passed: offsets 0..2
    rest = [(await anext(reader)).offset for _ in range(3)]
    assert first + rest == [0, 1, 2, 3, 4, 5]
    assert [offset for offset, _, _ in await read(log)] == [0, 2, 3, 4, 5]
    assert len(log.journal.path.read_bytes().splitlines()) == 2  # the file is compacted whole
    await reader.aclose()  # type: ignore[attr-defined]  # an async generator, typed as an AsyncIterator
    await log.compact()
    assert [offset for offset, _, _ in await read(log)] == [0, 5]
    await log.close()


async def test_random_appends_and_compactions_reopen_to_the_same_snapshot(tmp_path: Path) -> None:
    for seed in range(15):
        rng = random.Random(seed)
        path = tmp_path / f"config-{seed}"
        log = FileConfigLog(path, fsync=False, floor=0)
        await log.open()
        whole: list[Entry] = []
        for n in range(rng.randrange(1, 80)):
            record = random_record(rng, n)
            assert await log.append([record]) == n
            whole.append((n, *record))
            if rng.random() < 0.1:
                await log.compact()
        await log.close()
        again = FileConfigLog(path)
        await again.open()
        assert_same_log(await read(again), whole)
        await again.close()


@pytest.mark.parametrize("step", STEPS)
async def test_a_config_log_compaction_killed_at_any_step_loses_nothing(tmp_path: Path, step: str) -> None:
    path = tmp_path / "config"
    log = FileConfigLog(path)
    await log.open()
    records: list[ConfigRecord] = [
               ConnectorConfigRecord("c", {"v": "1"}), TaskConfigRecord("c", 0, {}), TaskCommitRecord("c", 1),
               ConnectorConfigRecord("c", {"v": "2"}), ConnectorConfigRecord("d", {}), ConnectorTombstone("d"),
               PendingCleanupRecord("d", {}, 0, "4")]
    await log.append([encode(record) for record in records])
    with pytest.raises(Crash):
        await log.compact(crash_at(step))
    await log.append([encode(TargetStateRecord("c", TargetState.PAUSED))])
    whole = entries_of(*records, TargetStateRecord("c", TargetState.PAUSED))
    await log.close()
    again = FileConfigLog(path)
    await again.open()
    assert_same_log(await read(again), whole)
    assert replay(await read(again)).incarnations == {"c": "0"}
    await again.close()


# A child that appends records f(offset) forever with tiny compaction thresholds, acknowledging each
# offset on stdout ("ack <offset>", among its log lines, which it routes there) once append() returned
# (fsynced).
APPENDING_FOREVER = textwrap.dedent("""
    import asyncio, logging, sys
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(message)s")  # journal.compacted lines
    from engine.configlog.file import FileConfigLog
    sys.path.insert(0, sys.argv[2])
    from test_compaction import record_at

    async def main(path):
        log = FileConfigLog(path, floor=512)
        await log.open()
        offset = await log.end_offset()
        while True:
            assert await log.append([record_at(offset)]) == offset
            print("ack", offset, flush=True)
            offset += 1

    asyncio.run(main(sys.argv[1]))
""")


def record_at(offset: int) -> tuple[str, bytes | None]:
    """The record the child writes at ``offset``: the same in every run, so the parent knows them all."""
    return random_record(random.Random(offset), offset)


def run_and_kill(path: Path, acks: int) -> tuple[int, int]:
    """Start the child, let it acknowledge ``acks`` more appends, SIGKILL it: the last acknowledged
    offset, and how many compactions it finished."""
    child = subprocess.Popen([sys.executable, "-c", APPENDING_FOREVER, str(path), str(Path(__file__).parent)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert child.stdout is not None
    try:
        last, seen, compactions = -1, 0, 0
        while seen < acks:
            line = child.stdout.readline()
            assert line, child.stderr.read() if child.stderr else "the child ended"
            if line.startswith("ack "):
                last, seen = int(line.split()[1]), seen + 1
            compactions += "journal.compacted" in line
        child.send_signal(signal.SIGKILL)
    finally:
        child.kill()
        child.wait(10)
        child.stdout.close()
        if child.stderr:
            child.stderr.close()
    return last, compactions


async def test_kill_9_during_appends_and_compactions_loses_no_acknowledged_record(tmp_path: Path) -> None:
    path = tmp_path / "config"
    for acks in (450, 397, 511, 300, 350):  # five lives of a worker, each killed at some point of its loop
        acknowledged, compactions = await asyncio.to_thread(run_and_kill, path, acks)
        assert compactions > 0
        log = FileConfigLog(path)
        await log.open()
        end = await log.end_offset()
        assert end > acknowledged
        whole = [(n, *record_at(n)) for n in range(end)]
        assert_same_log(await read(log), whole)
        await log.close()
