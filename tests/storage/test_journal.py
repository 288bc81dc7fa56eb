"""The append-only journal behind the file log and stores: durable, torn tails cut, never a crash."""

from __future__ import annotations

from pathlib import Path

from structlog.testing import capture_logs

from engine.configlog.file import FileConfigLog
from engine.storage.journal import Journal


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
