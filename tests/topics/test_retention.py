"""Retention, compaction and segment files of the in-process topics, under Kafka's topic configs.

Time is a fake clock handed to ``MemoryTopics``; ``maintain()`` runs what the periodic check runs.
The file form writes segments at checkpoints, every ``journal_bytes`` journaled (small here).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from engine import Engine
from engine.errors import ConfigError
from engine.testing import eventually
from engine.topics import MemoryTopics, TopicPartition, TopicsError
from engine.topics.log_config import LogConfig, retention_check_interval_ms, worker_defaults
from engine.topics.segment import FileSegment
from tests.topics.contract import read

T0 = 1_700_000_000_000
TP = TopicPartition("t", 0)
SMALL = {"segment.bytes": "600"}  # about a dozen short records per segment, in memory and in a file
JOURNAL_BYTES = 2000


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> int:
        return self.now


def make(path: Path | None, clock: Clock, **kwargs: object) -> MemoryTopics:
    return MemoryTopics(path, clock=clock, retention_check_interval_ms=0, journal_bytes=JOURNAL_BYTES,
                        **kwargs)  # type: ignore[arg-type]


@contextlib.asynccontextmanager
async def opened(path: Path | None, clock: Clock, **kwargs: object) -> AsyncIterator[MemoryTopics]:
    store = make(path, clock, **kwargs)
    await store.open()
    try:
        yield store
    finally:
        await store.close()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture(params=["memory", "file"])
def path(request: pytest.FixtureRequest, tmp_path: Path) -> Path | None:
    return tmp_path / "topics.jsonl" if request.param == "file" else None


@pytest.fixture
async def topics(path: Path | None, clock: Clock) -> AsyncIterator[MemoryTopics]:
    async with opened(path, clock) as store:
        yield store


async def send(topics: MemoryTopics, count: int, *, key: bytes | None = None, tag: str = "v") -> list[int]:
    producer = topics.producer()
    return [(await producer.send(TP.topic, key, f"{tag}{i}".encode())).offset for i in range(count)]


def offsets(topics: MemoryTopics) -> list[int]:
    return [record.offset for record in topics.records(TP)]


def segment_files(path: Path) -> list[str]:
    return sorted(p.name for p in (Path(f"{path}.segments") / "t-0").iterdir())


async def test_time_retention_drops_expired_segments_and_moves_the_log_start(
        topics: MemoryTopics, clock: Clock) -> None:
    await topics.create_topic("t", configs={**SMALL, "retention.ms": "10000"})
    await send(topics, 30, tag="old")
    clock.now += 6_000
    await send(topics, 30, tag="new")
    clock.now += 6_000  # the first 30 are 12 s old, the last 30 are 6 s old
    await topics.maintain()
    start = topics.partition_log(TP).start
    assert 0 < start <= 30  # whole segments of old records went; the one holding offset 30 stays
    assert offsets(topics) == list(range(start, 60))
    assert all(r.value.startswith(b"new") for r in topics.records(TP) if r.offset >= 30)  # type: ignore[union-attr]

    clock.now += 10_000
    await topics.maintain()
    assert topics.partition_log(TP).start == 60
    assert offsets(topics) == []
    assert await send(topics, 1) == [60]  # offsets are never handed out twice


async def test_size_retention_keeps_at_least_retention_bytes_and_drops_whole_segments(
        topics: MemoryTopics) -> None:
    await topics.create_topic("t", configs={**SMALL, "retention.bytes": "1500"})
    await send(topics, 200)
    await topics.maintain()
    partition = topics.partition_log(TP)
    assert partition.size() >= 1500
    assert partition.size() - partition.segments[0].size < 1500  # one segment less would be too little
    assert offsets(topics) == list(range(partition.start, 200))
    assert partition.start == partition.segments[0].base


async def test_retention_deletes_segment_files_whole(tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / "topics.jsonl"
    async with opened(path, clock) as topics:
        await topics.create_topic("t", configs={**SMALL, "retention.ms": "10000"})
        await send(topics, 100)
        clock.now += 6_000
        await send(topics, 50)
        before = {name: (Path(f"{path}.segments") / "t-0" / name).stat() for name in segment_files(path)}
        clock.now += 6_000
        await topics.maintain()
        after = segment_files(path)
        partition = topics.partition_log(TP)
        assert len(after) < len(before)
        assert set(after) < set(before)
        assert after == [f"{segment.base:020d}.jsonl" for segment in partition.segments]
        for name in after:  # and none was rewritten
            stat = (Path(f"{path}.segments") / "t-0" / name).stat()
            assert (stat.st_ino, stat.st_size, stat.st_mtime_ns) == (
                before[name].st_ino, before[name].st_size, before[name].st_mtime_ns)


async def test_compaction_keeps_the_latest_value_of_each_key_at_its_offset(topics: MemoryTopics) -> None:
    await topics.create_topic("t", configs={**SMALL, "cleanup.policy": "compact"})
    sent: dict[int, tuple[bytes, bytes]] = {}
    producer = topics.producer()
    for round_ in range(12):
        for k in range(5):
            key, value = f"k{k}".encode(), f"k{k}-{round_}".encode()
            sent[(await producer.send("t", key, value)).offset] = (key, value)
    assert await topics.create_topic("t") is False
    await topics.maintain()
    partition = topics.partition_log(TP)
    latest = {key: offset for offset, (key, _) in sorted(sent.items())}
    active = partition.segments[-1].base  # the newest segment (and unflushed records) are not compacted
    expected = sorted(set(latest.values()) | {offset for offset in sent if offset >= active})
    records = topics.records(TP)
    assert [r.offset for r in records] == expected
    assert all(sent[r.offset] == (r.key, r.value) for r in records)
    assert {r.key: r.value for r in records} == {key: sent[offset][1] for key, offset in latest.items()}
    consumer = await topics.consumer("g", ["t"])
    assert [r.offset for r in await read(consumer, len(expected))] == expected  # gaps are skipped, not renumbered


async def test_a_tombstone_stays_until_delete_retention_ms(topics: MemoryTopics, clock: Clock) -> None:
    await topics.create_topic("t", configs={**SMALL, "cleanup.policy": "compact", "delete.retention.ms": "1000",
                                            "min.cleanable.dirty.ratio": "0"})
    producer = topics.producer()
    await producer.send("t", b"gone", b"value")
    tombstone = (await producer.send("t", b"gone", None)).offset
    await send(topics, 40, key=b"filler")
    await topics.maintain()
    kept = {r.key: (r.offset, r.value) for r in topics.records(TP)}
    assert kept[b"gone"] == (tombstone, None)  # the value went, the tombstone is kept for readers to see

    clock.now += 2_000
    await send(topics, 40, key=b"filler")
    await topics.maintain()
    assert b"gone" not in {r.key for r in topics.records(TP)}


async def test_a_compacted_topic_refuses_a_record_without_a_key(topics: MemoryTopics) -> None:
    await topics.create_topic("t", configs={"cleanup.policy": "compact,delete"})
    with pytest.raises(TopicsError, match="Compacted topic cannot accept message without key"):
        await topics.producer().send("t", None, b"v")


async def test_a_restart_reads_back_what_retention_kept_with_the_same_offsets(tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / "topics.jsonl"
    first = make(path, clock)
    await first.open()
    # one segment by time (segment.ms): records still in the tail expire with the segment they join at the checkpoint
    await first.create_topic("t", configs={**SMALL, "retention.ms": "10000", "segment.ms": "604800000",
                                           "cleanup.policy": "compact,delete"})
    await send(first, 50, key=b"a")
    clock.now += 20_000
    for i in range(50):
        await first.producer().send("t", f"k{i % 7}".encode(), f"{i}".encode())
    await first.maintain()
    kept = [(r.offset, r.key, r.value, r.timestamp) for r in first.records(TP)]
    start, end = first.partition_log(TP).start, first.partition_log(TP).next
    assert start > 0
    assert len(kept) < end - start
    await first.close()

    second = make(path, clock)
    await second.open()
    try:
        assert [(r.offset, r.key, r.value, r.timestamp) for r in second.records(TP)] == kept
        assert (second.partition_log(TP).start, second.partition_log(TP).next) == (start, end)
        assert (await second.producer().send("t", b"k", b"after")).offset == end
    finally:
        await second.close()


async def test_a_crash_mid_compaction_or_mid_checkpoint_loses_nothing_acknowledged(
        tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / "topics.jsonl"
    topics = make(path, clock)
    await topics.open()
    await topics.create_topic("t", configs={**SMALL, "cleanup.policy": "compact"})
    acked = {}
    for i in range(80):
        meta = await topics.producer().send("t", f"k{i}".encode(), f"{i}".encode())  # distinct keys: all kept
        acked[meta.offset] = f"{i}".encode()
    topics.partition_log(TP).flush(clock())  # a checkpoint wrote the segment files, then died before the journal
    await topics.close()
    directory = Path(f"{path}.segments") / "t-0"
    newest = max(directory.iterdir())
    (directory / f"{min(directory.iterdir()).name}.tmp").write_bytes(b'{"o":0,"ts":1,"k":"')  # a compaction's half-written file
    with newest.open("ab") as f:
        f.write(b'{"o":999,"ts":1,"k":null,"v":"eA=')  # a torn append to the newest segment
    Path(f"{path}.tmp").write_bytes(b'{"key":"topic","val')  # a journal rewrite that died half-way

    reopened = make(path, clock)
    with capture_logs() as logs:
        await reopened.open()
    try:
        assert {r.offset: r.value for r in reopened.records(TP)} == acked  # each exactly once
        assert not [p for p in directory.iterdir() if p.name.endswith(".tmp")]
        assert not Path(f"{path}.tmp").exists()
        assert {"topics.segment_temp_file_removed", "topics.segment_torn_tail_cut"} <= {e["event"] for e in logs}
        assert (await reopened.producer().send("t", b"k", b"next")).offset == 80
    finally:
        await reopened.close()


_WRITER = """
import asyncio, sys
from engine.topics import MemoryTopics

