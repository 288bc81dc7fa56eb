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
        # the committed position ends up past the log end (what a broker that lost records leaves;
        # here set through KIP-875 while the sink is stopped)
        await engine.stop_connector("writer")
        await engine.wait_for_state("writer", "STOPPED")
        await engine.alter_connector_offsets("writer", [{"partition": {"kafka_topic": "lines", "kafka_partition": 0},
                                                         "offset": {"kafka_offset": 9}}])
        with structlog.testing.capture_logs() as logged:
            await engine.resume_connector("writer")
            await eventually(lambda: any(e["event"] == "task.offset_beyond_log_end" for e in logged), timeout=10,
                             message="the regression noticed")
            for n in range(3):  # new records land at offsets 5..7, below the position 9
                await producer.send("lines", None, f"new-{n}".encode())
            await eventually(lambda: lines(out)[-3:] == ["new-0", "new-1", "new-2"], timeout=10,
                             message="the records written below the old position delivered")
        warning = next(e for e in logged if e["event"] == "task.offset_beyond_log_end")
        assert (warning["log_level"], warning["partition"], warning["position"], warning["log_end"]) == \
            ("warning", "lines-0", 9, 5)
        assert lines(out)[5:10] == [f"old-{n}" for n in range(5)]  # auto.offset.reset=earliest: from the start
