"""A sink whose position is beyond its partition's log end (the log lost records it consumed) notices,
applies ``auto.offset.reset`` and says so, instead of skipping the records written below it."""

from __future__ import annotations

import logging
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
    tmp_path: Path, topics_on: str, request: pytest.FixtureRequest, caplog: pytest.LogCaptureFixture
) -> None:
    """In memory the sink sees the position beyond the log end and says so (a warning). On Apache Kafka
    4.1 the broker answers the fetch OFFSET_OUT_OF_RANGE and the consumer applies auto.offset.reset
    itself, logging it at INFO (aiokafka, as Java's consumer does); either way nothing is skipped."""
    caplog.set_level(logging.INFO, logger="aiokafka.consumer.fetcher")
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
            if topics_on == "memory":
                await eventually(
                    lambda: any(e["event"] == "task.offset_beyond_log_end" for e in logged),
                    timeout=10,
                    message="the regression noticed",
                )
            else:  # the consumer's fetch at 9 is answered OFFSET_OUT_OF_RANGE and it resets itself
                await eventually(
                    lambda: any("out of range" in r.getMessage() for r in caplog.records),
                    timeout=30,
                    message="the consumer's reset logged",
                )
                await eventually(
                    lambda: len(lines(out)) >= 10, timeout=30, message="the old records read again"
                )
            for n in range(3):  # new records land at offsets 5..7, below the position 9
                await producer.send(topic, None, f"new-{n}".encode())
            await producer.flush()
            await eventually(
                lambda: lines(out)[-3:] == ["new-0", "new-1", "new-2"],
                timeout=30,
                message="the records written below the old position delivered",
            )
        if topics_on == "memory":
            warning = next(e for e in logged if e["event"] == "task.offset_beyond_log_end")
            assert (warning["log_level"], warning["partition"], warning["position"], warning["log_end"]) == (
                "warning",
                f"{topic}-0",
                9,
                5,
            )
        assert lines(out)[5:10] == [
            f"old-{n}" for n in range(5)
        ]  # auto.offset.reset=earliest: from the start
