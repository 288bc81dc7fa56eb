"""The data-plane bench's connectors move what they claim: a source building its records in ``poll()``
delivers exactly the run's records to the counting sink (bench/data_plane.py's ``bytes-poll`` shape)."""

from __future__ import annotations

import asyncio

from bench.data_connectors import BUILDING_SOURCE, RUNS, SINK, Run
from engine import Engine
from engine.topics.memory import MemoryTopics

BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"


async def test_a_source_building_its_records_in_poll_delivers_every_record_once() -> None:
    expected = 2_500  # two full batches and a partial one
    async with Engine({}, topics=MemoryTopics()) as engine:
        await engine.topics.create_topic("built", 1)
        run = RUNS["built"] = Run([], expected, build_topic="built")
        config = {"bench.run": "built", "tasks.max": "1", "key.converter": BYTES, "value.converter": BYTES}
        try:
            await engine.create_connector("sink", {"connector.class": SINK, "topics": "built", **config})
            async with asyncio.timeout(30):
                await run.assigned.wait()
            await engine.create_connector("source", {"connector.class": BUILDING_SOURCE, **config})
            async with asyncio.timeout(30):
                await run.done.wait()
            await asyncio.sleep(0.2)  # nothing beyond the run arrives later
            assert run.received == expected
            assert run.finished >= run.started > 0
            consumer = await engine.topics.consumer("check", ["built"])
            values: list[bytes] = []
            async with asyncio.timeout(30):
                while len(values) < expected:
                    values += [r.value for r in await consumer.getmany(100, 5000)]  # type: ignore[misc]
            await consumer.close()
            assert values[0] == b"0000000000" * 10
            assert values[-1] == b"%010d" % (expected - 1) * 10
            assert len(set(values)) == expected
        finally:
            del RUNS["built"]
