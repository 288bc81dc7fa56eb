"""A sink whose position is beyond its partition's log end (the log lost records it consumed) notices,
applies ``auto.offset.reset`` and says so, instead of skipping the records written below it."""

from __future__ import annotations

from pathlib import Path

import structlog

from engine import Engine
from engine.testing import eventually
from engine.topics.memory import MemoryTopics


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


async def test_a_log_that_lost_records_is_read_again_from_its_start(tmp_path: Path) -> None:
    topics = MemoryTopics()
    out = tmp_path / "out.txt"
    async with Engine({"offset.flush.interval.ms": "100"}, topics=topics) as engine:
        await topics.create_topic("lines")
        producer = topics.producer()
        for n in range(5):
            await producer.send("lines", None, f"old-{n}".encode())
        await engine.create_connector("writer", {
            "connector.class": "FileStreamSink", "file": str(out), "topics": "lines",
            "value.converter": "org.apache.kafka.connect.storage.StringConverter"})
        await eventually(lambda: len(lines(out)) == 5, timeout=10, message="the first five delivered")
        with structlog.testing.capture_logs() as logged:
            # the broker came back with a shorter log: offsets 2..4 are gone, the sink sits at 5
            del topics.partition_logs("lines")[0][2:]  # type: ignore[index]
            await eventually(lambda: any(e["event"] == "task.offset_beyond_log_end" for e in logged), timeout=10,
                             message="the regression noticed")
            for n in range(3):  # new records land at offsets 2..4, below the old position
                await producer.send("lines", None, f"new-{n}".encode())
            await eventually(lambda: lines(out)[-3:] == ["new-0", "new-1", "new-2"], timeout=10,
                             message="the records written below the old position delivered")
        warning = next(e for e in logged if e["event"] == "task.offset_beyond_log_end")
        assert (warning["log_level"], warning["partition"], warning["position"], warning["log_end"]) == \
            ("warning", "lines-0", 5, 2)
        assert lines(out)[5:7] == ["old-0", "old-1"]  # auto.offset.reset=earliest: read again from the start
