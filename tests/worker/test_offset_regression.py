"""A sink whose position is beyond its partition's log end (the log lost records it consumed) is
answered out of range by the log, applies ``auto.offset.reset`` and says so, instead of skipping the
records written below it."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
import structlog

from engine import Engine
from engine.testing import eventually
from engine.topics.memory import MemoryTopics
from tests.integration.brokers import Broker


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


@pytest.mark.parametrize("topics_on", ["memory", pytest.param("kafka", marks=pytest.mark.integration)])
async def test_a_log_that_lost_records_is_read_again_from_its_start(
    tmp_path: Path, topics_on: str, request: pytest.FixtureRequest
) -> None:
    """On Apache Kafka 4.1 the broker answers the fetch OFFSET_OUT_OF_RANGE and aiokafka applies
    auto.offset.reset; in memory the in-process log answers the same. Either way the consumer logs
    one warning with both offsets and nothing is skipped."""
    out = tmp_path / "out.txt"
    if topics_on == "kafka":
        kafka: Broker = request.getfixturevalue("kafka")
        engine = Engine(
            {
                "bootstrap.servers": kafka.bootstrap,
                "offset.flush.interval.ms": "100",
                "config.storage.topic": f"configs-{uuid.uuid4().hex[:8]}",
            }
        )
    else:
        engine = Engine({"offset.flush.interval.ms": "100"}, topics=MemoryTopics())
    topic = f"lines-{uuid.uuid4().hex[:8]}"
    writer = f"writer-{topic}"  # a group of its own on the shared broker
    async with engine:
        topics = engine.topics
        await topics.create_topic(topic)
        producer = topics.producer()
        for n in range(5):
            await producer.send(topic, None, f"old-{n}".encode())
        await producer.flush()
        await engine.create_connector(
            writer,
            {
                "connector.class": "FileStreamSink",
                "file": str(out),
                "topics": topic,
                "value.converter": "org.apache.kafka.connect.storage.StringConverter",
            },
        )
        await eventually(lambda: len(lines(out)) == 5, timeout=10, message="the first five delivered")
        # the committed position ends up past the log end (what a broker that lost records leaves;
        # here set through KIP-875 while the sink is stopped)
        await engine.stop_connector(writer)
        await engine.wait_for_state(writer, "STOPPED")
        await engine.alter_connector_offsets(
            writer,
            [{"partition": {"kafka_topic": topic, "kafka_partition": 0}, "offset": {"kafka_offset": 9}}],
        )
        with structlog.testing.capture_logs() as logged:
            await engine.resume_connector(writer)
            await eventually(
                lambda: any(e["event"] == "topics.offset_out_of_range" for e in logged),
                timeout=30,
                message="the out-of-range position reset and logged",
            )
            await eventually(lambda: len(lines(out)) >= 10, timeout=30, message="the old records read again")
            for n in range(3):  # new records land at offsets 5..7, below the position 9
                await producer.send(topic, None, f"new-{n}".encode())
            await producer.flush()
            await eventually(
                lambda: lines(out)[-3:] == ["new-0", "new-1", "new-2"],
                timeout=30,
                message="the records written below the old position delivered",
            )
        warning = next(e for e in logged if e["event"] == "topics.offset_out_of_range")
        assert (
            warning["log_level"],
            warning["group"],
            warning["topic"],
            warning["partition"],
            warning["offset"],
            warning["auto_offset_reset"],
            warning["reset_to"],
        ) == ("warning", f"connect-{writer}", topic, 0, 9, "earliest", 0)
        assert lines(out)[5:10] == [
            f"old-{n}" for n in range(5)
        ]  # auto.offset.reset=earliest: from the start


async def test_consumer_override_auto_offset_reset_latest_moves_to_the_log_end(tmp_path: Path) -> None:
    """In memory too, ``consumer.override.auto.offset.reset=latest`` decides: the old records are not
    read again, the ones written after the reset are."""
    out = tmp_path / "out.txt"
    engine = Engine({"offset.flush.interval.ms": "100"}, topics=MemoryTopics())
    topic, writer = "lines", "writer"
    async with engine:
        await engine.topics.create_topic(topic)
        producer = engine.topics.producer()
        for n in range(5):
            await producer.send(topic, None, f"old-{n}".encode())
        await producer.flush()
        config = {
            "connector.class": "FileStreamSink",
            "file": str(out),
            "topics": topic,
            "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        }
        await engine.create_connector(writer, config)
        await eventually(lambda: len(lines(out)) == 5, timeout=10, message="the first five delivered")
        await engine.stop_connector(writer)
        await engine.wait_for_state(writer, "STOPPED")
        await engine.put_connector_config(writer, {**config, "consumer.override.auto.offset.reset": "latest"})
        await engine.wait_for_state(writer, "STOPPED")
        await engine.alter_connector_offsets(
            writer,
            [{"partition": {"kafka_topic": topic, "kafka_partition": 0}, "offset": {"kafka_offset": 9}}],
        )
        with structlog.testing.capture_logs() as logged:
            await engine.resume_connector(writer)
            await eventually(
                lambda: any(e["event"] == "topics.offset_out_of_range" for e in logged),
                timeout=10,
                message="the out-of-range position reset and logged",
            )
            await producer.send(topic, None, b"new-0")
            await producer.flush()
            await eventually(lambda: lines(out)[-1:] == ["new-0"], timeout=10, message="the new record")
        warning = next(e for e in logged if e["event"] == "topics.offset_out_of_range")
        assert (warning["offset"], warning["auto_offset_reset"], warning["reset_to"]) == (9, "latest", 5)
        assert lines(out) == [f"old-{n}" for n in range(5)] + ["new-0"]
