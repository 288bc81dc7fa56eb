"""The FileStream pair end to end: lines flow file -> topic -> file, and a restarted worker neither
loses nor repeats a line (file-backed topics, offsets and config log)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from engine import Engine
from engine.api import Header, SourceRecord
from engine.testing import eventually
from tests.worker.probes import SINK, SINKS, SOURCE, SOURCES

STRINGS = {
    "value.converter": "org.apache.kafka.connect.storage.StringConverter",
    "key.converter": "org.apache.kafka.connect.storage.StringConverter",
}


@pytest.fixture(autouse=True)
def _fresh_probes() -> None:
    SOURCES.clear()
    SINKS.clear()


def worker(tmp_path: Path) -> dict[str, str]:
    return {
        "topics.storage.file.filename": str(tmp_path / "topics"),
        "offset.storage.file.filename": str(tmp_path / "offsets"),
        "config.storage.file.filename": str(tmp_path / "configs"),
        "offset.flush.interval.ms": "100",
        "task.shutdown.graceful.timeout.ms": "2000",
    }


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


async def test_lines_flow_between_files_and_resume_after_a_restart(tmp_path: Path) -> None:
    source_file, sink_file = tmp_path / "in.txt", tmp_path / "out.txt"
    source_file.write_text("one\ntwo\n")
    source = {"connector.class": "FileStreamSource", "file": str(source_file), "topic": "lines", **STRINGS}
    sink = {"connector.class": "FileStreamSink", "file": str(sink_file), "topics": "lines", **STRINGS}
    async with Engine(worker(tmp_path)) as engine:
        await engine.create_connector("reader", source)
        await engine.create_connector("writer", sink)
        await eventually(lambda: lines(sink_file) == ["one", "two"])
    with source_file.open("a") as f:
        f.write("three\n")
    async with Engine(worker(tmp_path)) as engine:
        await eventually(lambda: lines(sink_file) == ["one", "two", "three"])
        await engine.settled()
        assert lines(sink_file) == ["one", "two", "three"]


async def test_headers_and_sink_side_smts_reach_put() -> None:
    async with Engine({"task.shutdown.graceful.timeout.ms": "1000"}) as engine:
        await engine.create_connector("src", {"connector.class": SOURCE, **STRINGS})
        sink = {
            "connector.class": SINK,
            "topics": "events",
            **STRINGS,
            "transforms": "tag",
            "transforms.tag.type": "InsertHeader",
            "transforms.tag.header": "via",
            "transforms.tag.value.literal": "sink",
        }
        await engine.create_connector("snk", sink)
        await engine.wait_for_state("src", "RUNNING", tasks=1)
        SOURCES["src"].feed.put_nowait(
            [
                SourceRecord(
                    topic="events",
                    value="hello",
                    headers=(Header("n", 42),),
                    source_partition={"part": "p0"},
                    source_offset={"n": 1},
                )
            ]
        )
        await eventually(lambda: len(SINKS["snk"].received) == 1)
        record = SINKS["snk"].received[0]
        assert record.value == "hello"
        assert {h.key: h.value for h in record.headers} == {"n": 42, "via": "sink"}


async def test_an_idle_sink_does_not_grow_the_topics_file(tmp_path: Path) -> None:
    """Its commits every offset.flush.interval.ms repeat the same offsets: nothing to keep."""
    source_file, sink_file = tmp_path / "in.txt", tmp_path / "out.txt"
    source_file.write_text("one\ntwo\n")
    source = {"connector.class": "FileStreamSource", "file": str(source_file), "topic": "lines", **STRINGS}
    sink = {"connector.class": "FileStreamSink", "file": str(sink_file), "topics": "lines", **STRINGS}
    async with Engine({**worker(tmp_path), "offset.flush.interval.ms": "20"}) as engine:
        await engine.create_connector("reader", source)
        await engine.create_connector("writer", sink)
        await eventually(lambda: lines(sink_file) == ["one", "two"])
        await asyncio.sleep(0.2)  # the offsets of both lines are committed
        size = (tmp_path / "topics").stat().st_size
        await asyncio.sleep(0.5)  # about 25 more commits of the same offsets
        assert (tmp_path / "topics").stat().st_size == size