async def main():
    topics = MemoryTopics(sys.argv[1], journal_bytes=3000, retention_check_interval_ms=0)
    await topics.open()
    await topics.create_topic("t", configs={"segment.bytes": "800", "cleanup.policy": "compact",
                                            "min.cleanable.dirty.ratio": "0"})
    producer = topics.producer()
    for i in range(100000):
        meta = await producer.send("t", f"k{i}".encode(), f"v{i}".encode())
        print("ack", meta.offset, flush=True)
        if i % 40 == 0:
            await topics.maintain()

asyncio.run(main())
"""


async def test_kill_9_loses_nothing_acknowledged(tmp_path: Path) -> None:
    path = tmp_path / "topics.jsonl"
    root = Path(__file__).resolve().parents[2]
    acked: list[int] = []
    with subprocess.Popen([sys.executable, "-c", _WRITER, str(path)], stdout=subprocess.PIPE,
                          env={**os.environ, "PYTHONPATH": str(root)}, cwd=root) as writer:
        assert writer.stdout is not None
        while len(acked) < 600:
            if (line := writer.stdout.readline()).startswith(b"ack "):
                acked.append(int(line.split()[1]))
        writer.send_signal(signal.SIGKILL)
        acked += [int(line.split()[1]) for line in writer.stdout.read().splitlines()  # acknowledged before it died
                  if line.startswith(b"ack ")]
    topics = MemoryTopics(path, retention_check_interval_ms=0)
    await topics.open()
    try:
        records = {r.offset: r.value for r in topics.records(TP)}  # distinct keys: compaction drops none
        assert all(records.get(offset) == f"v{offset}".encode() for offset in acked)
        assert topics.partition_log(TP).next >= len(acked)
    finally:
        await topics.close()


async def test_a_consumer_below_the_log_start_resets_with_a_warning(topics: MemoryTopics) -> None:
    await topics.create_topic("t", configs={**SMALL, "retention.bytes": "600"})
    await send(topics, 10)
    early = await topics.consumer("g", ["t"])
    await read(early, 10)
    await early.commit({TP: 3})
    await early.close()
    await send(topics, 100)
    await topics.maintain()
    start = topics.partition_log(TP).start
    assert start > 3

    with capture_logs() as logs:
        again = await topics.consumer("g", ["t"])
        records = await read(again, 110 - start)
    assert records[0].offset == start
    warning = next(e for e in logs if e["event"] == "topics.offset_out_of_range")
    assert warning["log_level"] == "warning"
    assert (warning["topic"], warning["partition"], warning["offset"], warning["log_start_offset"]) == ("t", 0, 3, start)
    again.seek(TP, 0)  # a rewind below the start resets too
    assert await again.position(TP) == start
    await again.close()

    latest = await topics.consumer("g", ["t"], auto_offset_reset="latest")  # the group's commit is still 3
    await latest.getmany(timeout_ms=100)
    assert await latest.position(TP) == 110
    with pytest.raises(TopicsError):
        await topics.consumer("g2", ["t"], auto_offset_reset="none")


async def test_identical_commits_do_not_grow_the_journal_and_a_checkpoint_keeps_the_latest(
        tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / "topics.jsonl"
    topics = make(path, clock)
    await topics.open()
    await topics.create_topic("t")
    await send(topics, 3)
    consumer = await topics.consumer("g", ["t"])
    await read(consumer, 3)
    await consumer.commit({TP: 3})
    size = path.stat().st_size
    for _ in range(100):
        await consumer.commit({TP: 3})  # an idle sink at every offset.flush.interval.ms
    assert path.stat().st_size == size
    for offset in range(200):
        await consumer.commit({TP: offset})  # moving commits: the journal is checkpointed to the latest
    assert path.stat().st_size < JOURNAL_BYTES + 200
    await topics.close()
    commits = [line for line in path.read_text().splitlines() if '"key":"commit"' in line]
    assert len(commits) <= JOURNAL_BYTES // 40
    assert '[[\\"t\\",0,199]]' in commits[-1]
    reopened = make(path, clock)
    await reopened.open()
    assert reopened.committed("g", TP) == 199
    await reopened.close()


async def test_memory_holds_only_what_the_journal_or_retention_keeps(tmp_path: Path, clock: Clock) -> None:
    filed = make(tmp_path / "topics.jsonl", clock)
    await filed.open()
    await filed.create_topic("t")  # Kafka's defaults: 7 days, unlimited bytes
    await send(filed, 3000, tag="x" * 100)
    assert filed.partition_log(TP).held() <= JOURNAL_BYTES // 100  # the rest is read back from segment files
    assert len(filed.records(TP)) == 3000
    assert (tmp_path / "topics.jsonl").stat().st_size < JOURNAL_BYTES + 300
    await filed.close()

    in_memory = make(None, clock)
    await in_memory.open()
    await in_memory.create_topic("t", configs={"retention.bytes": "20000", "segment.bytes": "5000"})
    await send(in_memory, 3000, tag="x" * 100)
    partition = in_memory.partition_log(TP)
    assert partition.size() <= 20000 + 2 * 5000  # checked at each roll: one full segment may come on top
    assert partition.held() <= 30000 // 100
    await in_memory.close()


async def test_a_journal_from_before_segments_is_moved_into_them_on_open(tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / "topics.jsonl"
    old = MemoryTopics(path, clock=clock, journal_bytes=1 << 40, retention_check_interval_ms=0)  # never checkpoints
    await old.open()
    await old.create_topic("t")
    await send(old, 100)
    await old.close()
    assert path.stat().st_size > JOURNAL_BYTES

    topics = make(path, clock)
    await topics.open()
    try:
        assert path.stat().st_size < 500
        assert segment_files(path)
        assert [r.value for r in topics.records(TP)] == [f"v{i}".encode() for i in range(100)]
    finally:
        await topics.close()


def test_a_file_segment_finds_any_offset_by_binary_search(tmp_path: Path) -> None:
    from engine.topics.base import ConsumedRecord

    segment = FileSegment.new(tmp_path, "t", 0, 1000)
    records = [ConsumedRecord("t", 0, 1000 + i, None, b"x" * (i % 97), (), T0 + i) for i in range(3000)]
    assert segment.fill(records, 1 << 30) == 3000
    for offset in range(990, 4010, 37):
        expected = list(range(max(offset, 1000), 4000))[:3]
        assert [r.offset for r in segment.read(offset, 3)] == expected
    loaded = FileSegment.load(segment.path, "t", 0)
    assert loaded is not None
    assert (loaded.base, loaded.end, loaded.size) == (1000, 4000, segment.size)
    assert (loaded.first_ts, loaded.max_ts) == (T0, T0 + 2999)


def test_a_damaged_segment_line_costs_that_record_only(tmp_path: Path) -> None:
    from engine.topics.base import ConsumedRecord

    segment = FileSegment.new(tmp_path, "t", 0, 0)
    segment.fill([ConsumedRecord("t", 0, i, None, b"v", (), T0 + i) for i in range(5)], 1 << 30)
    lines = segment.path.read_bytes().splitlines(keepends=True)
    segment.path.write_bytes(b"garbage\n" + b"".join(lines[1:3]) + b'{"o":3,"ts":\n' + lines[4])
    with capture_logs() as logs:
        loaded = FileSegment.load(segment.path, "t", 0)
        assert loaded is not None
        assert [r.offset for r in loaded.read(0, 10)] == [1, 2, 4]
    assert (loaded.first_ts, loaded.end, loaded.max_ts) == (T0 + 1, 5, T0 + 4)
    assert {e["event"] for e in logs} == {"topics.segment_line_skipped"}
    segment.path.write_bytes(b"garbage\n")
    assert FileSegment.load(segment.path, "t", 0) is None
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"{0:020d}.jsonl.corrupt"]


# ---- settings ---------------------------------------------------------------------------------


def test_topic_configs_use_kafkas_names_and_defaults() -> None:
    config = LogConfig.parse({})
    assert (config.retention_ms, config.retention_bytes, config.delete, config.compact) == (604800000, -1, True, False)
    assert (config.segment_bytes, config.segment_ms, config.delete_retention_ms) == (64 << 20, 604800000, 86400000)
    both = LogConfig.parse({"cleanup.policy": "compact, delete"}, {"retention.ms": "5", "segment.bytes": "100"})
    assert (both.delete, both.compact, both.retention_ms, both.segment_bytes) == (True, True, 5, 100)
    for bad in ({"retention.ms": "-2"}, {"segment.bytes": "13"}, {"cleanup.policy": "forever"},
                {"retention.bytes": "lots"}, {"min.cleanable.dirty.ratio": "2"}):
        with pytest.raises(TopicsError, match="Invalid value"):
            LogConfig.parse(bad)


def test_worker_defaults_are_the_topics_keys() -> None:
    assert worker_defaults({"topics.retention.ms": "1000", "topics.retention.bytes": "-1",
                            "topics.segment.bytes": "4096", "retention.ms": "9"}) == {
        "retention.ms": "1000", "retention.bytes": "-1", "segment.bytes": "4096"}
    with pytest.raises(ConfigError, match=r"topics\.segment\.bytes") as refused:
        worker_defaults({"topics.segment.bytes": "tiny"})
    assert "topics.segment.bytes" in refused.value.errors


async def test_the_engine_gives_its_topics_the_worker_defaults(tmp_path: Path) -> None:
    engine = Engine({"topics.retention.ms": "60000", "topics.retention.bytes": "1048576"})
    assert isinstance(engine.topics, MemoryTopics)
    assert engine.topics.topic_defaults == {"retention.ms": "60000", "retention.bytes": "1048576"}
    with pytest.raises(ConfigError):
        Engine({"topics.retention.bytes": "much"})


async def test_per_topic_configs_win_over_the_defaults_and_bad_ones_are_refused(clock: Clock) -> None:
    topics = make(None, clock, topic_defaults={"retention.ms": "1000"})
    await topics.open()
    try:
        await topics.producer().send("auto", None, b"v")  # auto-created: the defaults
        await topics.create_topic("own", configs={"retention.ms": "-1"})
        assert topics.partition_log(TopicPartition("auto", 0)).config.retention_ms == 1000
        assert topics.partition_log(TopicPartition("own", 0)).config.retention_ms == -1
        with pytest.raises(TopicsError, match=r"retention\.bytes"):
            await topics.create_topic("bad", configs={"retention.bytes": "x"})
        assert "bad" not in await topics.list_topics()
    finally:
        await topics.close()


async def test_the_periodic_check_applies_retention_without_being_asked(clock: Clock) -> None:
    topics = MemoryTopics(clock=clock, retention_check_interval_ms=20)
    await topics.open()
    try:
        await topics.create_topic("t", configs={**SMALL, "retention.ms": "1000"})
        await send(topics, 40)
        clock.now += 5_000
        for _ in range(100):
            if topics.partition_log(TP).start == 40:
                break
            await asyncio.sleep(0.02)
        assert topics.partition_log(TP).start == 40
    finally:
        await topics.close()


# ---- a set retention bounds the disk by itself --------------------------------------------------


def test_a_set_retention_rolls_segments_every_tenth_of_it() -> None:
    assert LogConfig.parse({}).segment_ms == 604800000  # Kafka's, while retention is Kafka's
    assert LogConfig.parse({}, {"retention.ms": "60000"}).segment_ms == 6000  # the worker's topics.retention.ms
    assert LogConfig.parse({"retention.ms": "60000"}).segment_ms == 6000
    assert LogConfig.parse({"retention.ms": "100"}).segment_ms == 1000  # at least a second
    assert LogConfig.parse({"retention.ms": "-1"}).segment_ms == 604800000
    assert LogConfig.parse({"retention.ms": "60000", "segment.ms": "50000"}).segment_ms == 50000
    assert LogConfig.parse({}, {"retention.ms": "60000", "segment.ms": "50000"}).segment_ms == 50000
    assert LogConfig.parse({"retention.ms": "60000", "cleanup.policy": "compact"}).segment_ms == 604800000


def test_the_retention_check_interval_follows_the_workers_retention() -> None:
    assert retention_check_interval_ms({}) == 300_000  # Kafka's log.retention.check.interval.ms
    assert retention_check_interval_ms({"topics.retention.ms": "60000"}) == 6000
    assert retention_check_interval_ms({"topics.retention.ms": "600"}) == 1000
    assert retention_check_interval_ms({"topics.retention.ms": "604800000"}) == 300_000
    assert retention_check_interval_ms({"topics.retention.ms": "60000",
                                        "topics.retention.check.interval.ms": "250"}) == 250
    for bad in ("0", "soon"):
        with pytest.raises(ConfigError, match=r"topics\.retention\.check\.interval\.ms") as refused:
            retention_check_interval_ms({"topics.retention.check.interval.ms": bad})
        assert "topics.retention.check.interval.ms" in refused.value.errors
    with pytest.raises(ConfigError):
        Engine({"topics.retention.check.interval.ms": "-5"})


@pytest.mark.parametrize("in_file", [False, True])
async def test_with_only_topics_retention_ms_set_the_disk_follows_the_retention(
        tmp_path: Path, clock: Clock, in_file: bool) -> None:
    """The worker sets only ``topics.retention.ms`` (10 s); records arrive for 100 s of the topics' clock.
    Before, the one segment never rolled (``segment.ms`` 7 days) and nothing was ever dropped."""
    path = tmp_path / "topics.jsonl" if in_file else None
    topics = MemoryTopics(path, clock=clock, retention_check_interval_ms=0, journal_bytes=2000,
                          topic_defaults=worker_defaults({"topics.retention.ms": "10000"}))
    await topics.open()
    try:
        for second in range(100):
            await send(topics, 5, tag=f"s{second}-")
            clock.now += 1000
            await topics.maintain()
        kept = topics.records(TP)
        oldest = min(r.timestamp for r in kept)
        assert clock.now - oldest <= 10_000 + 1000 + 1000  # the window, one segment's span, one check
        assert topics.partition_log(TP).start >= 5 * (100 - 13)
        if path is not None:
            on_disk = sum(f.stat().st_size for f in Path(f"{path}.segments").rglob("*") if f.is_file())
            assert on_disk < 5 * 13 * 100  # about 13 s of ~60-byte lines, not 100 s
    finally:
        await topics.close()


async def test_the_engine_checks_retention_as_often_as_its_retention_asks(tmp_path: Path) -> None:
    async with Engine({"topics.retention.ms": "2000"}) as engine:
        assert isinstance(engine.topics, MemoryTopics)
        await engine.topics.create_topic("t", 1)
        producer = engine.topics.producer()
        memory = engine.topics
        assert isinstance(memory, MemoryTopics)

        async def dropped() -> bool:  # real time: records keep arriving; retention runs by itself
            await producer.send("t", None, b"x")
            return memory.partition_log(TopicPartition("t", 0)).start > 0

        await eventually(dropped, timeout=30, interval=0.05, message="retention dropped the oldest segment")
