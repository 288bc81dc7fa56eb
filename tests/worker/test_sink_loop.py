"""The sink task loop against the in-process topics: assignment, batches, redelivery, commits, rewinds."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from structlog.testing import capture_logs

from engine import Engine
from engine.api import ConnectException, TopicPartition
from engine.distributed.mode import StandaloneMode
from engine.testing import eventually
from engine.topics.base import TopicPartition as LogPartition
from engine.topics.memory import MemoryTopics
from tests.worker.probes import SINK, SINKS

FAST = {"task.shutdown.graceful.timeout.ms": "1000"}
STRINGS = {
    "value.converter": "org.apache.kafka.connect.storage.StringConverter",
    "key.converter": "org.apache.kafka.connect.storage.StringConverter",
}
GROUP = "connect-snk"


@pytest.fixture(autouse=True)
def _fresh_probes() -> None:
    SINKS.clear()


@pytest.fixture
async def topics() -> MemoryTopics:
    topics = MemoryTopics()
    await topics.open()
    await topics.create_topic("in", 2)
    return topics


@pytest.fixture
async def engine(topics: MemoryTopics) -> AsyncIterator[Engine]:
    async with Engine(FAST, topics=topics) as running:
        yield running


async def produce(topics: MemoryTopics, values: list[str], partition: int = 0) -> None:
    producer = topics.producer()
    for value in values:
        await producer.send("in", None, value.encode(), partition=partition)


def sink(**extra: str) -> dict[str, str]:
    return {"connector.class": SINK, "topics": "in", **STRINGS, **extra}


def received(name: str = "snk") -> list[object]:
    return [r.value for r in SINKS[name].received]


async def test_records_are_put_in_order_with_their_coordinates_and_offsets_committed_on_stop(
    engine: Engine, topics: MemoryTopics
) -> None:
    await produce(topics, ["a", "b"], partition=0)
    await produce(topics, ["c"], partition=1)
    await engine.create_connector("snk", sink())
    await eventually(lambda: len(SINKS["snk"].received) == 3)
    by_partition = {(r.kafka_partition, r.kafka_offset): r.value for r in SINKS["snk"].received}
    assert by_partition == {(0, 0): "a", (0, 1): "b", (1, 0): "c"}
    assert SINKS["snk"].opened == [[TopicPartition("in", 0), TopicPartition("in", 1)]]
    await engine.stop_connector("snk")
    await engine.wait_for_state("snk", "STOPPED")
    assert SINKS["snk"].closed == [[TopicPartition("in", 0), TopicPartition("in", 1)]]
    assert SINKS["snk"].flushed[-1] == {TopicPartition("in", 0): 2, TopicPartition("in", 1): 1}
    assert topics.committed(GROUP, LogPartition("in", 0)) == 2
    assert topics.committed(GROUP, LogPartition("in", 1)) == 1


async def test_a_restarted_sink_resumes_after_the_committed_offsets(
    engine: Engine, topics: MemoryTopics
) -> None:
    await produce(topics, ["a", "b"])
    await engine.create_connector("snk", sink())
    await eventually(lambda: received() == ["a", "b"])
    await engine.stop_connector("snk")
    await engine.wait_for_state("snk", "STOPPED")
    await produce(topics, ["c"])
    SINKS.clear()
    await engine.resume_connector("snk")
    await eventually(lambda: received() == ["c"])


async def test_a_retriable_put_redelivers_the_same_batch_after_the_context_timeout(
    engine: Engine, topics: MemoryTopics
) -> None:
    await produce(topics, ["a", "b"])
    SINKS["snk"].retriable_failures = 2
    await engine.create_connector("snk", sink())
    await eventually(lambda: received() == ["a", "b"])
    assert SINKS["snk"].retriable_failures == 0
    status = await engine.connector_status("snk")
    assert status["tasks"][0]["state"] == "RUNNING"


async def test_any_other_put_error_fails_the_task_with_connects_message(
    engine: Engine, topics: MemoryTopics
) -> None:
    SINKS["snk"].fail_with = ValueError("cannot write")
    await engine.create_connector("snk", sink())
    await engine.wait_for_state("snk", "RUNNING", tasks=1)
    await produce(topics, ["a"])
    await engine.wait_for_state("snk", "RUNNING", tasks=["FAILED"])
    trace = (await engine.connector_status("snk"))["tasks"][0]["trace"]
    assert "Exiting WorkerSinkTask due to unrecoverable exception." in trace
    assert "cannot write" in trace


async def test_pre_commit_returning_nothing_commits_nothing(engine: Engine, topics: MemoryTopics) -> None:
    SINKS["snk"].hold_commits = True
    await produce(topics, ["a"])
    await engine.create_connector("snk", sink())
    await eventually(lambda: received() == ["a"])
    await engine.stop_connector("snk")
    await engine.wait_for_state("snk", "STOPPED")
    assert topics.committed(GROUP, LogPartition("in", 0)) is None


async def test_a_rewind_redelivers_from_the_requested_offset(engine: Engine, topics: MemoryTopics) -> None:
    await produce(topics, ["a", "b", "c"])
    SINKS["snk"].rewind = {TopicPartition("in", 0): 1}
    await engine.create_connector("snk", sink())
    await eventually(lambda: received() == ["a", "b", "c", "b", "c"])


async def test_a_paused_sink_keeps_its_assignment_and_receives_nothing_until_resumed(
    engine: Engine, topics: MemoryTopics
) -> None:
    await engine.create_connector("snk", sink())
    await engine.wait_for_state("snk", "RUNNING", tasks=1)
    await eventually(lambda: SINKS["snk"].opened != [])
    await engine.pause_connector("snk")
    await engine.wait_for_state("snk", "PAUSED", tasks=["PAUSED"])
    await produce(topics, ["while paused"])
    await engine.settled()
    assert received() == []
    assert SINKS["snk"].closed == []  # the assignment is kept
    await engine.resume_connector("snk")
    await eventually(lambda: received() == ["while paused"])


async def test_a_sink_task_that_fails_while_paused_reports_failed(topics: MemoryTopics) -> None:
    # Connect calls put() every iteration, paused or not, so a paused sink task can still fail
    async with Engine({**FAST, "offset.flush.interval.ms": "20"}, topics=topics) as engine:
        await engine.create_connector("snk", sink(**{"tasks.max": "1"}))
        await engine.wait_for_state("snk", "RUNNING", tasks=1)
        await engine.pause_connector("snk")
        await engine.wait_for_state("snk", "PAUSED", tasks=["PAUSED"])
        SINKS["snk"].fail_with = ConnectException("lost the database")
        SINKS["snk"].fail_on_empty = True
        await engine.wait_for_state("snk", "PAUSED", tasks=["FAILED"])


async def test_two_tasks_share_the_partitions_of_the_group(engine: Engine, topics: MemoryTopics) -> None:
    await engine.create_connector("snk", sink(**{"tasks.max": "2"}))
    await engine.wait_for_state("snk", "RUNNING", tasks=2)
    await produce(topics, ["a"], partition=0)
    await produce(topics, ["b"], partition=1)
    await eventually(lambda: sorted(str(value) for value in received()) == ["a", "b"] or None)
    owners = {r.kafka_partition for t in SINKS["snk"].tasks for r in SINKS["snk"].received}
    assert owners == {0, 1}


async def test_tolerated_conversion_errors_go_to_the_dead_letter_queue(
    engine: Engine, topics: MemoryTopics
) -> None:
    config = sink(
        **{
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter.schemas.enable": "false",
            "errors.tolerance": "all",
            "errors.deadletterqueue.topic.name": "dlq",
            "errors.deadletterqueue.context.headers.enable": "true",
        }
    )
    await produce(topics, ['"fine"', "{not json"])
    await engine.create_connector("snk", config)
    await eventually(lambda: received() == ["fine"])
    await eventually(
        lambda: topics.records(LogPartition("dlq", 0)) != [] if "dlq" in topics._topics else False
    )
    dead = topics.records(LogPartition("dlq", 0))[0]
    assert dead.value == b"{not json"
    headers = dict(dead.headers)
    assert headers["__connect.errors.topic"] == b"in"
    assert headers["__connect.errors.stage"] == b"VALUE_CONVERTER"


async def test_untolerated_conversion_errors_fail_the_task(engine: Engine, topics: MemoryTopics) -> None:
    config = sink(**{"value.converter": "org.apache.kafka.connect.json.JsonConverter"})
    await produce(topics, ["{not json"])
    await engine.create_connector("snk", config)
    await engine.wait_for_state("snk", "RUNNING", tasks=["FAILED"])
    trace = (await engine.connector_status("snk"))["tasks"][0]["trace"]
    assert "Tolerance exceeded in error handler" in trace


async def test_the_errant_record_reporter_sends_reported_records_to_the_dlq(
    engine: Engine, topics: MemoryTopics
) -> None:
    SINKS["snk"].report_errant = True
    config = sink(**{"errors.tolerance": "all", "errors.deadletterqueue.topic.name": "dlq"})
    await produce(topics, ["ok", "bad", "also ok"])
    await engine.create_connector("snk", config)
    await eventually(lambda: received() == ["ok", "also ok"])
    await eventually(
        lambda: (
            [r.value for r in topics.records(LogPartition("dlq", 0))] == [b"bad"]
            if "dlq" in topics._topics
            else False
        )
    )


async def test_topics_regex_subscribes_to_the_existing_topics_it_matches(
    engine: Engine, topics: MemoryTopics
) -> None:
    await topics.create_topic("other", 1)
    await produce(topics, ["from in"])
    config = {k: v for k, v in sink().items() if k != "topics"}
    await engine.create_connector("snk", {**config, "topics.regex": "i."})
    await eventually(lambda: received() == ["from in"])


async def test_topics_regex_matching_nothing_fails_the_task_with_a_clear_message(engine: Engine) -> None:
    config = {k: v for k, v in sink().items() if k != "topics"}
    await engine.create_connector("snk", {**config, "topics.regex": "nothing-.*"})
    await engine.wait_for_state("snk", "RUNNING", tasks=["FAILED"])
    trace = (await engine.connector_status("snk"))["tasks"][0]["trace"]
    assert "No existing topic matches topics.regex 'nothing-.*'" in trace


async def test_request_commit_commits_at_the_next_iteration_without_waiting_for_the_interval(
    engine: Engine, topics: MemoryTopics
) -> None:
    SINKS["snk"].request_commit = True
    await produce(topics, ["a"])
    await engine.create_connector("snk", sink())
    await eventually(lambda: received() == ["a"])
    # the next iteration, right after put(), starts with the requested commit (the interval is 60 s)
    await eventually(lambda: topics.committed(GROUP, LogPartition("in", 0)) == 1)


async def test_a_rebalance_commits_and_closes_the_revoked_partitions_first(
    engine: Engine, topics: MemoryTopics
) -> None:
    await produce(topics, ["a"], partition=0)
    await produce(topics, ["b"], partition=1)
    await engine.create_connector("snk", sink())
    await eventually(lambda: sorted(str(value) for value in received()) == ["a", "b"] or None)
    newcomer = await topics.consumer(GROUP, ["in"])  # another member of the connector's group
    try:

        async def newcomer_has_partitions() -> bool:
            await newcomer.getmany(timeout_ms=10)
            return bool(newcomer.assignment())

        for _ in range(500):
            if await newcomer_has_partitions():
                break
        assert newcomer.assignment()
        # the eager protocol revokes everything, then reassigns: the sink closed both, then reopened its share
        assert SINKS["snk"].closed[0] == [TopicPartition("in", 0), TopicPartition("in", 1)]
        for tp in newcomer.assignment():
            assert topics.committed(GROUP, tp) == 1  # committed by the sink before it let go
    finally:
        await newcomer.close()


async def test_a_worker_cut_off_from_its_group_hands_its_sink_nothing_until_it_is_back(
    topics: MemoryTopics, monkeypatch: pytest.MonkeyPatch
) -> None:
    """KAFKA-9184: records read while the worker is out of its group are not ``put``; if the group
    answers again before the herder stopped the task, they are."""
    in_group = [True]
    monkeypatch.setattr(StandaloneMode, "runs_task", lambda self, connector, task: in_group[0])
    async with Engine(FAST, topics=topics) as engine:
        await engine.create_connector("snk", sink())
        await produce(topics, ["a"])
        await eventually(lambda: received() == ["a"])
        with capture_logs() as logs:
            in_group[0] = False
            await produce(topics, ["b", "c"])
            await eventually(lambda: any(e["event"] == "task.writes_withheld" for e in logs))
            assert received() == ["a"]
        in_group[0] = True
        await eventually(lambda: received() == ["a", "b", "c"])
