"""Compaction of the status and offset files: sized by the live state, crash-safe at every step."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from engine.journal.file import STEPS
from engine.storage.offsets import FileOffsetStore
from engine.storage.status import FileStatusStore, Status, TopicStatus
from tests.crash import Crash, crash_at

FLOOR = 4096


def write_history(path: Path, updates: int, keys: int) -> None:
    """An offsets file as a worker that never compacted leaves it: one line per update."""
    line = '{"key":"[\\"c\\",{\\"p\\":%d}]","value":"{\\"pos\\": %d}"}\n'
    path.write_text("".join(line % (n % keys, n) for n in range(updates)))


def offsets_of(store: FileOffsetStore, keys: int) -> dict[int, Any]:
    return {p: store.get("c", {"p": p}) for p in range(keys)}


async def test_start_up_reads_the_live_offsets_not_the_history(tmp_path: Path) -> None:
    """1M updates to 100 partitions open like 100 updates, once the first open compacted them."""
    old, young = tmp_path / "old.offsets", tmp_path / "young.offsets"
    write_history(old, 1_000_000, 100)
    write_history(young, 100, 100)
    before = old.stat().st_size
    first = FileOffsetStore(old)
    await first.open()  # reads the history once, and compacts it
    assert first.file.journal.lines_read == 1_000_000
    expected = {p: {"pos": 999_900 + p} for p in range(100)}
    assert offsets_of(first, 100) == expected
    await first.close()
    sizes = {}
    for path in (old, young):
        store = FileOffsetStore(path)
        await store.open()
        assert store.file.journal.lines_read == 100
        sizes[path] = path.stat().st_size
        await store.close()
    assert before > 50_000_000
    assert sizes[old] < 7_000
    assert sizes[young] < 7_000
    again = FileOffsetStore(old)
    await again.open()
    assert offsets_of(again, 100) == expected
    await again.close()


async def test_a_young_file_is_not_rewritten_at_open(tmp_path: Path) -> None:
    path = tmp_path / "offsets"
    write_history(path, 150, 100)
    before = path.read_bytes()
    store = FileOffsetStore(path, floor=0)  # 150 lines for 100 keys: less than twice the live size
    await store.open()
    await store.close()
    assert path.read_bytes() == before


async def test_the_offsets_file_stays_within_twice_its_live_size_plus_the_floor(tmp_path: Path) -> None:
    path = tmp_path / "offsets"
    store = FileOffsetStore(path, fsync=False, floor=FLOOR)
    await store.open()
    largest = 0
    for n in range(20_000):
        store.put("c", {json.dumps({"p": n % 50}): {"pos": n}})
        largest = max(largest, path.stat().st_size)
        await store.file.settle()  # one flush at a time: the compaction it started has run
    await store.file.compact()
    live = path.stat().st_size
    await store.close()
    assert 50 * 40 < live < 50 * 60
    assert largest <= 2 * live + FLOOR + 60  # plus the line that made it due
    again = FileOffsetStore(path)
    await again.open()
    assert again.file.journal.lines_read == 50
    assert again.get("c", {"p": 7}) == {"pos": 19_957}
    await again.close()


async def test_appends_go_on_while_a_compaction_writes(tmp_path: Path) -> None:
    path = tmp_path / "offsets"
    store = FileOffsetStore(path)
    await store.open()
    store.put("c", {json.dumps({"p": 0}): {"pos": 0}})
    writing, go_on = threading.Event(), threading.Event()

    def hold(step: str) -> None:
        if step == "write":
            writing.set()
            go_on.wait(10)

    compaction = asyncio.ensure_future(store.file.compact(hold))
    await asyncio.to_thread(writing.wait, 10)
    store.put("c", {json.dumps({"p": 1}): {"pos": 1}})  # not held back by the compaction
    assert not compaction.done()
    go_on.set()
    await compaction
    store.put("c", {json.dumps({"p": 2}): {"pos": 2}})
    await store.close()
    again = FileOffsetStore(path)
    await again.open()
    assert offsets_of(again, 3) == {0: {"pos": 0}, 1: {"pos": 1}, 2: {"pos": 2}}
    await again.close()


async def test_the_status_file_keeps_one_record_per_live_status(tmp_path: Path) -> None:
    path = tmp_path / "status"
    store = FileStatusStore(path, floor=FLOOR)
    await store.open()
    for n in range(5_000):
        store.put_connector("gone", Status("RUNNING", "w1", n))
        store.put_task("gone", n % 3, Status("RUNNING", "w1", n))
        store.put_connector("kept", Status("RUNNING" if n % 2 else "PAUSED", "w1", n))
        store.put_topic(TopicStatus(f"topic-{n % 4}", "kept", 0, n))
        if n % 10 == 0:
            await asyncio.sleep(0)
    store.remove_connector("gone")
    await store.file.compact()
    await store.close()
    assert len(path.read_bytes().splitlines()) == 1 + 4  # "kept" and its four topics; no tombstones
    again = FileStatusStore(path)
    await again.open()
    assert again.connector("kept") == Status("RUNNING", "w1", 4_999)
    assert again.connector("gone") is None
    assert again.tasks("gone") == {}
    assert again.topics("kept") == ["topic-0", "topic-1", "topic-2", "topic-3"]
    await again.close()


@pytest.mark.parametrize("step", STEPS)
async def test_an_offsets_compaction_killed_at_any_step_loses_nothing(tmp_path: Path, step: str) -> None:
    path = tmp_path / "offsets"
    store = FileOffsetStore(path)
    await store.open()
    for n in range(30):
        store.put("c", {json.dumps({"p": n % 3}): {"pos": n}})
    store.put("c", {json.dumps({"p": 1}): None})
    with pytest.raises(Crash):
        await store.file.compact(crash_at(step))
    store.put("c", {json.dumps({"p": 3}): {"pos": 30}})  # after the crash point: in whichever file is current
    await store.close()  # writes nothing: the file is as the kill left it
    again = FileOffsetStore(path)
    await again.open()
    assert offsets_of(again, 4) == {0: {"pos": 27}, 1: None, 2: {"pos": 29}, 3: {"pos": 30}}
    await again.close()
    assert not (tmp_path / "offsets.compacting").exists()


@pytest.mark.parametrize("step", STEPS)
async def test_a_status_compaction_killed_at_any_step_loses_nothing(tmp_path: Path, step: str) -> None:
    path = tmp_path / "status"
    store = FileStatusStore(path)
    await store.open()
    for n in range(10):
        store.put_connector("c", Status("RUNNING", "w1", n))
        store.put_task("c", n % 2, Status("FAILED", "w1", n, trace="boom"))
    store.remove_task("c", 1)
    with pytest.raises(Crash):
        await store.file.compact(crash_at(step))
    store.put_task("c", 2, Status("RUNNING", "w2", 10))
    await store.close()
    again = FileStatusStore(path)
    await again.open()
    assert again.connector("c") == Status("RUNNING", "w1", 9)
    assert again.tasks("c") == {0: Status("FAILED", "w1", 8, trace="boom"), 2: Status("RUNNING", "w2", 10)}
    await again.close()
