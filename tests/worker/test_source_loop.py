"""The source task loop against the in-process topics: send, acknowledge, commit, resume."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from engine import Engine
from engine.api import RetriableException, SourceRecord
from engine.distributed.mode import StandaloneMode
from engine.storage.offsets import MemoryOffsetStore
from engine.testing import eventually
from engine.topics.base import TopicPartition
from engine.topics.memory import MemoryTopics
from tests.worker.probes import SOURCE, SOURCES, records

FAST = {"task.shutdown.graceful.timeout.ms": "1000", "offset.flush.interval.ms": "60000"}
SCHEMALESS = {
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter.schemas.enable": "false",
    "key.converter": "org.apache.kafka.connect.storage.StringConverter",
}


@pytest.fixture(autouse=True)
def _fresh_probes() -> None:
    SOURCES.clear()


@pytest.fixture
def topics() -> MemoryTopics:
    return MemoryTopics()


@pytest.fixture
async def engine(topics: MemoryTopics) -> AsyncIterator[Engine]:
    async with Engine(FAST, topics=topics) as running:
        yield running


def raw(topics: MemoryTopics, topic: str) -> list[bytes | None]:
    """What partition 0 of ``topic`` holds; nothing when the topic does not exist yet."""
    try:
        return [r.value for r in topics.records(TopicPartition(topic, 0))]
    except KeyError:
        return []


def values(topics: MemoryTopics, topic: str) -> list[object]:
    return [json.loads(v) for v in raw(topics, topic) if v is not None]


async def test_polled_records_reach_the_topic_and_commit_record_gets_their_metadata(
    engine: Engine, topics: MemoryTopics
) -> None:
    await engine.create_connector("src", {"connector.class": SOURCE, **SCHEMALESS})
    await engine.wait_for_state("src", "RUNNING", tasks=1)
    SOURCES["src"].feed.put_nowait(records("orders", [{"id": 1}, {"id": 2}]))
    await eventually(lambda: len(SOURCES["src"].committed_records) == 2)
    assert values(topics, "orders") == [{"id": 1}, {"id": 2}]
    metas = [m for _, m in SOURCES["src"].committed_records]
    assert [(m.topic, m.partition, m.offset) for m in metas if m is not None] == [
        ("orders", 0, 0),
        ("orders", 0, 1),
    ]


async def test_offsets_are_written_on_stop_then_commit_is_called_and_a_restart_resumes(
    topics: MemoryTopics,
) -> None:
    offsets = MemoryOffsetStore()
    async with Engine(FAST, topics=topics, offset_store=offsets) as engine:
        await engine.create_connector("src", {"connector.class": SOURCE, **SCHEMALESS})
        await engine.wait_for_state("src", "RUNNING", tasks=1)
        SOURCES["src"].feed.put_nowait(records("orders", ["a", "b", "c"]))
        await eventually(lambda: len(SOURCES["src"].committed_records) == 3)
        assert offsets.get("src", {"part": "p0"}) is None  # the flush interval has not come yet
        await engine.stop_connector("src")
        await engine.wait_for_state("src", "STOPPED")
        assert offsets.get("src", {"part": "p0"}) == {"n": 3}
        assert SOURCES["src"].commits >= 1
        await engine.resume_connector("src")
        await engine.wait_for_state("src", "RUNNING", tasks=1)
        await eventually(lambda: len(SOURCES["src"].starts) == 2)
        assert SOURCES["src"].starts == [None, {"n": 3}]


async def test_offsets_are_flushed_every_interval_while_the_task_waits_in_poll(topics: MemoryTopics) -> None:
    offsets = MemoryOffsetStore()
    async with Engine(
        {**FAST, "offset.flush.interval.ms": "50"}, topics=topics, offset_store=offsets
    ) as engine:
        await engine.create_connector("src", {"connector.class": SOURCE, **SCHEMALESS})
        await engine.wait_for_state("src", "RUNNING", tasks=1)
        SOURCES["src"].feed.put_nowait(records("orders", ["a", "b"]))
        await eventually(lambda: offsets.get("src", {"part": "p0"}) == {"n": 2})
        commits = SOURCES["src"].commits
        await eventually(lambda: SOURCES["src"].commits > commits + 1)  # commit() even with nothing new


async def test_a_pause_stops_polling_and_a_resume_starts_again(engine: Engine, topics: MemoryTopics) -> None:
    await engine.create_connector("src", {"connector.class": SOURCE, **SCHEMALESS})
    await engine.wait_for_state("src", "RUNNING", tasks=1)
    await engine.pause_connector("src")
    await engine.wait_for_state("src", "PAUSED", tasks=["PAUSED"])
    await engine.settled()
    SOURCES["src"].feed.put_nowait(records("orders", ["while paused"]))
    await engine.settled()
    assert values(topics, "orders") == []
    assert SOURCES["src"].starts == [None]  # paused, not restarted: resources kept
    await engine.resume_connector("src")
    await eventually(lambda: values(topics, "orders") == ["while paused"])


async def test_a_retriable_poll_error_is_retried_and_other_errors_fail_the_task(
    engine: Engine, topics: MemoryTopics
) -> None:
    await engine.create_connector("src", {"connector.class": SOURCE, **SCHEMALESS})
    await engine.wait_for_state("src", "RUNNING", tasks=1)
    feed = SOURCES["src"].feed
    feed.put_nowait(RetriableException("try again"))
    feed.put_nowait(records("orders", ["after retry"]))
    await eventually(lambda: values(topics, "orders") == ["after retry"])
    feed.put_nowait(ValueError("broken source"))
    await engine.wait_for_state("src", "RUNNING", tasks=["FAILED"])
    status = await engine.connector_status("src")
    assert "broken source" in status["tasks"][0]["trace"]


async def test_a_record_that_is_not_a_source_record_fails_the_task(engine: Engine) -> None:
    await engine.create_connector("src", {"connector.class": SOURCE, **SCHEMALESS})
    await engine.wait_for_state("src", "RUNNING", tasks=1)
    SOURCES["src"].feed.put_nowait(["not a record"])  # type: ignore[list-item]
    await engine.wait_for_state("src", "RUNNING", tasks=["FAILED"])
    status = await engine.connector_status("src")
    assert "not a SourceRecord" in status["tasks"][0]["trace"]


async def test_converter_overrides_apply_per_connector(engine: Engine, topics: MemoryTopics) -> None:
    config = {
        "connector.class": SOURCE,
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
    }
    await engine.create_connector("src", config)
    await engine.wait_for_state("src", "RUNNING", tasks=1)
    SOURCES["src"].feed.put_nowait(
        [SourceRecord(topic="plain", value="hello", source_partition={"part": "p0"}, source_offset={"n": 1})]
    )
    await eventually(lambda: raw(topics, "plain") == [b"hello"])


async def test_the_worker_default_converter_is_json_with_schemas(
    engine: Engine, topics: MemoryTopics
) -> None:
    await engine.create_connector("src", {"connector.class": SOURCE})
    await engine.wait_for_state("src", "RUNNING", tasks=1)
    SOURCES["src"].feed.put_nowait(records("enveloped", ["x"]))
    await eventually(lambda: len(SOURCES["src"].committed_records) == 1)
    assert values(topics, "enveloped") == [{"schema": None, "payload": "x"}]  # a record without a schema


async def test_active_topics_are_tracked_and_reset(engine: Engine) -> None:
    await engine.create_connector("src", {"connector.class": SOURCE, **SCHEMALESS})
    await engine.wait_for_state("src", "RUNNING", tasks=1)
    SOURCES["src"].feed.put_nowait(records("t1", ["a"]) + records("t2", ["b"], start=1))
    await eventually(lambda: len(SOURCES["src"].committed_records) == 2)
    assert await engine.connector_active_topics("src") == ["t1", "t2"]
    await engine.reset_connector_active_topics("src")
    assert await engine.connector_active_topics("src") == []
    assert await engine.connector_active_topics("unknown") == []


async def test_topics_survive_a_restart_in_a_file(tmp_path: Path) -> None:
    worker = {
        **FAST,
        "topics.storage.file.filename": str(tmp_path / "topics.jsonl"),
        "offset.storage.file.filename": str(tmp_path / "offsets"),
        "config.storage.file.filename": str(tmp_path / "configs"),
    }
    async with Engine(worker) as engine:
        await engine.create_connector("src", {"connector.class": SOURCE, **SCHEMALESS})
        await engine.wait_for_state("src", "RUNNING", tasks=1)
        SOURCES["src"].feed.put_nowait(records("kept", ["one", "two"]))
        await eventually(lambda: len(SOURCES["src"].committed_records) == 2)
    SOURCES.clear()
    async with Engine(worker) as engine:
        await engine.wait_for_state("src", "RUNNING", tasks=1)
        await eventually(lambda: len(SOURCES["src"].starts) == 1)
        assert SOURCES["src"].starts == [{"n": 2}]
        topics = engine.topics
        assert isinstance(topics, MemoryTopics)
        assert raw(topics, "kept") == [b'"one"', b'"two"']


async def test_records_an_smt_drops_get_commit_record_with_none(engine: Engine, topics: MemoryTopics) -> None:
    config = {
        "connector.class": SOURCE,
        **SCHEMALESS,
        "transforms": "drop",
        "transforms.drop.type": "Filter",
        "transforms.drop.predicate": "isSecret",
        "predicates": "isSecret",
        "predicates.isSecret.type": "TopicNameMatches",
        "predicates.isSecret.pattern": "secret-.*",
    }
    await engine.create_connector("src", config)
    await engine.wait_for_state("src", "RUNNING", tasks=1)
    SOURCES["src"].feed.put_nowait(records("secret-a", ["hidden"]) + records("public", ["shown"], start=1))
    await eventually(lambda: len(SOURCES["src"].committed_records) == 2)
    committed = dict(SOURCES["src"].committed_records)
    assert committed["hidden"] is None
    assert committed["shown"] is not None
    assert values(topics, "public") == ["shown"]
    assert raw(topics, "secret-a") == []


async def test_an_smt_may_route_records_to_another_topic(engine: Engine, topics: MemoryTopics) -> None:
    config = {
        "connector.class": SOURCE,
        **SCHEMALESS,
        "transforms": "route",
        "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
        "transforms.route.regex": "(.*)",
        "transforms.route.replacement": "$1-routed",
    }
    await engine.create_connector("src", config)
    await engine.wait_for_state("src", "RUNNING", tasks=1)
    SOURCES["src"].feed.put_nowait(records("orders", ["x"]))
    await eventually(lambda: values(topics, "orders-routed") == ["x"])
    assert await engine.connector_active_topics("src") == ["orders-routed"]


async def test_a_failed_send_fails_the_task_unless_errors_are_tolerated() -> None:
    topics = MemoryTopics(auto_create=False)  # sending to a missing topic fails
    async with Engine(FAST, topics=topics) as engine:
        await engine.create_connector("strict", {"connector.class": SOURCE, **SCHEMALESS})
        await engine.create_connector(
            "lenient", {"connector.class": SOURCE, **SCHEMALESS, "errors.tolerance": "all"}
        )
        await engine.wait_for_state("strict", "RUNNING", tasks=1)
        await engine.wait_for_state("lenient", "RUNNING", tasks=1)
        SOURCES["lenient"].feed.put_nowait(records("missing", ["dropped"]))
        await eventually(lambda: SOURCES["lenient"].committed_records == [("dropped", None)])
        SOURCES["strict"].feed.put_nowait(records("missing", ["lost?"]))
        SOURCES["strict"].feed.put_nowait(records("missing", ["next poll"]))
        await engine.wait_for_state("strict", "RUNNING", tasks=["FAILED"])
        trace = (await engine.connector_status("strict"))["tasks"][0]["trace"]
        assert "Unrecoverable exception from producer send callback" in trace
        assert (await engine.connector_status("lenient"))["tasks"][0]["state"] == "RUNNING"


async def test_topic_creation_groups_decide_partitions(engine: Engine, topics: MemoryTopics) -> None:
    config = {
        "connector.class": SOURCE,
        **SCHEMALESS,
        "topic.creation.groups": "wide",
        "topic.creation.wide.include": "wide-.*",
        "topic.creation.wide.partitions": "4",
        "topic.creation.default.partitions": "2",
        "topic.creation.default.replication.factor": "1",
    }
    await engine.create_connector("src", config)
    await engine.wait_for_state("src", "RUNNING", tasks=1)
    SOURCES["src"].feed.put_nowait(records("wide-a", ["x"]) + records("narrow", ["y"], start=1))
    await eventually(lambda: len(SOURCES["src"].committed_records) == 2)
    assert await topics.partitions("wide-a") == 4
    assert await topics.partitions("narrow") == 2


async def test_one_poll_batch_over_partitions_gets_per_record_metadata_in_order(topics: MemoryTopics) -> None:
    """The batch goes to the producer whole; commit_record still sees every record, with its own offset."""
    await topics.open()
    await topics.create_topic("spread", 3)
    async with Engine(FAST, topics=topics) as engine:
        await engine.create_connector("src", {"connector.class": SOURCE, **SCHEMALESS})
        await engine.wait_for_state("src", "RUNNING", tasks=1)
        batch = [
            SourceRecord(
                topic="spread",
                kafka_partition=i % 3,
                value=i,
                source_partition={"part": "p0"},
                source_offset={"n": i + 1},
            )
            for i in range(9)
        ]
        SOURCES["src"].feed.put_nowait(batch)
        await eventually(lambda: len(SOURCES["src"].committed_records) == 9)
        metas = dict(SOURCES["src"].committed_records)
        assert {v: (m.topic, m.partition, m.offset) for v, m in metas.items() if m is not None} == {
            i: ("spread", i % 3, i // 3) for i in range(9)
        }
        for partition in range(3):
            assert [
                json.loads(r.value or b"") for r in topics.records(TopicPartition("spread", partition))
            ] == [i for i in range(9) if i % 3 == partition]


async def test_a_batch_with_a_failed_send_commits_only_the_offsets_before_it() -> None:
    """Offsets stay per source partition, in order: a record that failed holds back every later one
    of its partition (the task fails), while other partitions of the same batch commit in full."""
    topics = MemoryTopics(auto_create=False)  # sending to a missing topic fails
    await topics.open()
    await topics.create_topic("exists", 1)
    offsets = MemoryOffsetStore()
    async with Engine(FAST, topics=topics, offset_store=offsets) as engine:
        await engine.create_connector("src", {"connector.class": SOURCE, **SCHEMALESS})
        await engine.wait_for_state("src", "RUNNING", tasks=1)
        batch = (
            records("exists", ["a1", "a2"])
            + records("missing", ["a3"], start=2)
            + records("exists", ["a4"], start=3)
            + records("exists", ["b1", "b2"], partition="p1")
        )
        SOURCES["src"].feed.put_nowait(batch)
        await engine.wait_for_state("src", "RUNNING", tasks=["FAILED"])
        assert offsets.get("src", {"part": "p0"}) == {"n": 2}  # a1, a2 written; a3 failed; a4 held back
        assert offsets.get("src", {"part": "p1"}) == {"n": 2}
        assert [json.loads(v or b"") for v in raw(topics, "exists")] == ["a1", "a2", "a4", "b1", "b2"]


async def test_tolerated_send_failures_in_a_batch_commit_past_them() -> None:
    topics = MemoryTopics(auto_create=False)
    await topics.open()
    await topics.create_topic("exists", 1)
    offsets = MemoryOffsetStore()
    async with Engine(FAST, topics=topics, offset_store=offsets) as engine:
        await engine.create_connector(
            "src", {"connector.class": SOURCE, **SCHEMALESS, "errors.tolerance": "all"}
        )
        await engine.wait_for_state("src", "RUNNING", tasks=1)
        SOURCES["src"].feed.put_nowait(
            records("exists", ["a1"])
            + records("missing", ["a2"], start=1)
            + records("exists", ["a3"], start=2)
        )
        await eventually(lambda: len(SOURCES["src"].committed_records) == 3)
        committed = dict(SOURCES["src"].committed_records)
        assert committed["a2"] is None
        assert committed["a1"] is not None
        assert committed["a3"] is not None
        await engine.stop_connector("src")
        await engine.wait_for_state("src", "STOPPED")
        assert offsets.get("src", {"part": "p0"}) == {"n": 3}


async def test_a_worker_cut_off_from_its_group_sends_nothing_its_task_polled(
    topics: MemoryTopics, monkeypatch: pytest.MonkeyPatch
) -> None:
    """KAFKA-9184: a batch polled once the worker no longer runs the task is not sent; the task's
    stop follows (here the group answers again first, and the batch goes out)."""
    runs = [True]
    monkeypatch.setattr(StandaloneMode, "runs_task", lambda self, connector, task: runs[0])
    async with Engine(FAST, topics=topics) as engine:
        await engine.create_connector("src", {"connector.class": SOURCE, **SCHEMALESS})
        await engine.wait_for_state("src", "RUNNING", tasks=1)
        with capture_logs() as logs:
            runs[0] = False
            SOURCES["src"].feed.put_nowait(records("orders", [{"id": 1}]))
            await eventually(lambda: any(e["event"] == "task.writes_withheld" for e in logs))
            assert values(topics, "orders") == []
        runs[0] = True
        await eventually(lambda: values(topics, "orders") == [{"id": 1}])
