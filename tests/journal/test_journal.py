"""The append-only journal behind the file log and stores: durable, torn tails cut, never a crash."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from engine.configlog.file import FileConfigLog
from engine.journal.file import STEPS, Journal
from tests.crash import Crash, crash_at


def read_all(path: Path) -> list[tuple[str, bytes | None]]:
    journal = Journal(path)
    try:
        return journal.open()
    finally:
        journal.close()


def test_records_survive_reopening(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.log")
    journal.open()
    journal.append([("a", b"1"), ("b", None), ("c", b"\xff\x00binary")])
    journal.close()
    assert read_all(tmp_path / "j.log") == [("a", b"1"), ("b", None), ("c", b"\xff\x00binary")]


def test_a_torn_last_record_is_dropped_with_a_warning_and_cut_off(tmp_path: Path) -> None:
    path = tmp_path / "j.log"
    journal = Journal(path)
    journal.open()
    journal.append([("a", b"1")])
    journal.close()
    with path.open("ab") as f:
        f.write(b'{"key":"b","val')  # the process died mid-write
    reopened = Journal(path)
    with capture_logs() as logs:
        assert reopened.open() == [("a", b"1")]
    assert [e["event"] for e in logs] == ["journal.torn_record_dropped"]
    reopened.append([("c", b"3")])
    reopened.close()
    assert read_all(path) == [("a", b"1"), ("c", b"3")]


def test_a_key_with_a_lone_surrogate_reads_back(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.log")
    journal.open()
    journal.append([("connector-\ud800", b"1")])
    journal.close()
    assert read_all(tmp_path / "j.log") == [("connector-\ud800", b"1")]


def test_an_unreadable_middle_line_is_skipped_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "j.log"
    path.write_bytes(b'{"key":"a","value":"1"}\nGARBAGE\n{"key":"b","value":null}\n')
    journal = Journal(path)
    assert journal.open() == [("a", b"1"), ("b", None)]
    assert journal.skipped == 1
    journal.close()


async def test_file_config_log_replays_entries_in_order_after_reopen(tmp_path: Path) -> None:
    log = FileConfigLog(tmp_path / "config.log")
    await log.open()
    assert await log.end_offset() == 0
    assert await log.append([("connector-a", b"{}"), ("connector-b", None)]) == 1
    await log.close()
    again = FileConfigLog(tmp_path / "config.log")
    await again.open()
    assert await again.end_offset() == 2
    seen = []
    async for entry in again.entries():
        seen.append((entry.offset, entry.key, entry.value))
        if len(seen) == 2:
            break
    assert seen == [(0, "connector-a", b"{}"), (1, "connector-b", None)]
    await again.close()


def test_compaction_keeps_offsets_and_appends_continue_after_the_highest(tmp_path: Path) -> None:
    path = tmp_path / "j.log"
    journal = Journal(path)
    journal.replay()
    journal.append([("a", b"1"), ("b", b"1"), ("a", b"2"), ("c", b"1")])
    since = journal.mark()
    journal.append([("b", b"2")])  # appended while the compaction runs: the tail
    journal.compact([(1, "b", b"1"), (2, "a", b"2"), (3, "c", b"1")], since)
    assert journal.append([("d", b"1")]) == 5
    journal.close()
    again = Journal(path)
    assert again.replay() == [(1, "b", b"1"), (2, "a", b"2"), (3, "c", b"1"), (4, "b", b"2"), (5, "d", b"1")]
    assert again.end == 6
    again.close()
    assert not (tmp_path / "j.log.compacting").exists()


def test_only_gaps_name_an_offset_so_older_versions_read_the_same_keys_and_values(tmp_path: Path) -> None:
    path = tmp_path / "j.log"
    journal = Journal(path)
    journal.replay()
    journal.append([("a", b"1"), ("a", b"2"), ("b", b"\xff")])
    journal.compact([(1, "a", b"2"), (2, "b", b"\xff")], journal.mark())
    journal.close()
    lines = [json.loads(line) for line in path.read_bytes().splitlines()]
    assert lines == [{"offset": 1, "key": "a", "value": "2"}, {"key": "b", "value_b64": "/w=="}]


def test_a_leftover_compaction_file_is_removed_on_open(tmp_path: Path) -> None:
    (tmp_path / "j.log.compacting").write_bytes(b'{"key":"half')
    journal = Journal(tmp_path / "j.log")
    assert journal.replay() == []
    journal.close()
    assert not (tmp_path / "j.log.compacting").exists()


def test_a_line_whose_offset_goes_backwards_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "j.log"
    path.write_bytes(b'{"offset":5,"key":"a","value":"1"}\n{"offset":3,"key":"b","value":"1"}\n'
                     b'{"key":"c","value":"1"}\n')
    journal = Journal(path)
    assert journal.replay() == [(5, "a", b"1"), (6, "c", b"1")]
    assert journal.skipped == 1
    journal.close()


@pytest.mark.parametrize("step", STEPS)
def test_a_compaction_stopped_at_any_step_loses_nothing(tmp_path: Path, step: str) -> None:
    path = tmp_path / "j.log"
    journal = Journal(path)
    journal.replay()
    journal.append([("a", b"1"), ("b", b"1"), ("a", b"2")])
    since = journal.mark()
    journal.append([("b", None), ("c", b"1")])
    whole = [(0, "a", b"1"), (1, "b", b"1"), (2, "a", b"2"), (3, "b", None), (4, "c", b"1")]
    compacted = [(1, "b", b"1"), (2, "a", b"2"), (3, "b", None), (4, "c", b"1")]
    with pytest.raises(Crash):
        journal.compact([(1, "b", b"1"), (2, "a", b"2")], since, crash_at(step))
    after_rename = STEPS.index(step) > STEPS.index("rename")
    assert journal.append([("d", b"1")]) == 5  # the journal stays usable, in whichever file is current
    journal.close()
    again = Journal(path)
    assert again.replay() == [*(compacted if after_rename else whole), (5, "d", b"1")]
    again.close()
